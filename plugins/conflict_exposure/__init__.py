"""Plugin: Conflict Exposure ("The Collision of Blades...", Algorithms 1-3) with its ablations
(its ``triplet_parsing`` metric is in scorers/conflict_exposure/)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import conflict_exposure

    return {"conflict_exposure": conflict_exposure}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
