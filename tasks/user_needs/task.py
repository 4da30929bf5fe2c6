"""``conflict_eval/user_needs``: the user-need x context-setting x context-count grid.

    inspect eval conflict_eval/user_needs -T dataset=user_needs_kre_ecqa \\
        -T limit=5 -T n_contexts=1,2,4 --model conflict_eval/smollm2

Every question expands to 3 user needs x 3 context settings x the context
counts; ``-T user_need=context_first`` (or ``-T setting=conflict``) keeps a
slice of the grid. ``limit`` counts questions, not samples.
"""

from typing import Any

from inspect_ai import Task, task, task_with

from conflict_eval.components.compose import compose_task


@task
def user_needs(
    dataset: str = "user_needs_hotpotqa",
    path: str | None = None,
    user_need: str | None = None,
    setting: str | None = None,
    n_contexts: str = "1,2,4,8",
    limit: int | None = None,
    seed: int = 0,
    **options: Any,
) -> Task:
    """Run the Appendix C prompt for every grid cell and score against Figure 2.

    Args:
        dataset: a user-need dataset (``user_needs_hotpotqa``, ``user_needs_kre_ecqa``,
            ``user_needs_kre_ecare``, ``user_needs_disentqa``, ``user_needs_uraq``).
        path: local file in the dataset's upstream format.
        user_need: one user need or a comma list; None = all three.
        setting: ``matching``, ``conflict``, ``irrelevant`` or a comma list; None = all.
        n_contexts: numbers of retrieved contexts, e.g. ``"1,2,4,8"``, or a Table 1
            preset (``uraq``, ``disentqa``, ``hotpotqa``).
        limit: number of questions.
        seed: distractor sampling and placement of the relevant context.
        **options: other dataset options (``max_context_tokens``, ``distractors``:
            a JSONL pool of extra distractor passages).
    """
    grid = {"user_need": user_need, "setting": setting, "n_contexts": n_contexts,
            "limit": limit, "seed": seed}
    grid = {k: v for k, v in grid.items() if v is not None}
    task = compose_task("user_need_prompt", dataset, "user_need_accuracy", path=path,
                        name=f"user_needs_{dataset.removeprefix('user_needs_')}", **grid, **options)
    # no retriever: the contexts are the dataset's own passages, distractors drawn (seeded) from its pool
    # the paper's setting-specific accuracy; the grid's cells of one question cluster on its question id
    task = task_with(task, headline_metric="user_need_accuracy.correct")
    task.metadata = {**(task.metadata or {}), "cluster": "extra.question_id", "retrieval": {
        "source_names": [], "sources": {}, "pooled_from_dataset": True,
        "note": "no retrieval: each cell's contexts are the dataset's relevant passage plus distractors "
                "sampled from the same file's passages (the User-needs grid design)"}}
    return task
