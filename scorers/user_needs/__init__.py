"""Plugin: user-need accuracy (cell accuracy, refusals, the §4.3 levels)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import user_need_accuracy

    return {"user_need_accuracy": user_need_accuracy}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
