"""Plugin: Micro-Act (Huo et al., ACL 2025). Its metrics (trajectory and cost, the
over-rationalization ratio) are in scorers/microact/."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import microact

    return {"microact": microact}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
