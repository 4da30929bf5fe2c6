"""Plugin: the End-to-End QA baseline (Micro-Act, Figure 10)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import end_to_end

    return {"end_to_end": end_to_end}


@hookimpl
def conflict_eval_lmeval_exports():
    from .lmeval import EXPORTS

    return EXPORTS


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
