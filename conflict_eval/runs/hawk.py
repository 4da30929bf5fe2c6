"""The plan as a Hawk eval set (``hawk.yaml``), for METR's Hawk (``hawk`` 3.7.2 on PyPI).

Hawk runs one Kubernetes Job per eval set through ``inspect_ai.eval_set``; its
eval-set file (``EvalSetConfig``, schema shipped in the wheel as
``hawk/api/EvalSetConfig.schema.json``) takes:

* ``tasks``: packages of registry items; ours is the toolkit's package
  (:data:`PACKAGE`, its ``inspect_ai`` entry point ``conflict_eval``), one item
  per task entry of the suite (``run`` for ``conflict_eval/run``), with its
  args and the explicit ``sample_ids`` the plan's cells run (after the suite's
  and the command's limits);
* ``models``: Inspect's own providers as ``inspect-ai`` built-ins, the
  toolkit's providers (``conflict_eval/...``) from its package; each with its
  ``max_connections`` and ``batch`` as ``config`` (plus the generation config,
  such as ``max_tokens``, when every task entry gives the same one) and its model args (a
  ``base_url`` redacted of secrets, never an ``api_key``: Hawk refuses one);
* ``model_cost_config``: the suite's cost config, read by Inspect's rules;
* ``model_roles``: the judges, one model per role (``grader``, ``grader_2``,
  ...: Hawk's roles hold one model each, and the toolkit's judge panels read
  ``grader_N`` roles as further judges).

Hawk crosses every task with every model, as the suite does. What Hawk's file
cannot say is listed under ``metadata.conflict_eval.not_exported`` rather than
dropped silently: generation configs that differ between task entries, and
seeds (Hawk has no per-task config), per-task epochs, the budget (Hawk has no
spend management).
"""

from __future__ import annotations

import re
from typing import Any

from conflict_eval.runs.spec import Suite

PACKAGE = "conflict-eval"  # the pip specifier Hawk installs; replace with a git URL or wheel for a private build
ENTRY_POINT = "conflict_eval"  # the toolkit's inspect_ai entry point (pyproject.toml)
HAWK_FILE = "hawk.yaml"


def hawk_eval_set_id(eval_set_id: str) -> str:
    """Hawk's form of an id: lowercase letters, digits and inner hyphens, at most 43 characters.

    >>> hawk_eval_set_id("Many_Machines-example-0a1b2c3d4e")
    'many-machines-example-0a1b2c3d4e'
    """
    text = re.sub(r"[^a-z0-9-]+", "-", eval_set_id.lower())
    return re.sub(r"-{2,}", "-", text[-43:]).strip("-") or "eval-set"


def _model_item(model: dict[str, Any], shared: dict[str, Any] | None = None) -> tuple[str | None, dict[str, Any]]:
    """(package name or None for an inspect-ai built-in, ModelConfig) of one plan model; ``shared``: the
    generation config every task entry gives (the model's own settings win)."""
    from conflict_eval.components.endpoint import redact

    own = (("max_connections", model.get("max_connections")), ("batch", model.get("batch")))
    config = {**(shared or {})} | {k: v for k, v in own if v is not None}
    args = {k: redact(v) for k, v in (model.get("args") or {}).items() if k != "api_key"}
    if config:
        args["config"] = config
    provider, _, rest = model["model"].partition("/")
    if provider == ENTRY_POINT:
        return ENTRY_POINT, {"name": rest, **({"args": args} if args else {})}
    return None, {"name": model["model"], **({"args": args} if args else {})}


def _models_block(models: list[dict[str, Any]], shared: dict[str, Any]) -> list[dict[str, Any]]:
    pairs = [_model_item(m, shared) for m in models]
    builtin = [item for pkg, item in pairs if pkg is None]
    ours = [item for pkg, item in pairs if pkg is not None]
    out = []
    if builtin:
        out.append({"package": "inspect-ai", "items": builtin})
    if ours:
        out.append({"package": PACKAGE, "name": ENTRY_POINT, "items": ours})
    return out


def _role(model: str) -> dict[str, Any]:
    pkg, item = _model_item({"model": model})
    return {"package": PACKAGE, "name": ENTRY_POINT, "items": [item]} if pkg else \
        {"package": "inspect-ai", "items": [item]}


def hawk_config(plan: dict[str, Any], suite: Suite, sample_ids: dict[int, list]) -> dict[str, Any]:
    """The Hawk eval set of a plan. ``sample_ids``: per task entry of the suite (its index), the ids
    its cells run."""
    from conflict_eval.pricing import load_model_cost_config

    items, not_exported = [], []
    specs = [spec for k, spec in enumerate(suite.tasks) if k in sample_ids]  # entries with a sample in the plan
    # one generation config shared by every task entry goes on every model (the same effective config);
    # configs that differ between entries cannot be said in Hawk's file
    shared = specs[0].config if specs and all(s.config == specs[0].config for s in specs) else None
    for k, spec in enumerate(suite.tasks):
        if k not in sample_ids:
            continue
        package, _, name = spec.task.partition("/")
        if package != ENTRY_POINT:
            raise ValueError(f"suite {suite.name}: task {spec.task!r} is not one of the toolkit's tasks; "
                             "Hawk's file names tasks by package and registry name")
        item: dict[str, Any] = {"name": name, "sample_ids": sample_ids[k]}
        if spec.args:
            item["args"] = spec.args
        items.append(item)
        seeds = [s for s in spec.seeds if s is not None]
        for what, value in (("config", spec.config if shared is None else None), ("seeds", seeds),
                            ("epochs", spec.epochs)):
            if value:
                not_exported.append({"task": spec.label, what: value})
    options = plan.get("options") or {}
    out: dict[str, Any] = {
        "name": plan["suite_name"], "eval_set_id": hawk_eval_set_id(plan["eval_set_id"]),
        "tasks": [{"package": PACKAGE, "name": ENTRY_POINT, "items": items}],
        "models": _models_block(plan["models"], shared or {}),
    }
    for key in ("message_limit", "token_limit", "time_limit", "working_limit", "cost_limit", "retry_attempts"):
        if options.get(key) is not None:
            out[key] = options[key]
    if options.get("model_cost_config") is not None:
        costs = load_model_cost_config(options["model_cost_config"])
        out["model_cost_config"] = {m: {"input": c.input, "output": c.output, "input_cache_write": c.input_cache_write,
                                        "input_cache_read": c.input_cache_read} for m, c in costs.items()}
    if plan.get("model_roles"):
        out["model_roles"] = {role: _role(model) for role, model in plan["model_roles"].items()}
    if plan.get("budget_usd") is not None:
        not_exported.append({"budget_usd": plan["budget_usd"]})
    out["metadata"] = {"conflict_eval": {"suite": plan["suite"], "plan_eval_set_id": plan["eval_set_id"],
                                         "not_exported": not_exported}}
    return out
