"""AtomR and its baselines as Inspect solvers.

``atomr``: plan an Atomic Reasoning Tree (Figure 5 with the authors'
per-dataset examples; 512 tokens, 768 when truncated) or, with
``plans=FILE``, take the recorded plan for the question (``plan_source``
``replayed``); parse it (:mod:`.parse`: a node that cannot be read degrades
to Direct RAG on its own question, recorded in ``AtomRStore.degraded``); run
it (:class:`~.executor.Executor`, Algorithm 1); when the plan is not a tree
at all, Direct RAG on the root question (``planner_fallback``). Every call's
budget is capped by ``--max-tokens``. The prediction (``state.output.completion``) is the root's answer
list joined with ``", "``. The whole run is in ``state.store_as(AtomRStore)``.

Baselines (§4.1.3): ``atomr_standard`` and ``atomr_cot`` (closed book,
two-shot), ``atomr_standard_rag`` (one-time retrieval with the question from
every enabled source, then the Figure 9 prompt).

Knowledge sources are registered plugins (``conflict_eval_register_sources``);
``sources="text,kg,web"`` picks them. Their files default to the record's
``extra["source_files"]`` (see :mod:`.dataset`); ``text_corpus``,
``kg_triples``, ``web_pages`` override, ``web_api=True`` uses the live search API.
"""

from __future__ import annotations

import inspect
import json
from typing import Any

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageUser, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel
from pydantic import Field

from conflict_eval.answers.failures import generate_checked
from conflict_eval.records import ConflictQA

from . import prompts
from .executor import Budgets, Executor
from .parse import parse_answer, try_parse_tree

SOURCE_NAMES = ("text", "kg", "web")


class AtomRStore(StoreModel):
    """What AtomR did for one sample."""

    plan_reply: str = ""
    plan_error: str | None = None
    planner_fallback: bool = False
    """True when the plan was not a tree and the root was answered by Direct RAG."""
    plan_source: str = "planned"
    """``planned`` (the planner was called) or ``replayed`` (``plans=FILE``)."""
    tree_format: str = ""
    tree_warnings: list[str] = Field(default_factory=list)
    degraded: list[dict[str, Any]] = Field(default_factory=list)
    """Nodes answered by Direct RAG because they could not run as planned (with the reason)."""
    retrieval_errors: int = 0
    """Knowledge-source failures; one fails the sample (see ``executor.RetrievalError``)."""
    tree: list[dict[str, Any]] = Field(default_factory=list)
    """Node records in post-order (operator, sources, passages, reply, answer)."""
    llm_calls: dict[str, int] = Field(default_factory=dict)
    truncation_retries: dict[str, int] = Field(default_factory=dict)
    """Calls retried with the larger budget after a cut-off reply, by step (also marked on the node)."""
    reused_replies: dict[str, int] = Field(default_factory=dict)
    """Calls not sent because a byte-identical prompt was already answered in the sample, by step."""
    retriever_calls: dict[str, int] = Field(default_factory=dict)
    parse_failures: dict[str, int] = Field(default_factory=dict)
    answer_list: list[str] = Field(default_factory=list)
    paraphrase: str = ""


def as_names(value: str | list | tuple | None, option: str) -> list[str]:
    """A multi-valued option as a list: ``"text,kg"`` (Python, ``-T`` with
    quotes) or ``["text", "kg"]`` (Inspect's CLI turns ``-T sources=text,kg``
    into a list). Blank items are dropped; ``None`` is ``[]``.

    >>> as_names("text, kg", "sources"), as_names(["text", "kg"], "sources")
    (['text', 'kg'], ['text', 'kg'])
    """
    if value is None:
        return []
    if isinstance(value, str):
        items = value.split(",")
    elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        items = [part for v in value for part in v.split(",")]
    else:
        raise ValueError(f"{option}={value!r}: expected comma-separated names or a list of names")
    return [x.strip() for x in items if x.strip()]


def _check_sources(sources: str | list[str]) -> list[str]:
    from conflict_eval.components.manager import components

    names = as_names(sources, "sources")
    known = components()["source"]
    bad = [n for n in names if n not in known]
    if not names or bad:
        raise ValueError(f"sources={sources!r}: unknown source(s) {bad or '(none given)'}; "
                         f"installed: {', '.join(known) or 'none'}")
    if len(set(names)) != len(names):
        raise ValueError(f"sources={sources!r} names a source twice")
    return names


