"""AtomR's answer metrics with a per-category breakdown (AtomR §4.1.1, Tables 2-3).

Token F1, exact match and cover-EM with AtomR's normalisation
(:func:`conflict_eval.answers.text_metrics.normalize_atomr`), each the maximum over
the gold answers. The prediction is the whole completion (AtomR's solvers
leave the answer list joined with ", " there). :func:`atomr_means` reports
the overall means and the mean F1 per question category
(``extra["category"]``: 2Wiki type, MuSiQue hops, CRAG question type,
BlendQA KG-Web / KG-Text / Text-Web) as ``f1/<category>``.

The normaliser folds typographic quotes and apostrophes to ASCII first
(:func:`conflict_eval.answers.text_metrics.fold_quotes`), which AtomR's own
normaliser does not; ``f1_authors`` (each sample's F1 with
:func:`~conflict_eval.answers.text_metrics.normalize_atomr_authors`, and its
mean, overall and per category as ``f1_authors/<category>``) is the authors'
figure, reported beside ``f1`` and compared by the reproduction card. They
differ only where a reply or gold answer has curly quotes or apostrophes next
to an answer word (on the authors' released BlendQA predictions: 42.92 folded,
42.63 the authors', six of 445 rows; the other four released files agree).
"""

from collections import defaultdict

from inspect_ai.scorer import SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import TaskState

from conflict_eval.answers.text_metrics import cover_em, exact_match, token_f1
from conflict_eval.answers.reasons import NO_RESPONSE

KEYS = ("f1", "em", "cover_em", "f1_authors")


@metric
def atomr_means():
    """Means of f1, em, cover_em, f1_authors over all samples, and of f1 and f1_authors per category.

    An empty score list gives an empty dict (nothing to average).
    """
    def compute(scores: list[SampleScore]) -> dict[str, float]:
        if not scores:
            return {}
        out = {key: sum(s.score.value[key] for s in scores) / len(scores) for key in KEYS}
        groups: dict[str, list[dict]] = defaultdict(list)
        for s in scores:
            cat = (s.score.metadata or {}).get("category")
            if cat is not None:
                groups[str(cat)].append(s.score.value)
        for cat, values in sorted(groups.items()):
            for key in ("f1", "f1_authors"):
                out[f"{key}/{cat}"] = sum(v[key] for v in values) / len(values)
            out[f"n/{cat}"] = float(len(values))
        return out
    return compute


@scorer(metrics=[atomr_means()], name="atomr_qa")
def atomr_qa() -> Scorer:
    """Token F1 / EM / cover-EM with AtomR normalisation, max over gold answers."""

    async def score(state: TaskState, target: Target) -> Score:
        prediction = state.output.completion.strip()
        golds = list(target.target)
        value = {"f1": token_f1(prediction, golds, "atomr"),
                 "em": exact_match(prediction, golds, "atomr"),
                 "cover_em": cover_em(prediction, golds, "atomr"),
                 "f1_authors": token_f1(prediction, golds, "atomr_authors")}
        extra = (state.metadata or {}).get("extra") or {}
        store = state.store
        failures = store.get("AtomRStore:parse_failures") or {}
        baseline_error = store.get("AtomRBaselineStore:parse_error")
        retrieval_errors = store.get("AtomRStore:retrieval_errors", store.get("AtomRBaselineStore:retrieval_errors", 0))
        return Score(value=value, answer=prediction, reason=None if prediction else NO_RESPONSE,
                     explanation=f"f1={value['f1']:.3f} against {golds}",
                     metadata={"category": extra.get("category"), "parse_failures": failures,
                               "parse_error": baseline_error, "retrieval_errors": retrieval_errors})

    return score
