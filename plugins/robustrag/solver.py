"""RobustRAG (isolate, then aggregate) over a polluted knowledge base.

Isolation and keyword aggregation follow the authors' implementation
(inspire-group/RobustRAG ``src/defense.py`` ``KeywordAgg``, ``src/models.py``,
``src/prompt_template.py``): one call per retrieved passage with their
isolation template, at most ``max_tokens`` (their ``MAX_NEW_TOKENS`` = 20) new
tokens, greedy; for the open-model family the reply is cut at the first blank
line and stripped (their ``HFModel`` cleaning), for the GPT family it is sent
after their system message. A passage is its title, a newline and its text,
as their ``DataUtils.process_data_item`` builds it (``title + '\n' + text``).
The isolation calls are independent and issued together (``asyncio.gather``,
bounded by Inspect's ``max_connections``); answers keep the retrieval order, so
the result is the same as one call after another.

``k`` defaults to 5, not the authors' ``top_k`` default of 10: Conflict
Exposure §4.3 sets "the number of external documents retrieved to 5" for every
RAG system it compares, RobustRAG included (``-T k=10`` for the authors'
default). Aggregation:

* ``llm`` (Conflict Exposure §4.5: "we directly input the generated answers to
  LLM for answer aggregation"): the isolated answers are the documents of the
  Figure 3 yes/no call;
* ``keyword`` (the authors' ``KeywordAgg``, :mod:`.keywords`): abstaining
  answers are dropped; with no answer left RobustRAG's answer is "I don't
  know." and the hint call is not made; otherwise the keyword-hint call answers
  the question from the hints. RobustRAG's answer is then the one document of
  the Figure 3 yes/no call, which decides the sample (Conflict Exposure's
  evaluation is yes/no about a candidate answer).
"""

from __future__ import annotations

import re

import asyncio

from inspect_ai.log import transcript
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import StoreModel
from pydantic import Field

from conflict_eval.answers.failures import generate_state
from conflict_eval.kb.rag import QUESTION_TEMPLATE
from conflict_eval.kb.shared import shared_generate
from conflict_eval.kb.rag import (
    check_retriever,
    kb_record,
    record_retrieval,
    sample_retriever,
)

from .keywords import ABSTAIN_ANSWER, EXTRACTORS, abstains, keyword_aggregate, load_extractor
from .prompts import AGGREGATED_LINE, ANSWER_LINE, TEMPLATES

AGGREGATIONS = ("llm", "keyword")


class RobustRAGStore(StoreModel):
    isolated_answers: dict[str, str] = Field(default_factory=dict)
    abstained: list[str] = Field(default_factory=list)
    keyword_counts: dict[str, int] = Field(default_factory=dict)
    keywords_kept: list[str] = Field(default_factory=list)
    """Kept keywords in hint order."""
    threshold: float | None = None
    hints: str | None = None
    robustrag_answer: str | None = None
    """RobustRAG's own answer (keyword aggregation): the hint call's reply, or
    "I don't know." when every isolated answer abstained."""
    hint_call: bool = False
    keyword_extractor: str | None = None
    templates: str = "open"
    shared_calls: int = 0
    """Calls whose output this sample reused from its ``negatives=true`` sibling (not made)."""


def clean(reply: str, family: str) -> str:
    """The authors' reply cleaning: open models cut at the first blank line.

    Ours (issue 42): blank lines before the answer are skipped and a line of
    white space (``"\\r\\n\\r\\n"``, trailing spaces) is a blank line too, so
    the cut never leaves an empty answer or keeps a second paragraph."""
    if family == "open":
        reply = reply.lstrip()
        cut = _BLANK_LINE.search(reply)
        reply = reply if cut is None else reply[:cut.start()]
    return reply.strip()


_BLANK_LINE = re.compile(r"\n[ \t\r]*\n")


def passage(hit) -> str:
    """A retrieved passage as the authors format it: ``title\ntext`` (text alone without a title)."""
    return f"{hit.title}\n{hit.text}" if hit.title else hit.text


