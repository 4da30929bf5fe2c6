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
The scorer (``truthfulqa_settings``) and these rules are in
``scorers/conflictscore/truthfulqa.py``.

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
from dataclasses import asdict

from inspect_ai import Task, task
from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from conflict_eval.components.endpoint import active_endpoint
from conflict_eval.answers.failures import generate_checked, generate_state
from conflict_eval.components.catalog import dataset_record
from conflict_eval.records import ConflictQA
from conflict_eval.scorers.conflictscore.pipeline import ONE_CLAIM, Backend, ClaimMode, Labelling, Options, takes_options
from conflict_eval.scorers.conflictscore.truthfulqa import ControlStore, truthfulqa_settings

from .prompts import CONTROL_RAG_TEMPLATE, RAG_TEMPLATE, fill

logger = logging.getLogger(__name__)

#: This task's ConflictScore options: the metric's defaults, except
#: ``claims="whole"`` (``pipeline.ONE_CLAIM``). What is scored is the text of the chosen option (a
#: bare letter has no claims), a short phrase that is one claim: splitting it
#: into atomic claims would cost a grader call to get the same claim back
#: (see README). ``k`` (salient claims) is not a task option here: this
#: task's ``-T k`` is the number of retrieved documents.
CONFLICTSCORE = ONE_CLAIM


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


@task
@takes_options(CONFLICTSCORE, without={"k"})  # this task's k is the number of documents
def truthfulqa_conflict(
    path: str | None = None,
    background: list[str] | None = None,
    corpus: str | None = None,
    statements: str | None = None,
    documents: str | None = None,
    retriever: str = "bm25",
    k: int = 10,
    seed: int = 0,
    claims: ClaimMode = CONFLICTSCORE.claims,
    labelling: Labelling = CONFLICTSCORE.labelling,
    backend: Backend = CONFLICTSCORE.backend,
    nli_model: str | None = CONFLICTSCORE.nli_model,
    grader_max_tokens: int | None = CONFLICTSCORE.grader_max_tokens,
    grader_dedupe: bool = CONFLICTSCORE.grader_dedupe,
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
        claims, labelling, backend, nli_model, grader_max_tokens,
            grader_dedupe: ConflictScore options, defaults :data:`CONFLICTSCORE`
            (the metric's, but ``claims=whole``: the chosen option is one claim).
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
    options = Options.of(locals(), CONFLICTSCORE, without={"k"})
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
        headline_metric="truthfulqa_settings.regenerated_rag",  # ConflictScore Tables 4-5: Regenerated-RAG accuracy
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
