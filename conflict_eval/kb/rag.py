"""What every method over a polluted KB shares: the sample's retriever, the
Figure 3 yes/no prompt, and recording the retrieved set for KRC."""

from __future__ import annotations

from typing import Any

from inspect_ai.solver import TaskState
from inspect_ai.util import StoreModel
from pydantic import Field

from conflict_eval.records import ArgumentError, ConflictQA, TaskArgument

from .format import kb_retriever

# Conflict Exposure, Figure 3, "Question Template". The converted text repeats the last line
# garbled ("answer to the question. (res or ro)"); that repetition is PDF
# noise and is dropped. Placeholders: {question}, {documents}, {answer}.
QUESTION_TEMPLATE = """Question: {question}
Documents: {documents}
Is "{answer}" the answer to the question? (Yes or No)"""

RETRIEVER_NAMES = ("dense", "bm25")

__all__ = ["QUESTION_TEMPLATE", "RETRIEVER_NAMES", "RetrievalStore", "check_retriever", "format_documents", "kb_record",
           "record_retrieval", "sample_retriever", "yes_no_prompt", "final_prompt"]


class RetrievalStore(StoreModel):
    """What a method retrieved for a sample (written by every polluted-KB method)."""

    queries: list[str] = Field(default_factory=list)
    retrieved_ids: list[str] = Field(default_factory=list)
    """The final document set given to the model (Algorithm 1's ``D``)."""


def format_documents(docs: list[Any]) -> str:
    """The ``<documents>`` of the Figure 3 template: one numbered document per
    line, ``[i] title: text`` (the paper does not show the layout; ours)."""
    lines = []
    for i, d in enumerate(docs, start=1):
        title = getattr(d, "title", None)
        lines.append(f"[{i}] {title}: {d.text}" if title else f"[{i}] {d.text}")
    return "\n".join(lines)


def yes_no_prompt(question: str, candidate: str, docs: list[Any], template: str = QUESTION_TEMPLATE) -> str:
    return template.format(question=question, documents=format_documents(docs), answer=candidate)


def check_retriever(retriever: str) -> str:
    if retriever not in RETRIEVER_NAMES:
        raise ValueError(f"unknown retriever {retriever!r}; expected one of {', '.join(RETRIEVER_NAMES)}")
    return retriever


def kb_record(state: TaskState) -> ConflictQA:
    """The sample's record; it must come from the ``polluted_kb`` dataset."""
    record = state.metadata_as(ConflictQA)
    for key in ("kb_path", "pollution", "candidate"):
        if key not in record.extra:
            raise ArgumentError(f"sample {record.id}: extra.{key} is missing; this method runs on the "
                                "polluted_kb dataset (", TaskArgument("dataset", "polluted_kb"), " ",
                                TaskArgument("path", "KB_FILE"), ")", in_sample=True)
    return record


def sample_retriever(record: ConflictQA, retriever: str):
    """The retriever indexed on the sample's polluted corpus (cached per process)."""
    return kb_retriever(record.extra["kb_path"], record.extra["pollution"], retriever)


def final_prompt(record: ConflictQA, docs: list[Any]) -> str:
    """Figure 3: 'Is "<answer>" the answer to the question? (Yes or No)' over ``docs``."""
    return yes_no_prompt(record.question, record.extra["candidate"], docs)


def record_retrieval(state: TaskState, queries: list[str], doc_ids: list[str]) -> None:
    store = state.store_as(RetrievalStore)
    store.queries = list(queries)
    store.retrieved_ids = list(doc_ids)
