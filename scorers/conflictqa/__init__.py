"""Plugin: ConflictQA's memorization ratio ``memorization_ratio`` (Xie et al., ICLR
2024 §3.3) and answer-class rates. The dataset and method are ``plugins/conflictqa``."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import memorization_ratio

    return {"memorization_ratio": memorization_ratio}
