"""``conflictscore`` metric: CS-C and CS-R of the response against the
sample's grounding documents (ConflictScore §3). Lower is better.

Per sample the score value is a dict:

* ``cs_c``, ``cs_r`` -- the two measures, **worst case** over the failed
  cells (an unparseable label could be any label; with every cell labelled
  this is the paper's value, so failure never improves a score); NaN,
  Inspect's "unscored" marker, when no label was parsed at all (empty
  response, failed decomposition, or every grader reply unreadable), so the
  sample is excluded from their means;
* ``cs_c_best``, ``cs_r_best`` -- the best case over the failed cells: with
  ``cs_c``/``cs_r`` the range the failures allow;
* ``undefined`` -- 1 when the score is undefined (the metric reports the count):
  CS-C/CS-R are NaN with no claim; with no label parsed only their worst case
  is known (the best case is NaN), and CS-C/CS-R report it;
* ``label_coverage`` -- labelled (claim, document) pairs / all pairs (NaN
  with no pairs); the overall metric pools pairs over samples;
* ``claims`` -- number of claims; ``claims_undetermined`` -- claims with a
  failed cell (their contribution is a range);
* ``label_failures`` -- number of unparseable grader labels;
* ``decomposition_failure`` -- 1 if the decomposition reply was a refusal,
  an empty list or listed no claim;
* ``decomposition_truncated`` -- 1 if the claim list was cut at its token
  limit even after the retry with a larger budget; ``claims_lost`` -- the
  cut (unfinished) claims dropped, whose pairs count as unlabelled in
  ``label_coverage``;
* ``grader_calls`` -- LLM calls the scorer made for this sample (a reply
  reused from an identical earlier prompt is not a call; see
  ``metadata["reused_label_replies"]``).

``Score.reason`` is Inspect's: ``no_response`` (an empty response, no claim),
``grader_failed`` (a decomposition or label reply could not be read); why
CS-C/CS-R are undefined is ``metadata["undefined_reason"]``. ``Score.metadata`` keeps the claims, the
full label matrix, every cell's snippet, reasoning and raw reply, the
failures, the pair counts, and which model graded. With ``--epochs`` > 1,
Inspect keeps the first epoch's metadata when reducing, so the pooled
coverage then counts the first epoch's pairs.
"""

from __future__ import annotations

from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import TaskState
from conflict_eval.answers.reasons import GRADER_FAILED, NO_RESPONSE

from conflict_eval.scorers.nan_metrics import defined_mean, ratio, total

from .panel import judge_panel, resolve_panel
from .pipeline import DEFAULTS, Backend, ClaimMode, Labelling, Options, conflict_score, takes_options


def score_reason(completion: str, result) -> str | None:
    """``Score.reason`` in Inspect's vocabulary: ``no_response`` for an empty
    response (or one with no claim), ``grader_failed`` when a grader reply
    (decomposition or label) could not be read, else None."""
    if not completion.strip() or (not result.claims and result.decomposition_error is None):
        return NO_RESPONSE
    if result.decomposition_error is not None or result.failures:
        return GRADER_FAILED
    return None


def _nan_if_none(value: float | None) -> float:
    return float("nan") if value is None else value


@metric
def pooled_coverage() -> Metric:
    """Labelled (claim, document) pairs / all pairs, pooled over samples
    (from ``Score.metadata``; NaN when no sample has a pair)."""

    def compute(scores: list[SampleScore]) -> float:
        labelled = sum((s.score.metadata or {}).get("labelled_pairs", 0) for s in scores)
        pairs = sum((s.score.metadata or {}).get("pairs", 0) for s in scores)
        return ratio(labelled, pairs)

    return compute


#: Metrics of the score keys (tasks that regroup them start from this).
SCORE_METRICS = {
    "cs_c": [defined_mean()],
    "cs_r": [defined_mean()],
    "cs_c_best": [defined_mean()],
    "cs_r_best": [defined_mean()],
    "label_coverage": [pooled_coverage()],
    "undefined": [total(), mean()],
    "claims": [mean()],
    "claims_undetermined": [total(), mean()],
    "label_failures": [mean()],
    "decomposition_failure": [total()],
    "decomposition_truncated": [total()],
    "claims_lost": [total()],
    "grader_calls": [mean(), judge_panel()],
}


def documents_of(state: TaskState) -> list[str]:
    """Grounding documents of a sample: ``ConflictQA.evidence`` texts (title
    prefixed when present) or a ``documents`` metadata list of strings."""
    md = state.metadata or {}
    if md.get("evidence"):
        return [f"{p['title']}\n{p['text']}" if p.get("title") else p["text"] for p in md["evidence"]]
    docs = md.get("documents")
    if isinstance(docs, list) and all(isinstance(d, str) for d in docs):
        return docs
    raise ValueError(
        f"conflictscore: sample {state.sample_id!r} has no grounding documents "
        "(metadata field 'evidence' or 'documents')")


