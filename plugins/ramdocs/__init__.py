"""Plugin: RAMDocs (Wang et al. 2025, arXiv 2504.13079) and its strict exact match."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import ramdocs

    return {"ramdocs": ramdocs}


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import ramdocs_strict_em

    return {"strict_em": ramdocs_strict_em}
