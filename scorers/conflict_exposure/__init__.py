"""Plugin: the Conflict Exposure paper's metrics ("The Collision of Blades"): ACC
``yes_no_accuracy`` and KRC ``knowledge_recall`` (§4.6, on the polluted KB of
``plugins/polluted_kb``) and ``triplet_parsing`` (how the method's extraction and
detection replies were read; the method is ``plugins/conflict_exposure``)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .accuracy import knowledge_recall, yes_no_accuracy
    from .triplets import triplet_parsing

    return {"yes_no_accuracy": yes_no_accuracy, "knowledge_recall": knowledge_recall,
            "triplet_parsing": triplet_parsing}
