"""Helper functions for the lm-eval task YAMLs in this directory.

lm-eval loads this file by path (``!function utils.<name>``). Every prompt and
every parsing/metric step is the function the Inspect side uses, so both
harnesses give the same score for the same model output:

* the prompts and result processors are the units' own, exported through the
  plugin hook ``conflict_eval_lmeval_exports`` and served here by name
  (module ``__getattr__``): ``plugins/end_to_end/lmeval.py`` (Micro-Act Fig. 10,
  and our free-form adaptation), ``plugins/baselines/lmeval.py`` (Few-Shot
  Fig. 11, CoT Fig. 12), ``plugins/user_needs/lmeval.py`` (Appendix B/C); a
  third-party plugin exports its own the same way. This module names no unit.

A reply no answer can be read from is a parse failure: ``parse_failure`` is 1
and the item counts as wrong; it is never mapped to a letter.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from conflict_eval.records import ConflictQA

# --------------------------------------------------------------------------
# documents


def load_docs(dataset: str, **kwargs: Any) -> dict:
    """``custom_dataset`` for every task: the registered conflict-eval dataset
    ``dataset`` as a ``test`` split of flat docs (id, record JSON, target JSON).

    Other keys (from ``dataset_kwargs`` or lm-eval's ``--metadata``, e.g.
    ``path``, ``limit``, ``conflict_type``, ``setting``) go to the dataset
    factory when it takes them; keys it does not take (lm-eval adds its own,
    such as ``version`` and the model arguments) are ignored.
    """
    import datasets

    from conflict_eval.components.manager import get_dataset

    component = get_dataset(dataset)
    params = inspect.signature(component.factory).parameters
    options = {k: v for k, v in kwargs.items() if k in params}
    samples = component.factory(**options)
    docs = [{"id": str(s.id), "record": json.dumps(s.metadata), "target": json.dumps(s.target)}
            for s in samples]
    system = exports().get("user_need_system")
    for doc in docs:  # lm-eval reads a per-doc description (system prompt) from a doc field
        doc["system"] = system(doc) if system is not None and "user_need" in record(doc).extra else ""
    return {"test": datasets.Dataset.from_list(docs)}


def record(doc: dict) -> ConflictQA:
    return ConflictQA.model_validate(json.loads(doc["record"]))


def doc_to_target(doc: dict) -> str:
    target = json.loads(doc["target"])
    return target if isinstance(target, str) else target[0]


# --------------------------------------------------------------------------
# what the units export (hook conflict_eval_lmeval_exports)


def exports() -> dict:
    """``{name: function}`` the plugins export to lm-eval (``plugins/end_to_end``,
    ``plugins/baselines``, ``plugins/user_needs``, and any third-party plugin)."""
    from conflict_eval.components.manager import lmeval_exports

    return lmeval_exports()


def __getattr__(name: str):
    """``!function utils.<name>`` in a task YAML: the function a plugin exports under ``name``."""
    if name.startswith("__"):
        raise AttributeError(name)
    found = exports().get(name)
    if found is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no plugin exports it to lm-eval; "
                             f"exported: {', '.join(sorted(exports()))})")
    return found


def exported_prompts() -> tuple[bool, tuple[str, ...]]:
    """What the export can offer: whether the Few-Shot / CoT prompts are exported, and
    the user needs (empty when no plugin exports ``user_need_names``)."""
    found = exports()
    have_baselines = all(n in found for n in ("few_shot_prompt", "cot_prompt", "process_few_shot", "process_cot"))
    names = found.get("user_need_names")
    return have_baselines, tuple(names()) if names is not None else ()
