"""Plugin: token F1, exact match and cover-EM for free-form answers."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_metrics():
    from .scorer import cover_em_scorer, exact_match_scorer, token_f1_scorer

    return {
        "token_f1": token_f1_scorer,
        "exact_match": exact_match_scorer,
        "cover_em": cover_em_scorer,
    }


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
