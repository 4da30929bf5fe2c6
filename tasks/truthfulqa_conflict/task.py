"""``conflict_eval/truthfulqa_conflict``: ConflictScore feedback on TruthfulQA
binary choice (ConflictScore §6, Tables 4-5, prompts Tables 12-14).

    inspect eval conflict_eval/truthfulqa_conflict --model conflict_eval/smollm2 \\
        -T path=../shared/data/truthfulqa_binary/sample.jsonl \\
        -T background='[../shared/data/hotpotqa_ircot/sample.jsonl, ../shared/data/crag_example/sample.jsonl]' \\
        --limit 2 --max-tokens 64

Per sample, three settings on the same retrieved documents:

* **RAG** (Table 12): one answer;
* **Regenerated-RAG**: the RAG answer is scored by ConflictScore (with the
  ``grader`` role, else the evaluated model -- the paper uses the same model)
  and, if a claim is conflicted, regenerated with the Table 14 feedback
  (:func:`conflict_regenerate`); otherwise the RAG answer stands;
* **Control-RAG** (Table 13): one conflict-aware answer, no ConflictScore.

Reported: accuracy per setting (Table 4) and, on the items ConflictScore
flags, original wrong / correct counts, improve rate, harm rate and net
improvement (Table 5). Failure rules: an unparseable answer (RAG, Control-RAG,
or the Table 14 reply, read by ``parse_table14_choice``) is wrong and
counted; an answer that names no option and refuses ("I cannot determine
...", :mod:`conflict_eval.answers.refusal`) is wrong and counted as a refusal
(``*_refusal``), not a parse failure; an answer whose ConflictScore is
undefined (no grader label parsed) is counted in ``cs_undefined``;
``label_coverage`` pools labelled / all (claim, document) pairs.

An unreadable grader reply never hides a conflict: an answer whose claim
could be conflicted under some labelling of its unreadable cells is
flagged and regenerated (``flagged_undetermined``, total), Regenerated-RAG
scores the worse of the kept and the regenerated answer, and the effect
metrics are their worst case over which such answers belong to the flagged
set (``improve_harm_worst``; ``effect`` also reports
``flagged_undetermined``). ``claims_undetermined`` (total) counts the claims
with an unreadable grader reply. So a grader unreadable on some cells never
raises an accuracy, improve rate or net improvement, nor lowers ``flagged``
or the harm rate, against what a readable grader gives.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, replace

from inspect_ai import Task, task
from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, mean, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel

from conflict_eval.components.endpoint import active_endpoint
from conflict_eval.answers.failures import generate_checked, generate_state
from conflict_eval.components.catalog import dataset_record
from conflict_eval.records import LETTERS, ConflictQA
from conflict_eval.scorers.conflictscore.parse import parse_rag_choice
from conflict_eval.scorers.conflictscore.pipeline import DEFAULTS
from conflict_eval.scorers.conflictscore.panel import judge_panel
from conflict_eval.scorers.conflictscore.scorer import pooled_coverage, total

from .prompts import CONTROL_RAG_TEMPLATE, RAG_TEMPLATE, fill

logger = logging.getLogger(__name__)

#: This task's ConflictScore options: the metric's defaults, except
#: ``claims="whole"``. What is scored is the text of the chosen option (a
#: bare letter has no claims), a short phrase that is one claim: splitting it
#: into atomic claims would cost a grader call to get the same claim back
#: (see README). ``k`` (salient claims) is not a task option here: this
#: task's ``-T k`` is the number of retrieved documents.
CONFLICTSCORE = replace(DEFAULTS, claims="whole")


class ControlStore(StoreModel):
    reply: str = ""


def _prompt(template: str, state: TaskState) -> str:
    from conflict_eval.scorers.conflictscore.regenerate import context_text

    record = state.metadata_as(ConflictQA)
    if len(record.options) != 2:
        raise ValueError(f"truthfulqa_conflict: sample {record.id} needs exactly 2 options")
    return fill(template, context_text([p.text for p in record.evidence]), record.question, *record.options)


@solver
def rag_answer() -> Solver:
    """Table 12: answer (A) or (B) from the retrieved documents."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages = [ChatMessageUser(content=_prompt(RAG_TEMPLATE, state))]
        return await generate_state(generate, state, "the RAG answer")

    return solve


