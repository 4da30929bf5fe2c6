"""The scorer of ``conflict_eval/truthfulqa_conflict`` (ConflictScore §6, Tables 4-5):
accuracy of the RAG, Control-RAG and Regenerated-RAG answers and, on the items
ConflictScore flags, original wrong / correct counts, improve rate, harm rate
and net improvement (Table 5). The task (tasks/truthfulqa_conflict/task.py)
builds the samples and runs the solvers (``plugins/conflictscore/``); the
Control-RAG solver leaves its reply in :class:`~.stores.ControlStore`, the
regeneration in :class:`~.stores.RegenerationStore`.

Failure rules: an unparseable answer (RAG, Control-RAG, or the Table 14
reply) is wrong and counted; an answer that names no option and refuses is
wrong and counted as a refusal (``*_refusal``), not a parse failure; an answer
whose ConflictScore is undefined (no grader label parsed) is counted in
``cs_undefined``. An answer flagged only through unreadable grader replies
(``flag_undetermined``) is scored at the worse of the kept and the
regenerated answer, and :func:`regeneration_effect` reports the worst case
(:func:`improve_harm_worst`). ``documents_mentioning_key_entity`` counts the
sample's documents that mention its question's :func:`key_entity`.
"""

from __future__ import annotations

import re

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import TaskState

from conflict_eval.records import LETTERS, ConflictQA
from conflict_eval.answers.reasons import GRADER_FAILED, REFUSAL, unread_reason
from conflict_eval.scorers.nan_metrics import total

from .panel import judge_panel
from .parse import parse_rag_choice
from .scorer import pooled_coverage
from .stores import ControlStore, RegenerationStore


# --------------------------------------------------------------------------- key entity

_STOP = set("""a an the of in on at to for from by with about as into over under after before between is are was
were be been being do does did doing have has had what which who whom whose when where why how if you your yours
i me my we our us it its this that these those there their they them he she his her him can could should would
will shall may might must than then so such not no yes or and but all any some most more many much very one
happens happen happened typically really actually ever still just only also""".split())


def key_entity(question: str) -> str:
    """The question's key entity, by a simple heuristic (recorded per sample
    so it can be audited): the longest run of capitalised words after the
    first word, joined across "of", "the", "and" (``Declaration of
    Independence``; a capitalised word right after a quote mark does not
    count); without one, the longest content word not ending in -ed/-ing
    (ties: the last), e.g. ``watermelon`` in "What happens to you if you
    eat watermelon seeds?".

    >>> key_entity("What did the Emancipation Proclamation do?"), key_entity("What happens if you eat watermelon seeds?")
    ('Emancipation Proclamation', 'watermelon')
    """
    tokens = [(m.group(), question[max(0, m.start() - 1):m.start()])
              for m in re.finditer(r"[A-Za-z0-9][A-Za-z0-9.'’\-]*[A-Za-z0-9]|[A-Za-z0-9]", question)]
    runs: list[list[str]] = []
    current: list[str] = []
    for i, (w, before) in enumerate(tokens):
        proper = i > 0 and w[0].isupper() and before not in "\"“'‘"
        if proper:
            current.append(w)
        elif current and w.lower() in ("of", "the", "and") and i + 1 < len(tokens) and tokens[i + 1][0][0].isupper():
            current.append(w)  # "Declaration of Independence", "Snow White and the Seven Dwarfs"
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    if runs:
        return " ".join(max(runs, key=len))
    content = [w for w, _ in tokens if w.lower() not in _STOP and not w[0].isdigit()]
    nouns = [w for w in content if not w.lower().endswith(("ed", "ing"))] or content
    if not nouns:
        return ""
    best = max(len(w) for w in nouns)
    return [w for w in nouns if len(w) == best][-1]


def mentions(text: str, entity: str) -> bool:
    """Every content word of ``entity`` starts a word of ``text``
    (case-insensitive; ``watermelon`` matches "watermelons")."""
    words = [w for w in entity.lower().split() if w not in _STOP] or entity.lower().split()
    low = text.lower()
    return bool(words) and all(re.search(r"(?<![a-z0-9])" + re.escape(w), low) for w in words)


