"""Plugin: ConflictQA (Xie et al., ICLR 2024, "Adaptive Chameleon or Stubborn Sloth"):
a model's own memory against a coherent counter-memory (the memorization ratio is
in scorers/conflictqa/)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import conflictqa

    return {"conflictqa": conflictqa}


@hookimpl
def conflict_eval_register_methods():
    from .solver import conflictqa_mc

    return {"conflictqa_mc": conflictqa_mc}