@solver
def robustrag(
    k: int = 5,
    retriever: str = "dense",
    aggregation: str = "llm",
    alpha: float = 0.3,
    beta: float = 3.0,
    templates: str = "open",
    keyword_extractor: str = "auto",
    max_tokens: int = 20,
) -> Solver:
    """Answer from each of the top ``k`` documents in isolation, then aggregate.

    Args:
        k: documents retrieved (5, Conflict Exposure §4.3's setting for every
            method; the RobustRAG authors' own default is 10).
        retriever: ``dense`` or ``bm25``.
        aggregation: ``llm`` (the isolated answers are the documents of the
            final yes/no call, as Conflict Exposure §4.5 runs it) or
            ``keyword`` (the authors' keyword aggregation and hint prompt; its
            answer is the final call's document).
        alpha, beta: keyword threshold ``min(beta, alpha * m)``.
        templates: the authors' prompt family, ``open`` (their Llama/Mistral
            templates; Conflict Exposure used Gemma2 and Llama3) or ``gpt``.
        keyword_extractor: ``auto`` (spaCy en_core_web_sm if installed, else
            the fallback), ``spacy`` (required) or ``fallback``.
        max_tokens: new tokens for the isolation and hint calls (the authors' 20).
    """
    check_retriever(retriever)
    if aggregation not in AGGREGATIONS:
        raise ValueError(f"unknown aggregation {aggregation!r}; expected one of {', '.join(AGGREGATIONS)}")
    if k <= 0 or alpha < 0 or beta < 0:
        raise ValueError(f"need k > 0, alpha >= 0, beta >= 0; got k={k}, alpha={alpha}, beta={beta}")
    if templates not in TEMPLATES:
        raise ValueError(f"templates must be one of {', '.join(TEMPLATES)}; got {templates!r}")
    if keyword_extractor not in EXTRACTORS:
        raise ValueError(f"keyword_extractor must be one of {', '.join(EXTRACTORS)}; got {keyword_extractor!r}")
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens < 1:
        raise ValueError(f"max_tokens must be a positive integer, got {max_tokens!r}")
    isolation_tmpl, hint_tmpl, system = TEMPLATES[templates]
    extractor = load_extractor(keyword_extractor) if aggregation == "keyword" else None
    config = GenerateConfig(temperature=0.0, max_tokens=max_tokens)

    async def ask(state: TaskState, model, prompt: str) -> str:
        messages = ([ChatMessageSystem(content=system)] if system else []) + [ChatMessageUser(content=prompt)]
        counter: dict[str, int] = {}
        out = await shared_generate(state, model, messages, config, counter=counter, what="RobustRAG")
        state.store_as(RobustRAGStore).shared_calls += counter.get("reused", 0)
        return clean(out.completion, templates)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        record = kb_record(state)
        store = state.store_as(RobustRAGStore)
        store.templates = templates
        model = get_model()
        hits = sample_retriever(record, retriever).search(record.question, k=k)
        record_retrieval(state, [record.question], [h.id for h in hits])
        answers = list(await asyncio.gather(*(
            ask(state, model, isolation_tmpl.format(context_str=passage(h), query_str=record.question)) for h in hits)))
        store.isolated_answers = {h.id: a for h, a in zip(hits, answers)}
        store.abstained = [h.id for h, a in zip(hits, answers) if abstains(a)]
        if aggregation == "llm":
            documents = "\n".join(ANSWER_LINE.format(i=i, answer=a) for i, a in enumerate(answers, start=1))
        else:
            agg = keyword_aggregate(answers, extractor, alpha, beta)
            store.keyword_extractor = extractor.name
            store.keyword_counts, store.keywords_kept, store.threshold = agg.counts, agg.kept, agg.threshold
            if agg.abstain:
                answer = ABSTAIN_ANSWER
            else:
                store.hints, store.hint_call = agg.hints, True
                answer = await ask(state, model, hint_tmpl.format(hints=agg.hints, query_str=record.question))
            store.robustrag_answer = answer
            documents = AGGREGATED_LINE.format(answer=answer)
        transcript().info({"isolated_answers": store.isolated_answers, "abstained": store.abstained,
                           "keyword_extractor": store.keyword_extractor, "hints": store.hints,
                           "robustrag_answer": store.robustrag_answer}, source="robustrag")
        prompt = QUESTION_TEMPLATE.format(question=record.question, documents=documents,
                                          answer=record.extra["candidate"])
        state.messages = [ChatMessageUser(content=prompt)]
        return await generate_state(generate, state, "RobustRAG")

    # eval metadata (conflict_eval.components.compose puts it under "method_info")
    solve.info = {"robustrag_templates": templates, "aggregation": aggregation,
                  "keyword_extractor": extractor.name if extractor else None}
    return solve
