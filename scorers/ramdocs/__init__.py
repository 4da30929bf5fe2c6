"""Plugin: RAMDocs' strict exact match ``strict_em`` (Wang et al. 2025, arXiv
2504.13079 §4) with its breakdowns. The dataset is ``plugins/ramdocs``."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import ramdocs_strict_em

    return {"strict_em": ramdocs_strict_em}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
