"""Micro-Act log analysis: decompose rate by context complexity (Figure 5) and
the summary table (Tables 1, 2, 5 and the cost Tables 3-4).

    python -m conflict_eval.plugins.microact.analysis LOG [LOG ...] [--lm smollm2] [--no-perplexity] [--out FILE.json]

Figure 5 buckets samples by (a) context length in tokens and (c) context
perplexity, and reports the share of samples in each bucket whose trajectory
used DECOMPOSE at least once (forced splits included). Choices, since the
paper does not say:

* the *context* is the evidence shown to the model (``ConflictQA.evidence``);
* length is counted with the tokenizer of the perplexity LM; length buckets
  are the ones the paper's text names, 0-100, 100-200, 200-300, 300-400 and
  400+ tokens (§7.5 RQ2 quotes "0-100 tokens" and "400+ tokens");
* perplexity (Appendix C) is exp of the mean negative log-likelihood of tokens
  2..N given their prefix (the first token has no prefix to predict it
  from). The paper used GPT-2, which is not available offline; the default LM
  is the offline SmolLM2-135M GGUF on llama.cpp (``--lm smollm2``, through
  ``xllamacpp``; log-probabilities as the engine reports them, see ``LocalLM``); any
  local GGUF file can be given instead. Perplexity buckets are quartiles of the
  observed values (Figure 5(c)'s bin edges are not given in the text).

Question domain (Figure 5(b)) is not computed: none of our datasets carries a
domain label.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

LENGTH_EDGES = (100, 200, 300, 400)


# --------------------------------------------------------------------------
# perplexity


def perplexity_from_logprobs(logprobs: Sequence[float]) -> float:
    """exp(-mean(log p)) (Appendix C, Eq. for PPL). Empty input is an error.

    >>> round(perplexity_from_logprobs([math.log(0.5), math.log(0.25)]), 6)  # sqrt(8)
    2.828427
    """
    if not logprobs:
        raise ValueError("perplexity needs at least one predicted token")
    return math.exp(-sum(logprobs) / len(logprobs))


class LocalLM:
    """A local GGUF model on llama.cpp for token counts and perplexity.

    ``name`` is ``smollm2`` (the offline model's GGUF, found or fetched as
    :mod:`conflict_eval.local_model` does) or a path to any GGUF file. It runs on one
    in-process llama.cpp server (``xllamacpp``). Tokens come from llama.cpp's tokenizer
    (no special tokens added). log p(w_i | w_<i) is the log-probability llama.cpp reports
    for a generated token (``n_probs``, OpenAI-style ``logprobs``, computed from the raw
    logits): each token of the text is made the next one with a logit bias, after its
    prefix, which the server's prompt cache holds, so each position costs one token's
    evaluation. The bias does not enter the reported log-probability.
    """

    def __init__(self, name: str = "smollm2"):
        from conflict_eval.local_model import resolve_gguf, start_server

        self.path = resolve_gguf(name)
        # one thread count for prompt and decode (llama.cpp's default decode threads, half the
        # cores): its threads spin at barriers, which on a busy machine costs many times over
        threads = max(1, (os.cpu_count() or 2) // 2)
        self.server = start_server(self.path, threads)
        import httpx

        self._http = httpx.Client(base_url=self.server.listening_address, timeout=120)
        self.context_window = self._http.get("/props").json()["default_generation_settings"]["n_ctx"]
        self.name = name

    def tokens(self, text: str) -> list[int]:
        reply = self._http.post("/tokenize", json={"content": text, "add_special": False, "parse_special": False})
        return reply.json()["tokens"]

    def count_tokens(self, text: str) -> int:
        return len(self.tokens(text))

    def token_logprobs(self, text: str) -> list[float]:
        """log p(w_i | w_<i) for tokens 2..N of ``text``, truncated to the context window."""
        ids = self.tokens(text)[: self.context_window]
        out = []
        for i in range(1, len(ids)):
            reply = self.server.handle_completions({
                "prompt": ids[:i], "max_tokens": 1, "temperature": 0.0, "n_probs": 1, "cache_prompt": True,
                "logit_bias": [[ids[i], 1000.0]]})
            if "error" in reply:
                raise RuntimeError(f"llama.cpp refused a perplexity request: {reply['error'].get('message')}")
            [step] = reply["choices"][0]["logprobs"]["content"]
            if step["id"] != ids[i]:
                raise RuntimeError(f"llama.cpp generated token {step['id']}, not the forced {ids[i]}")
            out.append(float(step["logprob"]))
        return out

    def perplexity(self, text: str) -> float | None:
        lp = self.token_logprobs(text)
        return perplexity_from_logprobs(lp) if lp else None


# --------------------------------------------------------------------------
# reading logs


def _store(sample, key: str, default: Any = None) -> Any:
    return (sample.store or {}).get(f"MicroActStore:{key}", default)


def decompose_rows(log, lm: LocalLM | None = None,
                   count_tokens: Callable[[str], int] | None = None) -> list[dict[str, Any]]:
    """One row per Micro-Act sample: id, conflict type, context tokens,
    perplexity (if ``lm``), decompose count. ``count_tokens`` defaults to the
    LM's tokenizer, else whitespace words."""
    count = count_tokens or (lm.count_tokens if lm else (lambda t: len(t.split())))
    rows = []
    for sample in log.samples or []:
        if _store(sample, "max_turns", 0) == 0:
            raise ValueError(f"{log.location}: sample {sample.id!r} has no Micro-Act state")
        meta = sample.metadata or {}
        context = "\n".join(p["text"] for p in meta.get("evidence", []))
        rows.append({
            "id": str(sample.id),
            "conflict_type": meta.get("conflict_type", "none"),
            "context_tokens": count(context),
            "perplexity": lm.perplexity(context) if (lm and context) else None,
            "decompose": int(_store(sample, "decompose_count", 0)),
        })
    return rows