def build_sources(names: list[str], record: ConflictQA, *, text_corpus: str | None = None,
                  kg_triples: str | None = None, web_pages: str | None = None,
                  web_api: bool = False, retriever: str = "bm25") -> dict[str, Any]:
    """The knowledge sources ``names``, built (once per process) by their plugins."""
    from conflict_eval.components.manager import get_source

    files = record.extra.get("source_files") or {}
    pool = {"corpus": text_corpus or files.get("text"), "retriever": retriever,
            "triples": kg_triples or files.get("kg"), "pages": web_pages or files.get("web"),
            "api": web_api}
    out = {}
    for name in names:
        factory = get_source(name).factory
        params = inspect.signature(factory).parameters
        out[name] = factory(**{k: v for k, v in pool.items() if k in params})
    return out


def _validate(k: int, threshold: float, retriever: str) -> None:
    if not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if not 0.0 <= float(threshold) <= 1.0:
        raise ValueError(f"threshold must be in [0, 1], got {threshold!r}")
    if retriever not in ("bm25", "dense"):
        raise ValueError(f"retriever must be bm25 or dense, got {retriever!r}")


def _question_key(question: str) -> str:
    return " ".join(str(question).casefold().split())


def load_plans(path: str) -> dict[str, Any]:
    """Plans to replay, keyed by normalised question text.

    ``path`` is a JSONL file of ``{"question": ..., "reasoning_tree": ...}``
    (the authors' released ``*_trees.jsonl`` as is; other fields are
    ignored), or a JSON object mapping question text to its tree, or a JSON
    list of such records. A tree is the decoded object or the planner's
    text. Errors name the file, line and field."""
    from pathlib import Path

    f = Path(path)
    if not f.is_file():
        raise ValueError(f"plans={path!r}: no such file")
    text = f.read_text(encoding="utf-8-sig")
    if not text.strip():
        raise ValueError(f"plans={path!r}: the file is empty")
    rows: list[tuple[str, Any]] = []
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and "question" not in whole and "reasoning_tree" not in whole:
        return {_question_key(q): t for q, t in whole.items()}
    if isinstance(whole, (dict, list)):
        records = [(f"record {i + 1}", r) for i, r in enumerate(whole if isinstance(whole, list) else [whole])]
    else:
        records = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append((f"line {n}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise ValueError(f"plans={path!r} line {n}: not JSON ({exc.msg})") from None
    for where, r in records:
        if not isinstance(r, dict):
            raise ValueError(f"plans={path!r} {where}: not a JSON object")
        for key in ("question", "reasoning_tree"):
            if key not in r:
                raise ValueError(f"plans={path!r} {where}: missing field {key!r}")
        if not isinstance(r["question"], str) or not r["question"].strip():
            raise ValueError(f"plans={path!r} {where}: field 'question' must be non-empty text")
        rows.append((r["question"], r["reasoning_tree"]))
    return {_question_key(q): t for q, t in rows}


def max_tokens_cap(model) -> int | None:
    """The eval's ``--max-tokens`` (Inspect puts it in the model's config), or None.

    A task's own ``GenerateConfig`` (e.g. ``conflict_eval/run``'s 512-token
    default) does not cap AtomR's per-call budgets: only the public
    ``model.config`` is read (Inspect offers no public accessor for the
    task-level config)."""
    config = getattr(model, "config", None)
    return config.max_tokens if config is not None and config.max_tokens else None


def _finish(state: TaskState, model, prediction: str) -> None:
    state.output = ModelOutput.from_content(str(model), prediction)
    state.messages.append(state.output.message)


async def _plan_and_run(ex: Executor, store: AtomRStore, record: ConflictQA, prompt: str,
                        plan: Any, budgets: Budgets):
    """Plan (or replay ``plan``), parse, execute; Direct RAG on the root when the plan is not a tree."""
    if plan is not None:
        store.plan_source = "replayed"
        store.plan_reply = plan if isinstance(plan, str) else json.dumps(plan, ensure_ascii=False)
    else:
        plan = store.plan_reply = await ex.llm("planning", prompt, budgets.tree, budgets.tree_retry)
    tree, error = try_parse_tree(plan)
    if tree is None:
        store.plan_error = error
        store.planner_fallback = True
        ex.parse_failures["planning"] += 1
        transcript().info({"planning_failed": error, "fallback": "direct_rag on the root"})
        answer, rec = await ex.direct_rag(record.question)
        ex.records.append({"index": 0, "question": record.question, "kind": "direct_rag_root",
                           **rec, "final_answer": answer.answers})
        return answer
    store.tree_format = tree.format
    store.tree_warnings = tree.warnings + ([tree.repaired] if tree.repaired else [])
    try:
        return await ex.run(tree)
    finally:
        store.degraded = ex.degraded
        if ex.degraded:
            ex.parse_failures["degraded_nodes"] = len(ex.degraded)


@solver
def atomr(
    sources: str | list[str] = "text",
    examples: str = "hotpotqa",
    k: int = 3,
    threshold: float = 0.5,
    retriever: str = "bm25",
    text_corpus: str | None = None,
    kg_triples: str | None = None,
    web_pages: str | None = None,
    web_api: bool = False,
    tree_tokens: int = 512,
    tree_retry_tokens: int = 768,
    operator_tokens: int = 256,
    operator_retry_tokens: int = 512,
    selection_tokens: int = 64,
    plans: str | None = None,
) -> Solver:
    """AtomR: atomic reasoning tree planning and post-order execution.

    Args:
        sources: knowledge sources (``text``, ``kg``, ``web``), comma-separated
            or a list; Table 4's ablation is e.g. ``-T sources=text,web``.
        examples: which few-shot tree examples to show (``hotpotqa``, ``2wiki``,
            ``musique``, ``crag``, ``blendqa``).
        k: passages per source and query (top 3 in the paper).
        threshold: Filter's overlap-coefficient threshold t (0.5).
        retriever: ``bm25`` or ``dense`` for the text source.
        text_corpus, kg_triples, web_pages: source files (default: the record's).
        web_api: use the live web search API (environment variables) for ``web``.
        tree_tokens, tree_retry_tokens, operator_tokens, operator_retry_tokens,
            selection_tokens: output budgets (§4.1.4); ``--max-tokens`` caps each.
        plans: replay these plans instead of calling the planner (see
            :func:`load_plans`); a sample whose question has a plan records
            ``plan_source="replayed"``; others are planned as usual.
    """
    names = _check_sources(sources)
    _validate(k, threshold, retriever)
    if examples not in prompts.TREE_EXAMPLES:
        raise ValueError(f"examples={examples!r}; expected one of {', '.join(prompts.TREE_EXAMPLES)}")
    shots = prompts.tree_examples_block(examples)
    replay = load_plans(plans) if plans else {}
    budgets = Budgets(tree_tokens, tree_retry_tokens, operator_tokens, operator_retry_tokens, selection_tokens)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = state.metadata_as(ConflictQA)
        model = get_model()
        srcs = build_sources(names, record, text_corpus=text_corpus, kg_triples=kg_triples,
                             web_pages=web_pages, web_api=web_api, retriever=retriever)
        ex = Executor(model, srcs, k=k, threshold=threshold, budgets=budgets,
                      max_tokens_cap=max_tokens_cap(model))
        store = state.store_as(AtomRStore)
        prompt = prompts.TREE_TEMPLATE.format(question=record.question, examples=shots)
        state.messages = [ChatMessageUser(content=prompt)]
        key = _question_key(record.question)
        try:
            answer = await _plan_and_run(ex, store, record, prompt, replay.get(key), budgets)
        finally:  # also when a model or retrieval error fails the sample: the log shows how far it got
            store.retrieval_errors = ex.retrieval_errors
            store.tree = ex.records
            store.llm_calls = dict(ex.llm_calls)
            store.truncation_retries = dict(ex.truncation_retries)
            store.reused_replies = dict(ex.reused_replies)
            store.retriever_calls = {n: ex.retriever_calls.get(n, 0) for n in names}
            store.parse_failures = dict(ex.parse_failures)
        store.answer_list = answer.answers
        store.paraphrase = answer.paraphrase
        transcript().info({"tree": ex.records, "plan_source": store.plan_source, "degraded": store.degraded,
                           "llm_calls": store.llm_calls, "retriever_calls": store.retriever_calls})
        _finish(state, model, answer.text)
        return state

    return solve


MAX_CLOSED_BOOK_CHARS = 20_000
""":func:`parse_closed_book` reads the first (standard) / last (cot) this-many characters."""


def parse_closed_book(reply: str, style: str) -> str | None:
    """The short answer of a closed-book reply, or ``None`` if there is none.

    ``standard``: the first non-empty line. ``cot``: the text after the last
    "So the answer is:" (any case) up to the end of its line, without a final
    period. Reads at most :data:`MAX_CLOSED_BOOK_CHARS` characters; linear;
    never raises.

    >>> parse_closed_book("Andrei Tarkovsky\\n\\nQuestion: ...", "standard")
    'Andrei Tarkovsky'
    >>> parse_closed_book("He was born in 1791. So the answer is: Charles Babbage.", "cot")
    'Charles Babbage'
    >>> parse_closed_book("I think it is Bob", "cot") is None
    True
    """
    if not isinstance(reply, str):
        return None
    if style == "standard":
        for line in reply[:MAX_CLOSED_BOOK_CHARS].splitlines():
            if line.strip():
                return line.strip()
        return None
    text = reply[-MAX_CLOSED_BOOK_CHARS:].replace("**", "")
    at = text.lower().rfind("so the answer is")
    if at < 0:
        return None
    rest = text[at + len("so the answer is"):].lstrip(" :\t")
    line = rest.split("\n", 1)[0].strip().rstrip(".").strip()
    return line or None


class AtomRBaselineStore(StoreModel):
    """What an AtomR baseline (closed-book or standard RAG) did on one sample; its own
    name, so its keys never mix with the Micro-Act baselines' ``BaselineStore``."""

    reply: str = ""
    retrieval_errors: int = 0
    parse_error: str | None = None
    retriever_calls: dict[str, int] = Field(default_factory=dict)
    passages: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)


def _closed_book(style: str, template: str, max_tokens: int) -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from inspect_ai.model import GenerateConfig

        record = state.metadata_as(ConflictQA)
        model = get_model()
        prompt = template.format(question=record.question)
        state.messages = [ChatMessageUser(content=prompt)]
        cap = max_tokens_cap(model)
        budget = max_tokens if cap is None else max(1, min(max_tokens, cap))
        out = await generate_checked(model, prompt, "AtomR", config=GenerateConfig(max_tokens=budget))
        store = state.store_as(AtomRBaselineStore)
        store.reply = out.completion
        answer = parse_closed_book(out.completion, style)
        if answer is None:
            store.parse_error = f"no answer found in the {style} reply"
        _finish(state, model, answer or "")
        return state

    return solve


@solver
def atomr_standard(max_tokens: int = 64) -> Solver:
    """Closed-book standard prompting, two-shot (AtomR Tables 2-3)."""
    return _closed_book("standard", prompts.STANDARD_TEMPLATE, max_tokens)


@solver
def atomr_cot(max_tokens: int = 256) -> Solver:
    """Closed-book chain-of-thought, two-shot (AtomR Tables 2-3)."""
    return _closed_book("cot", prompts.COT_TEMPLATE, max_tokens)


@solver
def atomr_standard_rag(
    sources: str | list[str] = "text",
    k: int = 3,
    retriever: str = "bm25",
    text_corpus: str | None = None,
    kg_triples: str | None = None,
    web_pages: str | None = None,
    web_api: bool = False,
    max_tokens: int = 256,
) -> Solver:
    """Standard RAG: one retrieval with the question from every enabled source,
    then the Figure 9 prompt; the answer list joined with ", " is the prediction."""
    names = _check_sources(sources)
    _validate(k, 0.5, retriever)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        from inspect_ai.model import GenerateConfig

        record = state.metadata_as(ConflictQA)
        model = get_model()
        srcs = build_sources(names, record, text_corpus=text_corpus, kg_triples=kg_triples,
                             web_pages=web_pages, web_api=web_api, retriever=retriever)
        ex = Executor(model, srcs, k=k)
        store = state.store_as(AtomRBaselineStore)
        try:
            hits = await ex.retrieve(record.question, names)
        finally:
            store.retrieval_errors = ex.retrieval_errors
            store.retriever_calls = dict(ex.retriever_calls)
        prompt = prompts.DIRECT_RAG_TEMPLATE.format(question=record.question,
                                                    knowledge=ex.format_knowledge(hits))
        state.messages = [ChatMessageUser(content=prompt)]
        cap = max_tokens_cap(model)
        budget = max_tokens if cap is None else max(1, min(max_tokens, cap))
        out = await generate_checked(model, prompt, "AtomR", config=GenerateConfig(max_tokens=budget))
        store.reply = out.completion
        store.passages = {s: [{"id": h.id, "title": h.title, "text": h.text} for h in hs]
                          for s, hs in hits.items()}
        answer = parse_answer(out.completion)
        store.parse_error = answer.error
        _finish(state, model, answer.text)
        return state

    return solve
