"""Running a reproduction card (:mod:`conflict_eval.runs.cards`): the card's
tasks with overrides, its cost estimate (:mod:`conflict_eval.runs.estimate`),
the run itself and the per-sample values compared with the paper's.

The ``conflict-eval reproduce list | CARD --model M`` command lives in
:mod:`conflict_eval.cli.reproduce`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conflict_eval.runs.cards import Card


def card_tasks(card: Card, overrides: dict[str, Any] | None = None) -> list[tuple[str, dict]]:
    """The card's ``(task, args)`` with ``overrides`` (``-T``) applied to every task."""
    return [(name, {**args, **(overrides or {})}) for name, args in card.tasks]


def _shown(value: Any) -> str:
    """A file argument as its basename: no local path in the output."""
    text = str(value)
    return Path(text).name if "/" in text or "\\" in text else text


def task_label(name: str, args: dict) -> str:
    shown = ", ".join(f"{k}={_shown(v)}" for k, v in args.items() if k != "path")
    return f"{name.removeprefix('conflict_eval/')}({shown})"


def estimate_card(card: Card, model: str, *, limit: int | None = None, overrides: dict | None = None,
                  model_cost_config: str | None = None) -> str:
    from conflict_eval.runs.estimate import estimate_task, render_estimates

    max_tokens = card.generate.get("max_tokens")
    cells = [(model, task_label(name, args),
              estimate_task(name, args, model, limit=limit, model_cost_config=model_cost_config,
                            max_tokens=max_tokens))
             for name, args in card_tasks(card, overrides)]
    return render_estimates(cells)


def sample_values(logs) -> tuple[list[dict[str, float]], int, int]:
    """Per-sample metric values of the logs' error-free samples
    (report.logs.score_values), the number of parse failures and of errored samples."""
    from conflict_eval.report.logs import score_values

    out, parse_failures, errors = [], 0, 0
    for log in logs:
        for s in log.samples or []:
            if s.error is not None or not s.scores:
                errors += 1
                continue
            values, parse = score_values(s.scores)
            parse_failures += int(bool(parse))
            out.append(values)
    return out, parse_failures, errors


def run_card(card: Card, model, *, limit: int | None = None, overrides: dict | None = None,
             log_dir: str = "logs", display: str = "plain", model_args: dict | None = None):
    """Run the card's tasks on ``model`` (a name or an Inspect ``Model``); returns the logs.
    Raises ``KeyboardInterrupt`` when cancelled (SIGINT or SIGTERM)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.util import registry_create

    tasks = [registry_create("task", name, **args) for name, args in card_tasks(card, overrides)]
    return inspect_eval(tasks, model=model, model_args=model_args or {}, limit=limit, log_dir=log_dir,
                        display=display, **card.generate)


def model_name(model) -> str:
    return model if isinstance(model, str) else str(model)
