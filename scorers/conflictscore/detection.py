"""ConflictBench conflict detection scored (ConflictScore §4.1, Table 2).

The ``detect_conflict`` solver (plugins/conflictbench/detect.py) labels a claim
against its documents with the ConflictScore labelling and answers
:data:`CONFLICT` iff D+ and D- are both non-empty (:func:`decide`). A claim
whose parsed labels do not decide the question -- no conflict among the parsed
labels *and* at least one unparseable reply -- is :data:`UNDETERMINED`: it
counts as wrong (a false negative on a conflict item, a false positive on a
no-conflict item) and in ``undetermined``; it is never silently mapped to a
label.

Scorer :func:`conflict_detection` reports precision, recall, F1, accuracy,
Acc_conf, Acc_noConf overall and per subset (Table 2), and label coverage
(labelled pairs / all pairs, pooled) as ``pooled_coverage``.
"""

from __future__ import annotations

from collections import defaultdict

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from conflict_eval.scorers.nan_metrics import ratio

from .metrics import is_conflicted
from .scorer import pooled_coverage

CONFLICT, NO_CONFLICT = "Conflict", "No Conflict"
"""The gold labels of ConflictBench items (the datasets of plugins/conflictbench) and the predictions."""

UNDETERMINED = "undetermined"


def decide(row: list[str | None]) -> str:
    if is_conflicted(row):
        return CONFLICT
    if any(x is None for x in row):
        return UNDETERMINED
    return NO_CONFLICT


def counts(pairs: list[tuple[bool, str]]) -> dict[str, int]:
    """Confusion counts from ``(gold_is_conflict, prediction)`` pairs; an
    undetermined prediction is wrong (FN on conflict, FP on no-conflict)."""
    c = {"tp": 0, "fn": 0, "fp": 0, "tn": 0}
    for gold, pred in pairs:
        if gold:
            c["tp" if pred == CONFLICT else "fn"] += 1
        else:
            c["tn" if pred == NO_CONFLICT else "fp"] += 1
    return c


def detection_metrics(pairs: list[tuple[bool, str]]) -> dict[str, float]:
    """Table 2 metrics. Precision = TP/(TP+FP), recall = Acc_conf =
    TP/(TP+FN), F1 = 2PR/(P+R) = 2TP/(2TP+FP+FN), accuracy = (TP+TN)/N,
    Acc_noConf = TN/(TN+FP). A ratio whose denominator is 0 is undefined:
    NaN, never 0 (a perfect run with no Conflict item has no recall, and no
    precision when it flags nothing).

    >>> m = detection_metrics([(False, "No Conflict"), (False, "No Conflict")])
    >>> [m[k] for k in ("precision", "recall", "f1", "accuracy", "acc_noconf")]
    [nan, nan, nan, 1.0, 1.0]
    """
    c = counts(pairs)
    p, r = ratio(c["tp"], c["tp"] + c["fp"]), ratio(c["tp"], c["tp"] + c["fn"])
    return {
        "precision": p,
        "recall": r,
        "f1": ratio(2 * c["tp"], 2 * c["tp"] + c["fp"] + c["fn"]),
        "accuracy": ratio(c["tp"] + c["tn"], sum(c.values())),
        "acc_conf": r,
        "acc_noconf": ratio(c["tn"], c["tn"] + c["fp"]),
        "undetermined": ratio(sum(1 for _, pred in pairs if pred == UNDETERMINED), len(pairs)),
        "n": float(len(pairs)),
    }


def _pairs(scores: list[SampleScore]) -> dict[str, list[tuple[bool, str]]]:
    out: dict[str, list[tuple[bool, str]]] = defaultdict(list)
    for s in scores:
        md = s.score.metadata or {}
        pair = (md["gold"] == CONFLICT, md["prediction"])
        out["overall"].append(pair)
        out[md["subset"]].append(pair)
    return out


def _one(name: str):
    @metric(name=name)
    def m() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            return detection_metrics(_pairs(scores)["overall"])[name]
        return compute
    return m


precision, recall, f1, det_accuracy, acc_conf, acc_noconf, undetermined = (
    _one(n) for n in ("precision", "recall", "f1", "accuracy", "acc_conf", "acc_noconf", "undetermined"))


@metric
def per_subset() -> Metric:
    """Every Table 2 metric per subset, as ``<subset>/<metric>``."""
    def compute(scores: list[SampleScore]) -> dict[str, float]:
        groups = _pairs(scores)
        return {f"{subset}/{k}": v for subset, pairs in groups.items() if subset != "overall"
                for k, v in detection_metrics(pairs).items()}
    return compute


@scorer(metrics=[precision(), recall(), f1(), det_accuracy(), acc_conf(), acc_noconf(), undetermined(), per_subset(),
                 pooled_coverage()])
def conflict_detection() -> Scorer:
    """Compare the predicted Conflict / No Conflict with the gold label."""

    async def score(state: TaskState, target: Target) -> Score:
        prediction = state.output.completion.strip()
        gold = target.text
        md = state.metadata or {}
        detection = md.get("detection", {})
        return Score(
            value=int(prediction == gold),
            answer=prediction,
            explanation=f"gold {gold}; predicted {prediction}; labels {detection.get('label_matrix')}",
            metadata={"gold": gold, "prediction": prediction,
                      "subset": (md.get("extra") or {}).get("subset", md.get("dataset")),
                      "label_failures": detection.get("label_failures", []),
                      "labelled_pairs": detection.get("labelled_pairs", 0), "pairs": detection.get("pairs", 0)},
        )

    return score