def _rate(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    used = sum(1 for r in rows if r["decompose"] > 0)
    return {"n": n, "decomposed": used, "decompose_rate": used / n if n else None}


def bucket_by_length(rows: Iterable[dict[str, Any]], edges: Sequence[int] = LENGTH_EDGES) -> list[dict[str, Any]]:
    """Figure 5(a): decompose rate per context-length bucket ([lo, hi) tokens).
    Empty buckets are listed with n=0 and rate None."""
    labels = [f"{lo}-{hi}" for lo, hi in zip((0, *edges[:-1]), edges)] + [f"{edges[-1]}+"]
    groups: dict[str, list] = {label: [] for label in labels}
    for r in rows:
        i = sum(1 for e in edges if r["context_tokens"] >= e)
        groups[labels[i]].append(r)
    return [{"bucket": label, **_rate(g)} for label, g in groups.items()]


def bucket_by_perplexity(rows: Iterable[dict[str, Any]], n_bins: int = 4) -> list[dict[str, Any]]:
    """Figure 5(c): decompose rate per perplexity quantile bin (equal counts;
    ties kept together by sorting). Rows without perplexity are left out."""
    scored = sorted((r for r in rows if r["perplexity"] is not None), key=lambda r: r["perplexity"])
    if not scored:
        return []
    n_bins = min(n_bins, len(scored))
    out = []
    for b in range(n_bins):
        part = scored[b * len(scored) // n_bins:(b + 1) * len(scored) // n_bins]
        out.append({"bucket": f"{part[0]['perplexity']:.1f}-{part[-1]['perplexity']:.1f}", **_rate(part)})
    return out


# --------------------------------------------------------------------------
# summary table (Tables 1, 2, 5, 3-4)

SUMMARY_COLUMNS = ("task", "ablation", "conflict_type", "n", "accuracy", "misled", "parse_failure",
                   "turns", "worked_turns", "decompose", "calls", "input_tokens", "output_tokens", "cost", "latency")


def summary_rows(logs: Iterable[Any]) -> list[dict[str, Any]]:
    """Per log and conflict type (plus ``all``): accuracy, conflict-option rate
    and parse failures (``choice_accuracy``) beside turns, decompose count,
    calls, tokens, cost and latency (``microact_trajectory``)."""
    out = []
    for log in logs:
        groups: dict[str, list] = defaultdict(list)
        for s in log.samples or []:
            ctype = (s.metadata or {}).get("conflict_type", "none")
            groups[ctype].append(s)
            groups["all"].append(s)
        for ctype in sorted(groups, key=lambda c: (c == "all", c)):
            samples = groups[ctype]
            row: dict[str, Any] = {"task": log.eval.task, "ablation": _store(samples[0], "ablation"),
                                   "conflict_type": ctype, "n": len(samples)}
            choice = [s.scores["choice_accuracy"].value for s in samples if "choice_accuracy" in (s.scores or {})]
            for key in ("accuracy", "misled", "parse_failure"):
                row[key] = sum(v[key] for v in choice) / len(choice) if choice else None
            traj = [s.scores["microact_trajectory"].value for s in samples
                    if "microact_trajectory" in (s.scores or {})]
            for key in ("decompose", "calls", "input_tokens", "output_tokens", "cost", "latency"):
                row[key] = sum(v[key] for v in traj) / len(traj) if traj else None
            # turns from the stored trajectory, so that logs written before the
            # model-chosen / worked split are counted the same way
            counts = [_turn_split(s) for s in samples if _store(s, "max_turns", 0)]
            for i, key in enumerate(("turns", "worked_turns")):
                row[key] = sum(c[i] for c in counts) / len(counts) if counts else None
            out.append(row)
    return out


def _turn_split(sample) -> tuple[int, int]:
    """(model-chosen turns, worked turns) of a sample from its stored turns."""
    turns = _store(sample, "turns", []) or []
    worked = sum(1 for t in turns if t.get("warm_start"))
    return len(turns) - worked, worked


# --------------------------------------------------------------------------
# over-rationalization ratio (Appendix B, Figure 8)

OVERRAT_COLUMNS = ("method", "conflict_type", "n", "judged", "parse_failure", "no_trace", "ratio")


def overrationalization_rows(logs: Iterable[Any]) -> list[dict[str, Any]]:
    """Figure 8's table from the ``overrationalization`` scores of any logs
    (GKP, Micro-Act, ...): per method and conflict type (plus ``all``), the
    samples, judged samples, grader parse failures, samples without reasoning,
    and the ratio rationalizing / judged (NaN when nothing was judged)."""
    groups: dict[tuple[str, str], list] = defaultdict(list)
    for log in logs:
        for s in log.samples or []:
            score = (s.scores or {}).get("overrationalization")
            if score is None:
                continue
            method = (score.metadata or {}).get("trace_source") or log.eval.task
            ctype = (s.metadata or {}).get("conflict_type", "none")
            groups[(method, ctype)].append(score.value)
            groups[(method, "all")].append(score.value)
    out = []
    for (method, ctype), values in sorted(groups.items(), key=lambda kv: (kv[0][0], kv[0][1] == "all", kv[0][1])):
        judged = [v["over_rationalization"] for v in values if v["judged"]]
        out.append({"method": method, "conflict_type": ctype, "n": len(values), "judged": len(judged),
                    "parse_failure": sum(v["parse_failure"] for v in values),
                    "no_trace": sum(v["no_trace"] for v in values),
                    "ratio": sum(judged) / len(judged) if judged else float("nan")})
    return out


def markdown(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    def fmt(v):
        if v is None:
            return "–"
        if isinstance(v, float):
            return f"{v:.4g}"
        return str(v)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c)) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    from inspect_ai.log import read_eval_log

    ap = argparse.ArgumentParser(prog="python -m conflict_eval.plugins.microact.analysis",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("logs", nargs="+", help="Inspect .eval logs of conflict_eval/microact runs (and, for the "
                                            "over-rationalization table, any run scored with overrationalization)")
    ap.add_argument("--lm", default="smollm2", help="local GGUF model for tokens and perplexity (smollm2 or a .gguf file)")
    ap.add_argument("--no-perplexity", action="store_true", help="skip perplexity; count whitespace words")
    ap.add_argument("--out", help="write all tables as JSON here")
    args = ap.parse_args(argv)
    all_logs = [read_eval_log(p) for p in args.logs]
    logs = [log for log in all_logs if all(_store(s, "max_turns", 0) for s in log.samples or [])]
    for log in all_logs:
        if not any(log is kept for kept in logs):
            print(f"note: {log.location} has samples without Micro-Act state: over-rationalization table only",
                  file=sys.stderr)
    lm = None if args.no_perplexity else LocalLM(args.lm)
    rows = [r for log in logs for r in decompose_rows(log, lm)]
    result = {
        "lm": None if lm is None else args.lm,
        "summary": summary_rows(logs),
        "by_length": bucket_by_length(rows),
        "by_perplexity": bucket_by_perplexity(rows),
        "samples": rows,
        "overrationalization": overrationalization_rows(all_logs),
    }
    print("## Summary (Tables 1, 2, 5, 3-4)\n\n" + markdown(result["summary"], SUMMARY_COLUMNS))
    unit = "tokens" if lm else "words"
    print(f"\n## Decompose rate by context length ({unit}; Figure 5a)\n\n"
          + markdown(result["by_length"], ("bucket", "n", "decomposed", "decompose_rate")))
    if lm:
        print(f"\n## Decompose rate by context perplexity ({args.lm}; Figure 5c)\n\n"
              + markdown(result["by_perplexity"], ("bucket", "n", "decomposed", "decompose_rate")))
    if result["overrationalization"]:
        print("\n## Over-rationalization ratio (Appendix B, Figure 8; judge prompt ours)\n\n"
              + markdown(result["overrationalization"], OVERRAT_COLUMNS))
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
