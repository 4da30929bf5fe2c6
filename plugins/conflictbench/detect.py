"""Conflict detection (ConflictScore §4.1): predict Conflict / No Conflict for
a claim from its grounding documents with the ConflictScore labelling.

Solver :func:`detect_conflict` labels the claim (the sample's ``question``)
against every document with the Table 8 prompt (or the NLI backend) and
answers ``Conflict`` iff D+ and D- are both non-empty, else ``No Conflict``,
or ``undetermined`` when unreadable grader replies leave it open
(:func:`conflict_eval.scorers.conflictscore.detection.decide`). The labeller is
the model being evaluated (it is what ConflictBench measures), unless a
``grader`` model role is given. A grader reply is read by
:func:`conflictscore.parse.parse_label` (last verdict; total on any text), or
``parse_label_list`` with ``labelling=all_docs`` (a reply that is not a list
fails every document of the claim). The scorer is
:func:`conflict_eval.scorers.conflictscore.detection.conflict_detection`
(Table 2 metrics).
"""

from __future__ import annotations

from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.scorers.conflictscore.detection import UNDETERMINED, decide
from conflict_eval.scorers.conflictscore.pipeline import (
    ONE_CLAIM,
    Backend,
    Labelling,
    Options,
    conflict_score,
    takes_options,
)
from conflict_eval.scorers.conflictscore.scorer import documents_of

FIXED = ("claims", "k")
"""Options the detector does not take: the claim is the input, one claim."""


@solver
@takes_options(ONE_CLAIM, without=FIXED)
def detect_conflict(backend: Backend = ONE_CLAIM.backend, nli_model: str | None = ONE_CLAIM.nli_model,
                    labelling: Labelling = ONE_CLAIM.labelling,
                    grader_max_tokens: int | None = ONE_CLAIM.grader_max_tokens,
                    grader_dedupe: bool = ONE_CLAIM.grader_dedupe,
                    judge_repeats: int = ONE_CLAIM.judge_repeats,
                    judge_swap: bool = ONE_CLAIM.judge_swap,
                    judge_temperature: float = ONE_CLAIM.judge_temperature) -> Solver:
    """Label the claim against every document; answer Conflict / No Conflict
    (the input is the claim: ``claims="whole"``, :data:`FIXED`; the other
    options and their defaults are the ``conflictscore`` metric's, the
    ``judge_*`` ones for its judge panel)."""
    opts = Options.of(locals(), ONE_CLAIM)

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
