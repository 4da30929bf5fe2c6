"""Plugin: AtomR (Xin et al.) -- atomic reasoning trees over text, KG and web sources.

Methods ``atomr`` and the baselines ``atomr_standard``, ``atomr_cot``,
``atomr_standard_rag``; datasets ``atomr_hotpotqa``, ``atomr_2wiki``,
``atomr_musique``, ``atomr_crag``, ``atomr_blendqa``. Its metric ``atomr_qa`` is in
scorers/atomr/.
"""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_methods():
    from .solver import atomr, atomr_cot, atomr_standard, atomr_standard_rag

    return {"atomr": atomr, "atomr_standard": atomr_standard, "atomr_cot": atomr_cot,
            "atomr_standard_rag": atomr_standard_rag}


@hookimpl
def conflict_eval_register_datasets():
    from .dataset import atomr_2wiki, atomr_blendqa, atomr_crag, atomr_hotpotqa, atomr_musique

    return {"atomr_hotpotqa": atomr_hotpotqa, "atomr_2wiki": atomr_2wiki,
            "atomr_musique": atomr_musique, "atomr_crag": atomr_crag, "atomr_blendqa": atomr_blendqa}


@hookimpl
def conflict_eval_add_cli_commands(sub):
    from .cli import add_cli_commands

    add_cli_commands(sub)


@hookimpl
def conflict_eval_reply_readers():
    from .readers import READERS

    return READERS
