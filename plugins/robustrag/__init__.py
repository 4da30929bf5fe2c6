"""Plugin: RobustRAG (isolate-then-aggregate) baseline of Conflict Exposure Table 1."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import robustrag

    return {"robustrag": robustrag}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
