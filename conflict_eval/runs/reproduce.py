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


#: Keys of a method's per-step failure counts that count no reply (AtomR: nodes run by fallback).
_NOT_STEPS = frozenset({"degraded_nodes"})


def step_failures(scores: dict) -> int:
    """Unreadable replies a method recorded *per step* in one sample's score
    metadata: ``parse_failures`` as counts by step (AtomR: planning, source
    selection, each operator) or reasons by setting (a non-empty reason
    counts 1), and a baseline's ``parse_error``. A sample whose every step
    failed may still hold an (empty) answer that no answer-level parse
    failure flags."""
    n = 0
    for score in scores.values():
        meta = score.metadata or {}
        steps = meta.get("parse_failures")
        if isinstance(steps, dict):
            for key, v in steps.items():
                if key in _NOT_STEPS or isinstance(v, bool):
                    continue
                if isinstance(v, int | float) and v > 0:
                    n += int(v)
                elif isinstance(v, str) and v:
                    n += 1
        if meta.get("parse_error"):
            n += 1
    return n


def parse_failure_counts(logs) -> tuple[int, int, int]:
    """``(samples with a parse failure of the answer or of a step, samples
    with a step-level parse failure, step-level parse failures)`` over the
    logs' error-free samples."""
    from conflict_eval.report.logs import score_values

    any_failure = step_samples = steps = 0
    for log in logs:
        for s in log.samples or []:
            if s.error is not None or not s.scores:
                continue
            _, parse = score_values(s.scores)
            n = step_failures(s.scores)
            any_failure += int(bool(parse) or n > 0)
            step_samples += int(n > 0)
            steps += n
    return any_failure, step_samples, steps


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
