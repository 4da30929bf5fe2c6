"""Plugin: the polluted HotpotQA knowledge base (Conflict Exposure §4.2-4.4); its ACC/KRC
metrics are in scorers/conflict_exposure/."""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import polluted_kb

    return {"polluted_kb": polluted_kb}


@hookimpl
def conflict_eval_add_cli_commands(sub):
    from .cli import add_cli_commands

    add_cli_commands(sub)


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