@scorer(name="conflictscore", metrics=SCORE_METRICS)
@takes_options()
def conflictscore(
    claims: ClaimMode = DEFAULTS.claims,
    k: int = DEFAULTS.k,
    labelling: Labelling = DEFAULTS.labelling,
    backend: Backend = DEFAULTS.backend,
    nli_model: str | None = DEFAULTS.nli_model,
    grader_max_tokens: int | None = DEFAULTS.grader_max_tokens,
    grader_dedupe: bool = DEFAULTS.grader_dedupe,
    judge_repeats: int = DEFAULTS.judge_repeats,
    judge_swap: bool = DEFAULTS.judge_swap,
    judge_temperature: float = DEFAULTS.judge_temperature,
) -> Scorer:
    """ConflictScore of the final response (defaults: ``pipeline.DEFAULTS``).

    Args:
        claims: ``atomic`` (Table 7 decomposition), ``whole`` (response as one
            claim), ``salient`` (only the ``k`` most salient claims) or
            ``sentences`` (rule-based split, no LLM).
        k: number of claims for ``claims=salient``.
        labelling: ``pairwise`` (Table 8, one call per claim x document) or
            ``all_docs`` (one call per claim with all documents).
        backend: ``llm`` (grader model) or ``nli`` (local HF NLI model).
        nli_model: directory of the NLI model for ``backend=nli``.
        grader_max_tokens: output budget of each grader call.
        grader_dedupe: send a byte-identical grader prompt once per run and
            reuse its reply (temperature 0; e.g. the same claim and document
            in the RAG and Balanced samples of a report run).
        judge_repeats: ask each judge every cell this many times at
            ``judge_temperature`` (self-agreement; a judge's vote is the
            strict majority of its repeats). Judges: the ``grader``,
            ``grader_2``, ... model roles, labels combined by strict
            majority (:mod:`.panel`).
        judge_swap: also ask each judge with the document before the claim
            (``labelling=all_docs``: documents reversed) and report the flip rate.
        judge_temperature: the temperature of repeated questions (recorded).
    """
    opts = Options.of(locals())

    async def score(state: TaskState, target: Target) -> Score:
        documents = documents_of(state)
        judges = resolve_panel() if opts.needs_llm else None
        result = await conflict_score(state.output.completion, documents, opts, judges=judges)
        source = result.grader_source
        labelled, pairs = result.pairs
        undefined = result.undefined_reason
        return Score(
            value={
                "cs_c": _nan_if_none(result.cs_c),
                "cs_r": _nan_if_none(result.cs_r),
                "cs_c_best": _nan_if_none(result.cs_c_best),
                "cs_r_best": _nan_if_none(result.cs_r_best),
                "label_coverage": _nan_if_none(result.coverage),
                "undefined": int(undefined is not None),
                "claims": len(result.claims),
                "claims_undetermined": result.claims_undetermined,
                "label_failures": len(result.failures),
                "decomposition_failure": int(result.decomposition_error is not None),
                "decomposition_truncated": int(result.decomposition_truncated),
                "claims_lost": result.claims_lost,
                "grader_calls": result.calls,
            },
            answer=state.output.completion,
            reason=score_reason(state.output.completion, result),  # the detail: metadata["undefined_reason"]
            explanation=f"{len(result.claims)} claims x {len(documents)} documents; "
                        f"{labelled}/{pairs} pairs labelled"
                        + (f" (claim list cut at the token limit after a retry: {result.claims_lost} cut claim "
                           f"dropped, counted as unlabelled pairs; later claims unknown)"
                           if result.decomposition_truncated else "") + "; "
                        + (f"CS-C/CS-R undefined: {undefined}; " if undefined and result.cs_c is None else
                           f"{undefined}: worst case CS-C={result.cs_c} CS-R={result.cs_r}, no best case; "
                           if undefined else
                           f"CS-C={result.cs_c} CS-R={result.cs_r} (worst case; best case CS-C={result.cs_c_best} "
                           f"CS-R={result.cs_r_best}; {result.claims_undetermined} claims undetermined); ")
                        + f"graded by {result.grader} ({source})"
                        + (f"; panel of {len(judges)} judges ({', '.join(j.name for j in judges)}), "
                           "cell labels by strict majority" if judges and len(judges) > 1 else ""),
            metadata=result.metadata(),
        )

    return score
