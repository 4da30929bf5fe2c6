"""Plugin: ConflictScore (CS-C, CS-R), a model-graded conflict metric."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import conflictscore

    return {"conflictscore": conflictscore}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
