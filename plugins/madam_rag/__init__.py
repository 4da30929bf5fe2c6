"""Plugin: MADAM-RAG (Wang et al. 2025, arXiv 2504.13079), multi-agent debate over documents."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import madam_rag

    return {"madam_rag": madam_rag}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
