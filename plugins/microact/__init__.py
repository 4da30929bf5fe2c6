"""Plugin: Micro-Act (Huo et al., ACL 2025), its trajectory/cost metric and the
over-rationalization ratio (Appendix B, Figure 8; model-graded, prompt ours)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import microact

    return {"microact": microact}


@hookimpl
def conflict_eval_register_metrics():
    from .overrationalization import overrationalization
    from .scorer import microact_trajectory

    return {"microact_trajectory": microact_trajectory, "overrationalization": overrationalization}
