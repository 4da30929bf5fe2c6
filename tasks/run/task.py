"""``conflict_eval/run``: compose any registered method, dataset and scorer.

    inspect eval conflict_eval/run -T method=end_to_end -T dataset=demo \\
        --model conflict_eval/smollm2 --limit 2

Any other ``-T name=value`` is routed to the part that accepts it
(see :func:`conflict_eval.components.compose.route_options`).
"""

from typing import Any

from inspect_ai import Task, task

from conflict_eval.components.compose import compose_task


@task
def run(
    method: str = "end_to_end",
    dataset: str = "demo",
    scorer: str | list[str] | None = None,
    path: str | None = None,
    **options: Any,
) -> Task:
    """Run ``method`` on ``dataset`` and score with ``scorer``.

    Args:
        method: a registered method (``conflict-eval list``).
        dataset: a registered dataset.
        scorer: registered metric name(s); default: the metric(s) the dataset
            declares (``conflict_eval.components.compose.declares_metric``), else
            ``choice_accuracy`` for multiple choice, ``token_f1`` otherwise.
        path: read the dataset from this local file (upstream format).
        **options: passed to whichever part accepts them by name.
    """
    return compose_task(method, dataset, scorer, path=path, **options)
