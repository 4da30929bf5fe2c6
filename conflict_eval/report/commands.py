"""The command that re-runs a cell: one ``inspect eval`` line per log, and one per cell.

A suite hands Inspect a cut-down sample list (its ``limit:`` and ``--limit``),
so Inspect's log records no limit. The suite records the cut as task metadata
``suite.selection`` (``{"limit"}``; logs of an older conflict-eval also carry
the ``"shard"`` of its removed ``--shard`` flag) and Inspect records
the ids that ran (``eval.dataset.sample_ids``); the command states the same
selection with flags Inspect itself accepts:

* a limit alone -> ``--limit N`` (a suite keeps the first N samples, as Inspect does);
* an old ``--shard`` log (with or without a limit) -> ``--sample-id`` with the ids that ran;
* a plain ``inspect eval`` log -> its own ``--limit``, ``--sample-id`` and
  ``--sample-shuffle``.

A batched cell's command repeats ``--batch`` (its size when one was set), and
a cell run with a cost config (task metadata ``conflict_eval_cost_config``)
repeats ``--model-cost-config``, so a re-run is billed as the original was.

A cell whose logs ran the same task and settings on different samples (the
shards of one run) gets one command over the union of their ids. A cell that
one command cannot reproduce (runs with different settings pooled, sample ids
that ``--sample-id`` cannot express) gets ``command: None`` and ``why``.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any

from conflict_eval.components.endpoint import redact, redact_url

_CONFIG_FLAGS = {"temperature", "top_p", "top_k", "max_tokens", "seed", "frequency_penalty", "presence_penalty",
                 "stop_seqs", "num_choices", "logprobs", "top_logprobs", "reasoning_effort", "reasoning_tokens",
                 "max_retries", "timeout"}


def _strip_hash(v: Any) -> Any:
    if isinstance(v, str):
        return re.sub(r"#[0-9a-f]{8}$", "", v)
    if isinstance(v, dict):
        return {k: _strip_hash(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_strip_hash(x) for x in v]
    return v


def _flag_value(v: Any) -> str:
    if isinstance(v, str):
        return v
    return json.dumps(v) if isinstance(v, dict | list) else str(v).lower() if isinstance(v, bool) else str(v)


def task_and_args(h: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The registered task and its arguments behind one log header."""
    meta = h.get("metadata") or {}
    suite = meta.get("suite") if isinstance(meta.get("suite"), dict) else None
    if suite and suite.get("task"):
        task, args = suite["task"], dict(suite.get("args") or {})
    elif "method" in meta and "dataset" in meta:
        task = "conflict_eval/run"
        args = {"method": meta["method"], "dataset": meta["dataset"],
                **{k: v for k, v in (meta.get("options") or {}).items() if v is not None}}
        if meta.get("path"):
            args["path"] = meta["path"]
        if meta.get("scorers_given") and meta.get("scorers"):
            args["scorer"] = ",".join(meta["scorers"])
    else:
        task, args = h.get("task_registry_name") or h["task"], dict(h.get("task_args") or {})
        if h.get("task_file"):
            task = f"{_strip_hash(h['task_file'])}@{task.split('/')[-1]}"
    return task, args


def _base_command(h: dict[str, Any]) -> list[str]:
    """The command without its sample selection."""
    from .grouping import display_value

    task, args = task_and_args(h)
    args = _strip_hash(display_value(args))
    cmd = ["inspect", "eval", task]
    for k, v in args.items():
        cmd += ["-T", f"{k}={_flag_value(v)}"]
    cmd += ["--model", h["model"]]
    if h.get("base_url"):
        cmd += ["--model-base-url", redact_url(h["base_url"])]
    for k, v in sorted((h.get("model_args") or {}).items()):
        cmd += ["-M", f"{k}={_flag_value(_strip_hash(v))}"]
    for role, model in sorted((h.get("roles") or {}).items()):
        cmd += ["--model-role", f"{role}={','.join(model) if isinstance(model, list) else model}"]  # grader=a,b
    for k, v in sorted((h.get("config") or {}).items()):
        if k in _CONFIG_FLAGS and v is not None:
            cmd += [f"--{k.replace('_', '-')}", _flag_value(",".join(v) if isinstance(v, list) else v)]
    if h.get("epochs", 1) != 1:
        cmd += ["--epochs", str(h["epochs"])]
    cmd += _batch_flags((h.get("config") or {}).get("batch"))
    cost = ((h.get("metadata") or {}).get("conflict_eval_cost_config") or {}).get("file")
    if cost:  # the prices the run was billed and budgeted at (the file as given, shown without a local path)
        cmd += ["--model-cost-config", _strip_hash(display_value(str(cost)))]
    return [redact(x) for x in cmd]


