"""Plugin: the RAMDocs dataset (Wang et al. 2025, arXiv 2504.13079); its strict exact
match ``strict_em`` is in scorers/ramdocs/."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import ramdocs

    return {"ramdocs": ramdocs}