def improve_harm(items: list[tuple[bool, bool]]) -> dict[str, float]:
    """Table 5 on flagged items given as ``(originally_correct, correct_after)``.

    improve rate = corrected / originally wrong; harm rate = broken /
    originally correct; net = (corrected - broken) / flagged. A rate whose
    denominator is 0 is undefined: NaN, never 0 (nothing was wrong, so
    nothing could improve).

    >>> improve_harm([(True, True), (True, False)])["improve_rate"]
    nan
    """
    nan = float("nan")
    wrong = [after for before, after in items if not before]
    right = [after for before, after in items if before]
    improved, harmed = sum(wrong), sum(1 for a in right if not a)
    return {
        "orig_wrong": float(len(wrong)),
        "orig_correct": float(len(right)),
        "improve_rate": improved / len(wrong) if wrong else nan,
        "harm_rate": harmed / len(right) if right else nan,
        "net_improve": (improved - harmed) / len(items) if items else nan,
    }


def _worst_mean(fixed: list[float], optional: list[float], lowest: bool) -> float:
    """The lowest (``lowest``) or highest mean of ``fixed`` plus any subset of
    ``optional``; NaN when every choice is empty. (The extreme mean over
    subsets takes a prefix of ``optional`` sorted towards that extreme.)"""
    ordered = sorted(optional, reverse=not lowest)
    means = []
    total, n = float(sum(fixed)), len(fixed)
    for k in range(len(ordered) + 1):
        if k:
            total, n = total + ordered[k - 1], n + 1
        if n:
            means.append(total / n)
    if not means:
        return float("nan")
    return min(means) if lowest else max(means)


def improve_harm_worst(flagged: list[tuple[bool, bool]], undetermined: list[tuple[bool, bool]]) -> dict[str, float]:
    """Table 5 when some items are flagged only because the grader could not
    be read (``undetermined``: each may or may not belong to the flagged
    set): every rate is its worst case over which of them belong -- the
    lowest improve rate and net improvement, the highest harm rate. The
    counts ``orig_wrong`` / ``orig_correct`` include every item that may be
    flagged; ``flagged_undetermined`` counts the undetermined ones. With no
    undetermined item this is :func:`improve_harm`.

    >>> improve_harm_worst([(False, True)], [(False, False)])["improve_rate"]  # 1/1 or 1/2: worst 0.5
    0.5
    >>> improve_harm_worst([(True, True)], [(True, False)])["harm_rate"]  # 0/1 or 1/2: worst 0.5
    0.5
    """
    both = flagged + undetermined
    out = improve_harm(both)

    def step(before: bool, after: bool) -> float:
        return 1.0 if after and not before else -1.0 if before and not after else 0.0

    out["improve_rate"] = _worst_mean([float(a) for b, a in flagged if not b],
                                      [float(a) for b, a in undetermined if not b], lowest=True)
    out["harm_rate"] = _worst_mean([float(not a) for b, a in flagged if b],
                                   [float(not a) for b, a in undetermined if b], lowest=False)
    out["net_improve"] = _worst_mean([step(b, a) for b, a in flagged],
                                     [step(b, a) for b, a in undetermined], lowest=True)
    out["flagged_undetermined"] = float(len(undetermined))
    return out


@metric
def regeneration_effect() -> Metric:
    """:func:`improve_harm` over the samples ConflictScore flagged; with
    samples flagged only because grader replies were unreadable, the worst
    case (:func:`improve_harm_worst`)."""

    def compute(scores: list[SampleScore]) -> dict[str, float]:
        flagged, undetermined = [], []
        for s in scores:
            md = s.score.metadata or {}
            if md.get("flagged"):
                item = (bool(md["rag_correct"]), bool(md.get("regenerated_if_flagged", md["regenerated_correct"])))
                (undetermined if md.get("flag_undetermined") else flagged).append(item)
        return improve_harm_worst(flagged, undetermined)

    return compute


def _correct(reply: str, letters: str, options: list[str], gold: str) -> tuple[int, str | None, str | None]:
    """(correct, letter, failure reason) -- a parse failure or a refusal is wrong and reported."""
    parsed = parse_rag_choice(reply, options, letters)
    return int(parsed.ok and parsed.letter == gold), parsed.letter, parsed.reason


def _refused(reason: str | None) -> bool:
    """Whether a failure reason is a refusal (``ChoiceParse.refusal``), counted apart."""
    return reason is not None and reason.startswith("refusal")


