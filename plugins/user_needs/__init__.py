"""Plugin: user-need prompt variants and datasets in three context settings
(Context-Exclusive / Context-First / Memory-First x Context Matching /
Knowledge Conflict / Information Irrelevant)."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import user_need_prompt

    return {"user_need_prompt": user_need_prompt}


@hookimpl
def conflict_eval_register_datasets():
    from . import dataset

    return {
        "user_needs_hotpotqa": dataset.user_needs_hotpotqa,
        "user_needs_kre_ecqa": dataset.user_needs_kre_ecqa,
        "user_needs_kre_ecare": dataset.user_needs_kre_ecare,
        "user_needs_disentqa": dataset.user_needs_disentqa,
        "user_needs_uraq": dataset.user_needs_uraq,
    }


@hookimpl
def conflict_eval_add_cli_commands(sub):
    from .cli import add_cli_commands

    add_cli_commands(sub)


@hookimpl
def conflict_eval_lmeval_exports():
    from .lmeval import EXPORTS

    return EXPORTS


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
