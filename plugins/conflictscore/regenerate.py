"""ConflictScore feedback regeneration as a reusable solver wrapper (§6).

``conflict_regenerate(inner)`` runs any solver, scores its answer with
ConflictScore against the sample's documents, and -- when some claim has
both supporting and contradicting documents -- feeds the most conflicted
claim and its evidence back (Table 14 prompt) and regenerates. What happened
is kept in ``state.store_as(RegenerationStore)`` (``scorers/conflictscore/stores.py``,
read by the ``truthfulqa_settings`` scorer) and in the transcript. The Table 14
prompt is in :mod:`.prompts`; the metric (decomposition, labelling, panel) is
``scorers/conflictscore``.

Choices (see README):

* **What is scored.** For a multiple-choice answer the response scored is
  the text of the chosen option (a bare letter has no claims); for free-form
  answers, the reply itself. An unparseable choice is not scored (no
  regeneration) and is recorded.
* **Which claim is fed back.** :func:`~conflict_eval.scorers.conflictscore.metrics.most_conflicted`: the
  conflicted claim closest to an even support/contradict split.
* **``{conflict_details}``**: lines naming the supporting and contradicting
  document numbers with each one's snippet (the paper does not show its
  format).
* Table 14 is written for binary choice; with more options we list one
  ``- X – option`` line per option, and free-form items use
  :data:`FREE_FORM_TEMPLATE`, our adaptation.
* **The regenerated choice** is read by
  :func:`~conflict_eval.scorers.conflictscore.parse.parse_table14_choice` (``B – The placenta``, dash/colon/
  period/paren variants, lowercase, bold, preambles); an unreadable reply is
  recorded in ``regeneration_parse_failure`` and scored wrong.
* **Unreadable grader replies never hide a conflict.** A claim whose
  failed cells (grader replies that could not be read) could make it
  conflicted (``metrics.conflict_bounds`` worst case, ``scorers/conflictscore/metrics.py``) is *possibly*
  conflicted: when no claim is conflicted on its labelled cells but one is
  possibly conflicted, the answer is regenerated all the same, with
  ``flagged`` and ``flag_undetermined`` set and the unreadable documents
  named in the feedback (``UNDETERMINED DOCUMENTS``); a scorer then takes
  the worse of the kept and the regenerated answer (the flag depends on
  what the grader could not say). ``claims_undetermined`` counts the
  claims with a failed cell. An answer whose claims were all labelled, or
  whose failed cells cannot make any claim conflicted, is handled as
  before.
* **Undefined scores**: when ConflictScore is undefined for the answer
  (failed decomposition, or no label parsed and no claim that could be
  conflicted), nothing is fed back; ``cs_c``/``cs_r`` stay ``None`` in the
  store and the reason is in ``conflict["undefined_reason"]``.
"""

from __future__ import annotations

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.answers.failures import generate_checked
from conflict_eval.records import LETTERS
from conflict_eval.scorers.conflictscore import metrics
from conflict_eval.scorers.conflictscore.parse import parse_rag_choice, parse_table14_choice
from conflict_eval.scorers.conflictscore.pipeline import (
    ONE_CLAIM, Backend, ClaimMode, ConflictResult, Labelling, Options, conflict_score, takes_options)
from conflict_eval.scorers.conflictscore.scorer import documents_of
from conflict_eval.scorers.conflictscore.stores import RegenerationStore

from .prompts import FREE_FORM_TEMPLATE, REGENERATE_TEMPLATE, context_text

def conflict_details(result: ConflictResult, claim: int) -> str:
    lines = []
    for label, name in (("SUPPORTS", "SUPPORTING"), ("CONTRADICTS", "CONTRADICTING")):
        cells = [c for c in result.cells if c.claim == claim and c.label == label]
        lines.append(f"{name} DOCUMENTS: " + ", ".join(f"Doc {c.document + 1}" for c in cells))
        lines += [f"- Doc {c.document + 1}: {c.snippet}" for c in cells if c.snippet]
    failed = [j for j, x in enumerate(result.matrix[claim]) if x is None]
    if failed:
        lines.append("UNDETERMINED DOCUMENTS (no readable label): " + ", ".join(f"Doc {j + 1}" for j in failed))
    return "\n".join(lines)


def possibly_conflicted(matrix: metrics.Matrix) -> int | None:
    """A claim that is not conflicted on its labelled cells but would be with
    some labelling of its failed cells (the one with the most labelled
    documents, then the earliest), or ``None``."""
    best, key = None, None
    for i, row in enumerate(matrix):
        if metrics.conflict_bounds(row)[1] and not metrics.is_conflicted(row):
            k = (metrics.failed_cells(row), i)
            if key is None or k < key:
                best, key = i, k
    return best


