"""The yes/no evaluation set over a polluted knowledge base (Conflict Exposure §4.2).

Each question becomes 'Is "<answer>" the answer to the question? (Yes or No)'
(Figure 3) with the gold answer, target ``Yes``. Documents are not fixed in
the sample: methods retrieve them from the KB corpus of the chosen pollution
type (``extra["kb_path"]``, ``extra["pollution"]``).
"""

from __future__ import annotations

import logging
from pathlib import Path

from conflict_eval.components.compose import declares_metric
from conflict_eval.records import ConflictQA, DataNeeded, build_dataset

from conflict_eval.kb.format import check_pollution, load_kb
from conflict_eval.kb.shared import SHARE_GROUP, SHARE_GROUP_SIZE

logger = logging.getLogger(__name__)


@declares_metric("yes_no_accuracy", "knowledge_recall")
def polluted_kb(
    path: str | None = None,
    pollution: str = "all",
    negatives: bool = False,
    share_calls: bool = True,
    prescreened: bool = False,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
):
    """Yes/no questions over a polluted KB file built by ``conflict-eval build-polluted-kb``.

    Args:
        path: the KB file (JSON). Required: the KB is derived data, built once
            from HotpotQA with a model and then shared.
        pollution: corpus the methods retrieve from: ``I``, ``II``, ``III``,
            ``all`` (clean + every injected type) or ``none`` (clean only).
        negatives: also ask about the misinformation target
            ('Is "<target>" the answer...?', gold ``No``). Off by default: the
            paper only asks about the gold answer. The two samples of a
            question form a share group (:mod:`.shared`): the calls before
            the final question are made once and reused by the sibling.
        share_calls: with ``negatives``, share those calls (default). False
            runs the two samples independently (for measuring the saving).
        prescreened: keep only questions that passed the §4.2 pre-screening
            (the KB must have been built with ``--prescreen``).
        limit, shuffle, seed: as for every dataset.

    Questions whose misinformation target could not be obtained carry no
    pollution and are left out (unless ``pollution="none"``); the number left
    out is logged.
    """
    check_pollution(pollution)
    if not isinstance(share_calls, bool):
        raise ValueError(f"polluted_kb: share_calls must be true or false, got {share_calls!r}")
    if path is None:
        raise DataNeeded("polluted_kb", "required", "a polluted KB file; build one with "
                         "`conflict-eval build-polluted-kb --source HOTPOT.jsonl --out kb.json`")
    kb_path = Path(path).resolve()
    kb = load_kb(kb_path)
    kb.corpus(pollution)  # fails early if the KB lacks this pollution type
    if prescreened and kb.meta.prescreen is None:
        raise ValueError(f"{path}: prescreened=True but the KB was built without --prescreen")
    records, no_target = [], 0
    for q in kb.questions:
        if q.target is None and pollution != "none":
            no_target += 1
            continue
        if prescreened and not (q.prescreen and q.prescreen.kept):
            continue
        common = dict(dataset="polluted_kb", question=q.question, conflict_type="misinformation",
                      setting=f"pollution_{pollution}", source_ids=[q.id],
                      conflict_answer=q.target)
        extra = {"kb_path": str(kb_path), "pollution": pollution, "gold_answers": q.answers,
                 "supporting_ids": q.supporting_ids, "misinformation": q.target}
        if negatives and share_calls and q.target is not None:  # the two samples share calls (shared.py)
            extra.update({SHARE_GROUP: f"{kb_path}|{pollution}|{q.id}", SHARE_GROUP_SIZE: 2})
        records.append(ConflictQA(id=q.id, answers=["Yes"],
                                  extra={**extra, "candidate": q.answers[0]}, **common))
        if negatives and q.target is not None:
            records.append(ConflictQA(id=f"{q.id}:neg", answers=["No"],
                                      extra={**extra, "candidate": q.target}, **common))
    if no_target:
        logger.warning("polluted_kb %s: %d question(s) without a misinformation target left out",
                       path, no_target)
    return build_dataset(f"polluted_kb_{pollution}", records, location=str(kb_path),
                         limit=limit, shuffle=shuffle, seed=seed)
