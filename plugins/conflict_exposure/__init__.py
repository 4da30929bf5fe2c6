"""Plugin: Conflict Exposure ("The Collision of Blades...", Algorithms 1-3) with its ablations."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import conflict_exposure

    return {"conflict_exposure": conflict_exposure}


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import triplet_parsing

    return {"triplet_parsing": triplet_parsing}
