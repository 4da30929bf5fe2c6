"""Methods built for a polluted knowledge base, run on a sample's *given* documents.

Datasets such as RAMDocs ship the retrieved documents with each question
(no corpus to search). ``standard_rag`` and ``astuterag`` then take every
document of the record, in its order, as the retrieved set -- ``k`` and the
retriever do not apply -- and answer the dataset's own question (free-form or
multiple choice) with the End-to-End answer prompt (Micro-Act Figure 10, and
its free-form adaptation) over the numbered documents, instead of
Conflict Exposure's yes/no candidate question, which needs a candidate answer
these datasets do not have.
"""

from __future__ import annotations

from conflict_eval.kb.answer import END_TO_END_FREE_FORM_TEMPLATE, END_TO_END_TEMPLATE
from conflict_eval.kb.rag import format_documents
from conflict_eval.records import ArgumentError, ConflictQA, Passage, TaskArgument

KB_KEYS = ("kb_path", "pollution", "candidate")


def has_kb(record: ConflictQA) -> bool:
    """Whether the record comes with a polluted knowledge base to retrieve from."""
    return any(key in record.extra for key in KB_KEYS)


def given_documents(record: ConflictQA, method: str) -> list[Passage]:
    """The record's documents; none is an error naming the method, sample and dataset."""
    if not record.evidence:
        raise ArgumentError(f"{method}: sample {record.id!r} (dataset {record.dataset!r}) has neither a knowledge "
                            "base (extra.kb_path: ", TaskArgument("dataset", "polluted_kb"),
                            ") nor documents of its own", in_sample=True)
    return list(record.evidence)


def answer_prompt(record: ConflictQA, documents: str) -> str:
    """The End-to-End answer prompt with ``documents`` as its evidence."""
    if record.is_multiple_choice:
        return END_TO_END_TEMPLATE.format(evidence=documents, question=record.question,
                                          options=record.formatted_options())
    return END_TO_END_FREE_FORM_TEMPLATE.format(evidence=documents, question=record.question)


def documents_prompt(record: ConflictQA, docs: list[Passage]) -> str:
    """The answer prompt over numbered documents (``[i] text``)."""
    return answer_prompt(record, "\n" + format_documents(docs))