def _option_lines(options: list[str]) -> str:
    return "\n".join(f"- {LETTERS[i]} – {o}" for i, o in enumerate(options))


def regeneration_prompt(question: str, documents: list[str], original: str, result: ConflictResult,
                        claim: int, options: list[str]) -> str:
    values = {
        "question": question, "context_text": context_text(documents), "original_response": original,
        "selected_claim": result.claims[claim], "conflict_details": conflict_details(result, claim),
        "option_lines": _option_lines(options),
    }
    template = REGENERATE_TEMPLATE if options else FREE_FORM_TEMPLATE
    out = template
    # fill field by field with replace (not str.format): document and answer
    # text may hold braces; values are inserted last-to-first in the prompt
    # order so no inserted text is scanned for a later placeholder
    for key in ("option_lines", "conflict_details", "selected_claim", "original_response", "context_text", "question"):
        out = out.replace("{" + key + "}", values[key])
    return out


@solver
@takes_options(ONE_CLAIM)
def conflict_regenerate(
    inner: Solver,
    claims: ClaimMode = ONE_CLAIM.claims,
    k: int = ONE_CLAIM.k,
    labelling: Labelling = ONE_CLAIM.labelling,
    backend: Backend = ONE_CLAIM.backend,
    nli_model: str | None = ONE_CLAIM.nli_model,
    grader_max_tokens: int | None = ONE_CLAIM.grader_max_tokens,
    grader_dedupe: bool = ONE_CLAIM.grader_dedupe,
    max_tokens: int | None = None,
    judge_repeats: int = ONE_CLAIM.judge_repeats,
    judge_swap: bool = ONE_CLAIM.judge_swap,
    judge_temperature: float = ONE_CLAIM.judge_temperature,
) -> Solver:
    """Run ``inner``; if ConflictScore flags its answer, regenerate once with
    the Table 14 feedback prompt (the evaluated model answers; the
    ``grader`` role, if given, scores).

    ``claims`` to ``grader_dedupe`` are the ``conflictscore`` metric's options
    with its defaults, except ``claims="whole"`` (:data:`.pipeline.ONE_CLAIM`): a multiple-choice answer is
    scored as the text of the chosen option, a single claim. The cells are
    labelled by the judge panel (``grader``, ``grader_2``, ... roles; see
    ``scorers/conflictscore/panel.py``), and ``judge_*`` are its stability options."""
    opts = Options.of(locals())

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state = await inner(state, generate)
        store = state.store_as(RegenerationStore)
        original = state.output.completion
        store.original_response = original
        options = [c.value for c in state.choices] if len(state.choices) else []
        response = original
        if options:
            parsed = parse_rag_choice(original, options)
            if not parsed.ok:
                store.not_scored_reason = f"original choice unparseable: {parsed.reason}"
                transcript().info(f"conflict_regenerate: {store.not_scored_reason}")
                return state
            store.original_letter = parsed.letter
            response = options[parsed.index]
        store.scored_response = response
        documents = documents_of(state)
        from conflict_eval.scorers.conflictscore.panel import resolve_panel

        result = await conflict_score(response, documents, opts, judges=resolve_panel() if opts.needs_llm else None)
        store.cs_c, store.cs_r = result.cs_c, result.cs_r
        store.conflict = result.metadata()
        store.claims_undetermined = metrics.undetermined_claims(result.matrix)
        claim = metrics.most_conflicted(result.matrix)
        if claim is None:
            claim = possibly_conflicted(result.matrix)
            store.flag_undetermined = claim is not None
        if claim is None:
            transcript().info(f"conflict_regenerate: no conflicted claim (CS-C={result.cs_c}); answer kept")
            return state
        store.flagged = True
        store.selected_claim = result.claims[claim]
        prompt = regeneration_prompt(state.input_text, documents, original, result, claim, options)
        out = await generate_checked(get_model(), [ChatMessageUser(content=prompt)], "the regeneration",
                                     config=GenerateConfig(max_tokens=max_tokens) if max_tokens else GenerateConfig())
        store.regenerated_response = out.completion
        if options:
            parsed = parse_table14_choice(out.completion, options)
            store.regenerated_letter = parsed.letter
            if not parsed.ok:
                store.regeneration_parse_failure = parsed.reason
        state.messages.append(ChatMessageUser(content=prompt))
        state.messages.append(out.message)
        state.output = out
        transcript().info(f"conflict_regenerate: claim {store.selected_claim!r} "
                          f"{'possibly conflicted (unreadable grader replies)' if store.flag_undetermined else 'flagged'}"
                          "; regenerated")
        return state

    return solve
