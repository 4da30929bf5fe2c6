"""``conflict_eval/microact``: Micro-Act on a conflict QA dataset, with trajectory and cost.

    inspect eval conflict_eval/microact --model conflict_eval/smollm2 --limit 1 \\
        -T dataset=kre_ecqa -T path=../shared/data/kre_ecqa/sample.jsonl
    inspect eval conflict_eval/microact -T max_turns=4 -T ablation=no_decompose ...

Scored with ``choice_accuracy`` (accuracy, conflict-option rate, parse
failures) and ``microact_trajectory`` (turns, actions, decompose counts,
tokens, cost, latency). Other ``-T`` options go to the dataset or scorers
that accept them by name (e.g. ``conflict_type``, ``limit``, ``input_price``).
"""

from typing import Any

from inspect_ai import Task, task

from conflict_eval.components.compose import compose_task

# Inspect registers a scorer when its module is imported: importing it here (Inspect's entry point
# imports every task module) lets `inspect score --scorer conflict_eval/overrationalization` find it
# on existing logs. It imports only Inspect, the core and scorers (the stores it reads are
# scorers/microact/stores.py), so nothing here imports torch.
from conflict_eval.scorers.microact.overrationalization import overrationalization  # noqa: F401


@task
def microact(
    dataset: str = "kre_ecqa",
    path: str | None = None,
    max_turns: int = 8,
    ablation: str = "none",
    warm_start: bool = True,
    forced_split: bool = True,
    complex_words: int = 40,
    **options: Any,
) -> Task:
    """Micro-Act (Huo et al., Algorithm 1, Figure 17).

    Args:
        dataset: a registered multiple-choice dataset (``conflict-eval list``).
        path: read the dataset from this local file (upstream format).
        max_turns: turn budget (paper: 8).
        ablation: ``none``, ``no_navigational``, ``no_functional`` or ``no_decompose`` (Table 2).
        warm_start: run Figure 17's worked turns 1-3 first.
        forced_split: decompose when assert finds a conflict on complex context.
        complex_words: word count above which a statement is complex.
        **options: routed by name to the dataset and scorers.
    """
    return compose_task(
        "microact",
        dataset,
        ["choice_accuracy", "microact_trajectory"],
        path=path,
        name=f"microact_{dataset}" + ("" if ablation == "none" else f"_{ablation}"),
        max_turns=max_turns,
        ablation=ablation,
        warm_start=warm_start,
        forced_split=forced_split,
        complex_words=complex_words,
        **options,
    )
