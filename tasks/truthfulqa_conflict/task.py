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
``scorers/conflictscore/truthfulqa.py``; the solvers in ``plugins/conflictscore/``;
the data, the ``truthfulqa_binary`` dataset (``plugins/truthfulqa/``), is
looked up in the registry.

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

from dataclasses import asdict

from inspect_ai import Task, task

from conflict_eval.components.endpoint import active_endpoint
from conflict_eval.components.catalog import dataset_record
from conflict_eval.components.manager import get_dataset
from conflict_eval.scorers.conflictscore.pipeline import ONE_CLAIM, Backend, ClaimMode, Labelling, Options, takes_options
from conflict_eval.scorers.conflictscore.truthfulqa import truthfulqa_settings

#: This task's ConflictScore options: the metric's defaults, except
#: ``claims="whole"`` (``pipeline.ONE_CLAIM``). What is scored is the text of the chosen option (a
#: bare letter has no claims), a short phrase that is one claim: splitting it
#: into atomic claims would cost a grader call to get the same claim back
#: (see README). ``k`` (salient claims) is not a task option here: this
#: task's ``-T k`` is the number of retrieved documents.
CONFLICTSCORE = ONE_CLAIM


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
        background: extra corpus files (see ``build_corpus`` in ``plugins/truthfulqa/dataset.py``).
        corpus: a separate retrieval corpus instead of the file's statements:
            an index directory (``conflict-eval index build``), a corpus file or
            a search server (``es+http://...``, ``colbert+http://...``).
        statements: the file's answer-key statements in the corpus: ``others``
            (default without ``corpus``: other questions' statements, never the
            question's own), ``all`` (the earlier behaviour: own answer key
            included), ``none`` (default with ``corpus``).
        documents: per-question search results saved from a search API
            (JSONL, see ``search_results_file`` in ``plugins/truthfulqa/dataset.py``), used as each
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
    from conflict_eval.plugins.conflictscore.regenerate import conflict_regenerate
    from conflict_eval.plugins.conflictscore.solver import control_rag_answer, rag_answer

    if not path:
        from conflict_eval.records import DataNeeded

        raise DataNeeded("truthfulqa_conflict", "required", "a TruthfulQA binary-choice JSONL file")
    options = Options.of(locals(), CONFLICTSCORE, without={"k"})
    samples = get_dataset("truthfulqa_binary").factory(
        path=path, background=background, corpus=corpus, statements=statements, documents=documents,
        retriever=retriever, k=k, seed=seed)
    provenance = samples.provenance
    return Task(
        dataset=samples,
        solver=[conflict_regenerate(rag_answer(), **asdict(options)), control_rag_answer()],
        scorer=truthfulqa_settings(),
        headline_metric="truthfulqa_settings.regenerated_rag",  # ConflictScore Tables 4-5: Regenerated-RAG accuracy
        name="truthfulqa_conflict",
        metadata={"conflict_eval_endpoint": active_endpoint(),  # the endpoint, as run
                  "retrieval": provenance["retrieval"], "dropped_records": provenance["dropped_records"],
                  "dropped_total": provenance["dropped_total"],
                  "conflict_eval_provenance": {"dataset": dataset_record("truthfulqa_conflict", samples, path)}},
    )
