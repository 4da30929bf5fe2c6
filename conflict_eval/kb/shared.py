"""Calls shared between the two samples of one question (``negatives=true``).

With ``-T negatives=true`` a question becomes two samples that differ only in
the candidate of the final Figure 3 question ("Is <gold>…?" / "Is
<target>…?"). Everything before that final call -- question splitting, triplet
extraction, conflict detection, RobustRAG's isolation, AstuteRAG's
elicitation and consolidation -- sends byte-identical prompts. The dataset
puts both samples in one *share group* (``extra.share_group``, with
``extra.share_group_size`` = 2), and methods send those calls through
:func:`shared_generate`: the first sample of the group to ask makes the call,
its sibling awaits and reuses the same output (no second model call, no second
model event in its transcript; the reuse is counted in the sibling's store and
noted in its transcript).

The memo is :mod:`conflict_eval.answers.reuse` (the one the ConflictScore
grader uses; why not Inspect's generate cache is said there): in memory, per
model object and run, keyed by share group, epoch and prompt; an entry is
dropped once every sample of its group has asked for it. If the call of the
sample that made it fails, the sibling makes its own call.
"""

from __future__ import annotations

import json

from inspect_ai.log import transcript
from inspect_ai.model import GenerateConfig, ModelOutput
from inspect_ai.solver import TaskState

from conflict_eval.answers.failures import generate_checked
from conflict_eval.answers.reuse import reuse_for

SHARE_GROUP = "share_group"
SHARE_GROUP_SIZE = "share_group_size"


def _fingerprint(input: str | list, config: GenerateConfig | None) -> str:
    if isinstance(input, str):
        messages = [["user", input]]
    else:
        messages = [[m.role, m.text] for m in input]
    return json.dumps([messages, config.model_dump(exclude_none=True) if config else None], sort_keys=True)


def share_group(state: TaskState) -> tuple[str, int] | None:
    """The sample's share group and its size, or None (no sibling)."""
    extra = (state.metadata or {}).get("extra") or {}
    group, size = extra.get(SHARE_GROUP), extra.get(SHARE_GROUP_SIZE, 1)
    return (str(group), int(size)) if group and int(size) > 1 else None


async def shared_generate(state: TaskState, model, input: str | list, config: GenerateConfig | None = None,
                          counter: dict[str, int] | None = None, what: str = "the model") -> ModelOutput:
    """``model.generate(input, config=config)``, made once per share group.

    ``counter`` (if given) gets ``made`` / ``reused`` incremented, so a method
    can record how many of its calls were shared. A failed call (an empty
    ``choices`` list...) raises :class:`~conflict_eval.answers.failures.ModelOutputError`
    (``what`` names the call) and is not shared.
    """
    kwargs = {"config": config} if config is not None else {}
    group = share_group(state)
    reuse = reuse_for(model) if group is not None else None
    if reuse is None:
        out, reused = await generate_checked(model, input, what, **kwargs), False
    else:
        key = (group[0], state.epoch, _fingerprint(input, config))
        out, reused = await reuse.call(key, lambda: generate_checked(model, input, what, **kwargs), uses=group[1])
    _count(counter, "reused" if reused else "made")
    if reused:
        transcript().info({"reused_call_of_share_group": group[0]}, source="shared call")
    return out


def _count(counter: dict[str, int] | None, key: str) -> None:
    if counter is not None:
        counter[key] = counter.get(key, 0) + 1
