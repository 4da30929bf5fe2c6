"""Plugin: the Micro-Act baselines (Appendix G): Few-Shot, CoT, Self-Ask, Comparative, GKP."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import comparative, cot, few_shot, gkp, self_ask

    return {"few_shot": few_shot, "cot": cot, "self_ask": self_ask,
            "comparative": comparative, "gkp": gkp}


@hookimpl
def conflict_eval_lmeval_exports():
    from .lmeval import EXPORTS

    return EXPORTS


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