@solver
def control_rag_answer() -> Solver:
    """Table 13, as a separate call whose reply goes to ``ControlStore`` (the
    final output stays the Regenerated-RAG answer)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        out = await generate_checked(get_model(), [ChatMessageUser(content=_prompt(CONTROL_RAG_TEMPLATE, state))],
                                     "the Control-RAG answer")
        state.store_as(ControlStore).reply = out.completion
        return state

    return solve


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
    from conflict_eval.scorers.conflictscore.regenerate import RegenerationStore

    from .dataset import key_entity, mentions

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


@task
def truthfulqa_conflict(
    path: str | None = None,
    background: list[str] | None = None,
    corpus: str | None = None,
    statements: str | None = None,
    documents: str | None = None,
    retriever: str = "bm25",
    k: int = 10,
    seed: int = 0,
    claims: str = CONFLICTSCORE.claims,
    labelling: str = CONFLICTSCORE.labelling,
    backend: str = CONFLICTSCORE.backend,
    nli_model: str | None = CONFLICTSCORE.nli_model,
    grader_max_tokens: int | None = CONFLICTSCORE.grader_max_tokens,
    judge_repeats: int = CONFLICTSCORE.judge_repeats,
    judge_swap: bool = CONFLICTSCORE.judge_swap,
    judge_temperature: float = CONFLICTSCORE.judge_temperature,
) -> Task:
    """TruthfulQA RAG / Control-RAG / Regenerated-RAG.

    Args:
        path: TruthfulQA binary-choice file (JSONL rows of the Jan-2025 CSV);
            required (e.g. ``../shared/data/truthfulqa_binary/sample.jsonl``).
        background: extra corpus files (see ``dataset.build_corpus``).
        corpus: a separate retrieval corpus instead of the file's statements:
            an index directory (``conflict-eval index build``), a corpus file or
            a search server (``es+http://...``, ``colbert+http://...``).
        statements: the file's answer-key statements in the corpus: ``others``
            (default without ``corpus``: other questions' statements, never the
            question's own), ``all`` (the earlier behaviour: own answer key
            included), ``none`` (default with ``corpus``).
        documents: per-question search results saved from a search API
            (JSONL, see ``dataset.search_results_file``), used as each
            question's documents (the paper's setting is the top 10 Google
            results); questions without a record are left out and counted.
        retriever: ``bm25`` or ``dense`` (``conflict_eval.retrieval``).
        k: documents per question (the paper: top 10).
        seed: A/B order seed.
        claims, labelling, backend, nli_model, grader_max_tokens: ConflictScore
            options, defaults :data:`CONFLICTSCORE` (the metric's, but
            ``claims=whole``: the chosen option is one claim).
        judge_repeats, judge_swap, judge_temperature: judge stability of the
            ConflictScore panel (``grader``, ``grader_2``, ... roles; see
            ``scorers/conflictscore/panel.py``); the ``judge_panel`` metric
            (on ``flagged``) reports alpha, agreement, self-agreement, flips.
    """
    from conflict_eval.records import build_dataset
    from conflict_eval.scorers.conflictscore.regenerate import conflict_regenerate

    from .dataset import (
        STATEMENTS,
        _norm_question,
        build_corpus,
        key_entity_counts,
        retrieve,
        retrieve_from,
        search_results_file,
        truthfulqa_records,
    )

    if not path:
        from conflict_eval.records import DataNeeded

        raise DataNeeded("truthfulqa_conflict", "required", "a TruthfulQA binary-choice JSONL file")
    options = replace(CONFLICTSCORE, claims=claims, labelling=labelling, backend=backend, nli_model=nli_model,
                      grader_max_tokens=grader_max_tokens, judge_repeats=judge_repeats, judge_swap=judge_swap,
                      judge_temperature=judge_temperature)
    if isinstance(background, str):
        background = [background]
    if documents and (corpus or background or statements):
        raise ValueError("documents= gives each question its own documents: it cannot be combined with "
                         "corpus=, background= or statements=")
    statements = statements or ("none" if corpus or documents else "others")
    if statements not in STATEMENTS:
        raise ValueError(f"statements={statements!r}; expected one of {', '.join(STATEMENTS)}")
    if corpus and (statements != "none" or background):
        raise ValueError("corpus= is a separate corpus: it cannot be combined with background= or "
                         "statements=others|all (index the statements into it instead)")
    records = truthfulqa_records(path, seed=seed)
    questions = [r.question for r in records]
    dropped: dict[str, int] = {}
    if documents:
        saved = search_results_file(documents, k)
        found = {q: saved[_norm_question(q)] for q in questions if _norm_question(q) in saved}
        if not found:
            raise ValueError(f"truthfulqa_conflict: no question of {path} has a record in documents={documents} "
                             "(the 'question' field must be the TruthfulQA Question)")
        if len(found) < len(questions):
            dropped["no record in the documents file"] = len(questions) - len(found)
            logger.warning("truthfulqa_conflict: %d question(s) of %s have no record in %s: left out",
                           len(questions) - len(found), path, documents)
        unused = len(saved) - len({_norm_question(q) for q in found})
        by_question = found
        retrieval = _retrieval_block(documents, None, statements, retriever, path, search_file=True,
                                     unmatched_records=unused)
    elif corpus:
        by_question = retrieve_from(questions, corpus, k, retriever)
        retrieval = _retrieval_block(corpus, None, statements, retriever, path)
    else:
        docs = build_corpus(path, background, statements)
        by_question = retrieve(questions, docs, retriever, k, exclude_own=statements == "others")
        retrieval = _retrieval_block(background, docs, statements, retriever, path)
    retrieval["key_entity_mentions"] = key_entity_counts(by_question)
    records = truthfulqa_records(path, by_question, seed=seed)
    if documents:
        records = [r for r in records if r.question in by_question]
    samples = build_dataset("truthfulqa_conflict", records, location=str(path))
    return Task(
        dataset=samples,
        solver=[conflict_regenerate(rag_answer(), **asdict(options)), control_rag_answer()],
        scorer=truthfulqa_settings(),
        name="truthfulqa_conflict",
        metadata={"conflict_eval_endpoint": active_endpoint(),  # the endpoint, as run
                  "retrieval": retrieval, "dropped_records": dropped, "dropped_total": sum(dropped.values()),
                  "conflict_eval_provenance": {"dataset": dataset_record("truthfulqa_conflict", samples, path)}},
    )


#: The log's note for each setting: what the documents are, and that only
#: per-question web search results resemble the paper's setting.
PAPER_SETTING = ("The paper supplies the top 10 Google Search results per question (ConflictScore §6); ")
NOTES = {
    "others": PAPER_SETTING + "this offline default is NOT that setting: documents are retrieved from the "
              "answer-key statements of the OTHER questions in the evaluated file (each question's own "
              "statements excluded) plus any background passages, so they are often off-topic (see "
              "key_entity_mentions) and scores are not comparable with Tables 4-5.",
    "all": PAPER_SETTING + "this is NOT that setting: documents are retrieved from every answer-key statement "
           "of the evaluated file, the question's OWN statements included (its Best Answer can be retrieved "
           "verbatim), plus any background passages; scores are not comparable with Tables 4-5.",
    "none": PAPER_SETTING + "this is NOT that setting: documents are retrieved from a separate corpus (or only "
            "background passages) with no answer-key statements; scores are not comparable with Tables 4-5 "
            "unless that corpus holds per-question web results.",
    "search_file": PAPER_SETTING + "here each question's documents are the saved search results of "
                   "-T documents= (the first k per question); they match the paper's setting only if they "
                   "are the top 10 Google results.",
}


def _retrieval_block(spec, docs: list[dict] | None, statements: str, retriever: str, path: str,
                     search_file: bool = False, **extra) -> dict:
    """The ``retrieval`` eval-metadata block of this task (with a ``note``
    that matches the setting)."""
    from conflict_eval.retrieval import describe_source, open_corpus, retrieval_block

    answer_key = {"others": "other questions' statements only (own answer key excluded)",
                  "all": "every statement, the question's own answer key included",
                  "none": "no answer-key statements"}[statements]
    note = NOTES["search_file" if search_file else statements]
    if search_file:
        desc = {"corpus": str(spec), "passages": None, "backend": "per-question search results file"}
        return retrieval_block({"documents": desc}, {"documents": False}, dataset_files=[str(path)],
                               answer_key_statements=statements, answer_key=answer_key, note=note, **extra)
    if docs is None:
        desc = describe_source(open_corpus(spec, retriever))
    else:
        files = [str(path)] + [str(b) for b in spec or []]
        desc = {"corpus": ", ".join(files), "passages": len(docs), "backend": f"{retriever} (in memory)",
                "statement_documents": sum(1 for d in docs if d["source"] == "truthfulqa_statement")}
    return retrieval_block({"documents": desc}, {"documents": statements != "none"},
                           specs={"documents": spec if docs is None else None}, dataset_files=[str(path)],
                           answer_key_statements=statements, answer_key=answer_key, note=note, **extra)
