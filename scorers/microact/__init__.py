"""Plugin: the Micro-Act paper's metrics (Huo et al., ACL 2025): the trajectory and
cost of Micro-Act runs (``microact_trajectory``, Tables 3-5, Figure 5) and the
over-rationalization ratio (``overrationalization``, Appendix B, Figure 8;
model-graded, the judge prompt is ours). The method is ``plugins/microact``."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .overrationalization import overrationalization
    from .trajectory import microact_trajectory

    return {"microact_trajectory": microact_trajectory, "overrationalization": overrationalization}


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
