"""Plugin: AtomR's answer metric ``atomr_qa`` (Xin et al. §4.1.1: token F1, EM and
cover-EM with AtomR normalisation, per question category). The method and
datasets are ``plugins/atomr``."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import atomr_qa

    return {"atomr_qa": atomr_qa}
