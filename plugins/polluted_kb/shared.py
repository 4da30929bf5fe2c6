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

Why not Inspect's generate cache: the two samples run at the same time, so
both would miss it; and a disk cache would also make a re-run of the whole
eval free, hiding the cost the benchmarks measure. The memo here lives in
memory, per model object, and an entry is dropped once every sample of its
group has used it. If the call of the sample that made it fails, the sibling
makes its own call.
"""

from __future__ import annotations

import json
import weakref
from dataclasses import dataclass, field
from typing import Any

import anyio
from inspect_ai.log import transcript
from inspect_ai.model import GenerateConfig, ModelOutput
from inspect_ai.solver import TaskState

SHARE_GROUP = "share_group"
SHARE_GROUP_SIZE = "share_group_size"


@dataclass
class _Entry:
    waiting: int
    """Samples of the group that have not yet used this call."""
    done: anyio.Event = field(default_factory=anyio.Event)
    output: ModelOutput | None = None


_MEMO: weakref.WeakKeyDictionary[Any, dict[tuple, _Entry]] = weakref.WeakKeyDictionary()


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
                          counter: dict[str, int] | None = None) -> ModelOutput:
    """``model.generate(input, config=config)``, made once per share group.

    ``counter`` (if given) gets ``made`` / ``reused`` incremented, so a method
    can record how many of its calls were shared.
    """
    kwargs = {"config": config} if config is not None else {}
    group = share_group(state)
    if group is None:
        out = await model.generate(input, **kwargs)
        _count(counter, "made")
        return out
    key = (group[0], state.epoch, _fingerprint(input, config))
    table = _MEMO.setdefault(model, {})
    entry = table.get(key)
    if entry is None:
        entry = table[key] = _Entry(waiting=group[1] - 1)
        try:
            entry.output = await model.generate(input, **kwargs)
        finally:
            entry.done.set()
            if entry.output is None:  # failed or cancelled: the siblings ask for themselves
                table.pop(key, None)
        _count(counter, "made")
        return entry.output
    entry.waiting -= 1
    if entry.waiting <= 0:
        table.pop(key, None)
    await entry.done.wait()
    if entry.output is None:
        out = await model.generate(input, **kwargs)
        _count(counter, "made")
        return out
    _count(counter, "reused")
    transcript().info({"reused_call_of_share_group": group[0]}, source="shared call")
    return entry.output


def _count(counter: dict[str, int] | None, key: str) -> None:
    if counter is not None:
        counter[key] = counter.get(key, 0) + 1
