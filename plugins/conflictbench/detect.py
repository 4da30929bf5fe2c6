"""Conflict detection (ConflictScore §4.1): predict Conflict / No Conflict for
a claim from its grounding documents with the ConflictScore labelling.

* Solver :func:`detect_conflict` labels the claim (the sample's ``question``)
  against every document with the Table 8 prompt (or the NLI backend) and
  answers ``Conflict`` iff D+ and D- are both non-empty. The labeller is the
  model being evaluated (it is what ConflictBench measures), unless a
  ``grader`` model role is given.
* A claim whose parsed labels do not decide the question -- no conflict
  among the parsed labels *and* at least one unparseable reply -- gets the
  prediction ``undetermined``: it counts as wrong (a false negative on a
  conflict item, a false positive on a no-conflict item) and in
  ``undetermined``; it is never silently mapped to a label. A grader
  reply is read by :func:`conflictscore.parse.parse_label` (last verdict;
  total on any text), or ``parse_label_list`` with ``labelling=all_docs``
  (a reply that is not a list fails every document of the claim).
* Label coverage (labelled pairs / all pairs, pooled) is reported as the
  ``pooled_coverage`` metric beside the Table 2 metrics.
* Scorer :func:`conflict_detection` reports precision, recall, F1,
  accuracy, Acc_conf, Acc_noConf overall and per subset (Table 2).
"""

from __future__ import annotations

from collections import defaultdict

from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.scorers.conflictscore.metrics import is_conflicted
from conflict_eval.scorers.conflictscore.pipeline import DEFAULTS, Options, conflict_score
from conflict_eval.scorers.conflictscore.scorer import documents_of, pooled_coverage

from .dataset import CONFLICT, NO_CONFLICT

UNDETERMINED = "undetermined"


def decide(row: list[str | None]) -> str:
    if is_conflicted(row):
        return CONFLICT
    if any(x is None for x in row):
        return UNDETERMINED
    return NO_CONFLICT


@solver
def detect_conflict(backend: str = DEFAULTS.backend, nli_model: str | None = DEFAULTS.nli_model,
                    labelling: str = DEFAULTS.labelling,
                    grader_max_tokens: int | None = DEFAULTS.grader_max_tokens) -> Solver:
    """Label the claim against every document; answer Conflict / No Conflict
    (the input is the claim: ``claims="whole"``; the other options and their
    defaults are the ``conflictscore`` metric's)."""
    opts = Options(claims="whole", backend=backend, nli_model=nli_model, labelling=labelling,
                   grader_max_tokens=grader_max_tokens)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        claim = state.input_text
        from conflict_eval.scorers.conflictscore.panel import resolve_panel

        judges = resolve_panel() if opts.needs_llm else None  # grader, grader_2, ...: cells by strict majority
        model = judges[0].model if judges else None
        result = await conflict_score(claim, documents_of(state), opts, judges=judges)
        prediction = decide(result.matrix[0]) if result.matrix else UNDETERMINED
        state.output = ModelOutput.from_content(str(model or nli_model), prediction)
        state.metadata["detection"] = result.metadata()
        return state

    return solve


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


NAN = float("nan")


def _div(a: int, b: int) -> float:
    """``a / b``; NaN (undefined, never 0) when ``b`` is 0."""
    return a / b if b else NAN


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
    p, r = _div(c["tp"], c["tp"] + c["fp"]), _div(c["tp"], c["tp"] + c["fn"])
    return {
        "precision": p,
        "recall": r,
        "f1": _div(2 * c["tp"], 2 * c["tp"] + c["fp"] + c["fn"]),
        "accuracy": _div(c["tp"] + c["tn"], sum(c.values())),
        "acc_conf": r,
        "acc_noconf": _div(c["tn"], c["tn"] + c["fp"]),
        "undetermined": _div(sum(1 for _, pred in pairs if pred == UNDETERMINED), len(pairs)),
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