def _batch_flags(batch: Any) -> list[str]:
    """Inspect's ``--batch`` for a recorded ``GenerateConfig.batch``: bare, or the batch size.
    A BatchConfig's other fields (delays, tick) change when answers come, not what they are."""
    if batch is None or batch is False:
        return []
    size = batch.get("size") if isinstance(batch, dict) else batch if isinstance(batch, int) and batch is not True \
        else None
    return ["--batch", str(size)] if size else ["--batch"]


def selection(h: dict[str, Any]) -> dict[str, Any]:
    """The samples one log ran, as ``{"limit": N}``, ``{"ids": [...]}`` or ``{}`` (all),
    plus ``shuffle`` when Inspect shuffled them."""
    meta = h.get("metadata") or {}
    suite = meta.get("suite") if isinstance(meta.get("suite"), dict) else None
    out: dict[str, Any] = {}
    ids = h.get("sample_ids")
    if suite is not None:
        sel = suite.get("selection")
        if isinstance(sel, dict):
            limit, shard = sel.get("limit"), sel.get("shard")
        else:  # a log written before the suite recorded its selection: the --limit flag is unknown
            limit, shard = suite.get("limit"), suite.get("shard")
            if limit is not None:
                shard = shard or "unknown"
        if shard and ids is not None:
            out["ids"] = list(ids)
        elif shard:
            out["unknown"] = "the log records neither the shard's sample ids nor the limit"
        elif limit is not None:
            out["limit"] = limit
    if h.get("limit") is not None:
        out["limit"] = h["limit"]
    if h.get("sample_id") is not None:
        sid = h["sample_id"]
        out["ids"] = [str(x) for x in sid] if isinstance(sid, list) else [str(sid)]
    if h.get("sample_shuffle") is not None:
        out["shuffle"] = h["sample_shuffle"]
    return out


def _ids_flag(ids: list[str]) -> tuple[list[str], str | None]:
    """``--sample-id`` for these ids (fnmatch characters escaped), or why it cannot say them."""
    bad = [i for i in ids if "," in i or i != i.strip() or not i]
    if bad:
        return [], (f"sample id {bad[0]!r} cannot be given to --sample-id (commas, surrounding spaces "
                    "and empty ids cannot be expressed)")
    esc = [re.sub(r"([*?\[])", r"[\1]", i) for i in ids]
    return ["--sample-id", ",".join(esc)], None


def _selection_flags(sel: dict[str, Any]) -> tuple[list[str], str | None]:
    if sel.get("unknown"):
        return [], sel["unknown"]
    flags: list[str] = []
    why = None
    if "ids" in sel:
        flags, why = _ids_flag(sel["ids"])
    elif sel.get("limit") is not None:
        lim = sel["limit"]
        flags = ["--limit", f"{lim[0] + 1}-{lim[1]}" if isinstance(lim, list | tuple) else str(lim)]
    if sel.get("shuffle") is not None:
        flags += ["--sample-shuffle", _flag_value(sel["shuffle"])]
    return flags, why


def reproduce_command(h: dict[str, Any]) -> str:
    """The ``inspect eval`` command that re-runs one log's task, model and samples."""
    flags, _ = _selection_flags(selection(h))
    return shlex.join(_base_command(h) + flags)


def cell_command(headers: list[dict[str, Any]]) -> dict[str, Any]:
    """``{"command": str | None, "why": str | None, "commands": [...]}`` for the logs of one cell."""
    if not headers:
        return {"command": None, "why": "no log", "commands": []}
    bases = {shlex.join(_base_command(h)) for h in headers}
    per_log = sorted({reproduce_command(h) for h in headers})
    if len(bases) > 1:
        return {"command": None, "commands": per_log,
                "why": f"this cell pools {len(bases)} runs with different settings (e.g. generation seeds); "
                       "run each command below into one log directory and build the leaderboard over it"}
    sels = [selection(h) for h in headers]
    distinct = {json.dumps(s, sort_keys=True) for s in sels}
    if len(distinct) == 1:
        flags, why = _selection_flags(sels[0])
    elif all(s.get("ids") is not None or h.get("sample_ids") for s, h in zip(sels, headers)) and \
            len({json.dumps(s.get("shuffle")) for s in sels}) == 1:
        # the shards (or differently cut runs) of one set-up: one command over the ids they ran together
        ids: list[str] = []
        for s, h in zip(sels, headers):
            for i in s.get("ids") or h.get("sample_ids") or []:
                if i not in ids:
                    ids.append(i)
        flags, why = _ids_flag(ids)
    else:
        flags, why = [], "its logs ran different sample selections that one command cannot state"
    if why:
        return {"command": None, "why": why, "commands": per_log}
    return {"command": shlex.join(_base_command(headers[0]) + flags), "why": None, "commands": per_log}