@scorer(metrics={
    "rag": [mean()], "control_rag": [mean()], "regenerated_rag": [mean()], "flagged": [mean(), judge_panel()],
    "flagged_undetermined": [total()], "claims_undetermined": [total()],
    "rag_parse_failure": [mean()], "control_parse_failure": [mean()], "regenerated_parse_failure": [mean()],
    "rag_refusal": [mean()], "control_refusal": [mean()], "regenerated_refusal": [mean()],
    "effect": [regeneration_effect()], "cs_undefined": [total()], "label_coverage": [pooled_coverage()],
    "documents": [total()], "documents_mentioning_key_entity": [total(), mean()],
})
def truthfulqa_settings() -> Scorer:
    """Accuracy of the RAG, Control-RAG and Regenerated-RAG answers."""
    async def score(state: TaskState, target: Target) -> Score:
        record = state.metadata_as(ConflictQA)
        entity = key_entity(record.question)
        on_topic = sum(mentions(f"{p.title or ''} {p.text}", entity) for p in record.evidence)
        options = [c.value for c in state.choices]
        letters = LETTERS[: len(options)]
        gold = target.text
        regen = state.store_as(RegenerationStore)
        rag, rag_letter, rag_fail = _correct(regen.original_response, letters, options, gold)
        control_reply = state.store_as(ControlStore).reply
        control, control_letter, control_fail = _correct(control_reply, letters, options, gold)
        if regen.flagged:
            final = regen.regenerated_letter
            regenerated, regen_fail = int(final == gold), regen.regeneration_parse_failure
            if_flagged = regenerated
            if regen.flag_undetermined and rag < regenerated:
                # flagged only through unreadable grader replies: the worse of the two answers
                final, regenerated, regen_fail = rag_letter, rag, rag_fail
        else:
            final, regenerated, regen_fail = rag_letter, rag, rag_fail
            if_flagged = None
        conflict = regen.conflict or {}
        # ConflictScore undefined for a scored answer (no label parsed): counted, never "no conflict"
        cs_undefined = int(regen.scored_response is not None and conflict.get("undefined_reason") is not None)
        labelled, pairs = conflict.get("labelled_pairs", 0), conflict.get("pairs", 0)
        return Score(
            value={"rag": rag, "control_rag": control, "regenerated_rag": regenerated,
                   "flagged": int(regen.flagged), "flagged_undetermined": int(regen.flag_undetermined),
                   "claims_undetermined": regen.claims_undetermined,
                   "rag_parse_failure": int(rag_fail is not None and not _refused(rag_fail)),
                   "control_parse_failure": int(control_fail is not None and not _refused(control_fail)),
                   "regenerated_parse_failure": int(regen_fail is not None and not _refused(regen_fail)),
                   "rag_refusal": int(_refused(rag_fail)), "control_refusal": int(_refused(control_fail)),
                   "regenerated_refusal": int(_refused(regen_fail)), "effect": 0,
                   "cs_undefined": cs_undefined,
                   "label_coverage": labelled / pairs if pairs else float("nan"),
                   "documents": len(record.evidence), "documents_mentioning_key_entity": on_topic},
            answer=final,
            # the RAG answer's refusal or unread reply first, then an unreadable grader (Inspect's vocabulary)
            reason=REFUSAL if _refused(rag_fail) else unread_reason(regen.original_response) if rag_fail is not None
            else GRADER_FAILED if regen.flag_undetermined or regen.claims_undetermined or cs_undefined else None,
            explanation=f"gold {gold}; RAG {rag_letter}; Control-RAG {control_letter}; "
                        f"Regenerated-RAG {final} (flagged={regen.flagged})",
            metadata={"flagged": regen.flagged, "flag_undetermined": regen.flag_undetermined,
                      "rag_correct": rag, "regenerated_correct": regenerated, "regenerated_if_flagged": if_flagged,
                      "rag_letter": rag_letter, "control_letter": control_letter, "regenerated_letter": final,
                      "parse_failures": {"rag": rag_fail, "control_rag": control_fail, "regenerated_rag": regen_fail},
                      "selected_claim": regen.selected_claim, "cs_c": regen.cs_c, "cs_r": regen.cs_r,
                      "not_scored_reason": regen.not_scored_reason,
                      "cs_undefined_reason": conflict.get("undefined_reason"),
                      "labelled_pairs": labelled, "pairs": pairs, "key_entity": entity,
                      "judges": conflict.get("judges")},
        )

    return score
