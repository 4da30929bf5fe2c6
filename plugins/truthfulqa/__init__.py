"""Plugin: the TruthfulQA binary-choice dataset (Jan-2025 CSV rows) with retrieved
documents, as ConflictScore §6 uses it (``conflict_eval/truthfulqa_conflict``;
the method's solvers are in plugins/conflictscore/, its scorer in scorers/conflictscore/)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import truthfulqa_binary

    return {"truthfulqa_binary": truthfulqa_binary}
