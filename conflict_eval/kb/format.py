"""The polluted knowledge base file: schema, loading, corpora and retrievers.

A KB file (JSON, written by :func:`conflict_eval.plugins.polluted_kb.build.build_polluted_kb`) holds the clean
pooled HotpotQA corpus and every injected document side by side::

    {"format": "conflict_eval.polluted_kb/1",
     "meta": {...how it was built...},
     "documents": [{"id", "title", "text", "origin", "question_id", "derived_from"}, ...],
     "questions": [{"id", "question", "answers", "supporting_ids", "target", ...}, ...]}

``origin`` is ``clean`` for the pooled Wikipedia paragraphs and ``I``, ``II``
or ``III`` for injected documents (``question_id`` names the question they
attack; Type I copies name the clean paragraph they were altered from in
``derived_from``). The corpus seen under pollution ``t`` is every clean
document plus the injected documents of type ``t`` (``all``: of every type).
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from conflict_eval.records import ENCODING, DataFileError, DatasetError, RecordProblem, not_utf8

KB_FORMAT = "conflict_eval.polluted_kb/1"
POLLUTION_TYPES = ("I", "II", "III")
POLLUTIONS = ("none", "I", "II", "III", "all")
"""Corpus variants: ``none`` is the clean corpus."""

Origin = Literal["clean", "I", "II", "III"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class KBDocument(_Strict):
    id: str = Field(min_length=1)
    title: str | None = None
    text: str = Field(min_length=1)
    origin: Origin = "clean"
    question_id: str | None = None
    """The question an injected document attacks (``None`` for clean ones)."""
    derived_from: str | None = None
    """Type I: the clean paragraph this copy was altered from."""


class Prescreen(_Strict):
    """§4.2 pre-screening on the clean corpus: regular RAG, complete knowledge
    and a correct yes/no answer."""

    retrieved_ids: list[str]
    complete: bool
    reply: str | None = None
    parsed: str | None = None
    parse_failure: str | None = None
    kept: bool


class KBQuestion(_Strict):
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    answers: list[str] = Field(min_length=1)
    supporting_ids: list[str]
    """Clean document ids of the gold supporting paragraphs (for KRC)."""
    target: str | None = None
    """The misinformation target (``<subcontent>``); ``None`` when it failed."""
    target_reply: str = ""
    failures: dict[str, str] = Field(default_factory=dict)
    """Why a step produced nothing, by step (``target``, ``I``, ``II``)."""
    injected: dict[str, list[str]] = Field(default_factory=dict)
    """Ids of the documents injected for this question, by pollution type."""
    prescreen: Prescreen | None = None


class KBMeta(_Strict):
    source: str
    source_sha256: str
    model: str
    seed: int
    types: list[str]
    limit: int | None
    n_source_records: int
    n_duplicate_paragraphs: int
    generate: dict[str, Any]
    prescreen: dict[str, Any] | None = None
    corpus: dict[str, Any] | None = None
    """Where the clean corpus came from with ``--corpus`` (None: pooled from ``source``)."""


class PollutedKB(_Strict):
    format: Literal["conflict_eval.polluted_kb/1"] = KB_FORMAT
    meta: KBMeta
    documents: list[KBDocument]
    questions: list[KBQuestion]
    _index: dict[str, KBDocument] | None = PrivateAttr(default=None)

    def corpus(self, pollution: str) -> list[KBDocument]:
        """Clean documents plus the injected documents of ``pollution``."""
        check_pollution(pollution)
        if pollution == "none":
            return [d for d in self.documents if d.origin == "clean"]
        if pollution != "all" and pollution not in self.meta.types:
            raise ValueError(
                f"this knowledge base was built with pollution types {self.meta.types}; "
                f"it has no type {pollution!r} documents"
            )
        keep = {"clean", *POLLUTION_TYPES} if pollution == "all" else {"clean", pollution}
        return [d for d in self.documents if d.origin in keep]

    def document(self, doc_id: str) -> KBDocument:
        return self._by_id()[doc_id]

    def _by_id(self) -> dict[str, KBDocument]:
        if self._index is None:
            self._index = {d.id: d for d in self.documents}
        return self._index


def check_pollution(pollution: str) -> str:
    if pollution not in POLLUTIONS:
        raise ValueError(f"unknown pollution {pollution!r}; expected one of {', '.join(POLLUTIONS)}")
    return pollution


def save_kb(kb: PollutedKB, path: str | Path) -> Path:
    """Write ``kb`` as JSON (stable key order, so equal builds give equal files)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(kb.model_dump(mode="json"), ensure_ascii=False, indent=1) + "\n",
                   encoding="utf-8")
    tmp.replace(path)
    return path


def read_kb(path: str | Path) -> PollutedKB:
    """Load and validate a KB file; errors name the file, the record and the field."""
    path = _existing(path)
    try:
        text = path.read_text(encoding=ENCODING)
    except UnicodeDecodeError:
        raise not_utf8(path, "polluted_kb") from None
    if not text.strip():
        raise DataFileError("polluted_kb", path, "the file is empty; build a knowledge base with "
                            "`conflict-eval build-polluted-kb --out FILE`")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DatasetError("polluted_kb", str(path),
                           [RecordProblem("-", f"line {exc.lineno}", "-", f"invalid JSON: {exc.msg}")]) from None
    except (ValueError, RecursionError) as exc:  # nesting or integers beyond Python's limits
        raise DataFileError("polluted_kb", path, f"invalid JSON ({exc or 'nested too deeply'})") from None
    if not isinstance(data, dict) or data.get("format") != KB_FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise DatasetError("polluted_kb", str(path),
                           [RecordProblem("-", "", "format", f"expected {KB_FORMAT!r}, got {got!r}")])
    try:
        kb = PollutedKB.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = list(err["loc"])
            rid, where = "-", ""
            if len(loc) >= 2 and loc[0] in ("documents", "questions") and isinstance(loc[1], int):
                item = data[loc[0]][loc[1]]
                rid = str(item.get("id", "-")) if isinstance(item, dict) else "-"
                where = f"{loc[0]}[{loc[1]}]"
                loc = loc[2:]
            problems.append(RecordProblem(rid, where, ".".join(map(str, loc)) or "-", err["msg"]))
        raise DatasetError("polluted_kb", str(path), problems) from None
    _check_references(kb, path)
    return kb


def _existing(path: str | Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"polluted knowledge base {path} does not exist; build one with "
            "`conflict-eval build-polluted-kb --out FILE`"
        )
    return path


def _check_references(kb: PollutedKB, path: Path) -> None:
    ids: dict[str, int] = {}
    for d in kb.documents:
        ids[d.id] = ids.get(d.id, 0) + 1
    problems = [RecordProblem(i, "documents", "id", f"duplicate id ({n} documents)")
                for i, n in ids.items() if n > 1]
    qids: dict[str, list[int]] = {}
    for n, q in enumerate(kb.questions):
        qids.setdefault(q.id, []).append(n)
    problems += [RecordProblem(i, f"questions[{at[0]}]", "id",
                               f"duplicate question id ({len(at)} questions: "
                               + ", ".join(f"questions[{n}]" for n in at[:5]) + ")")
                 for i, at in qids.items() if len(at) > 1]
    clean = {d.id for d in kb.documents if d.origin == "clean"}
    for q in kb.questions:
        for sid in q.supporting_ids:
            if sid not in clean:
                problems.append(RecordProblem(q.id, "questions", "supporting_ids",
                                              f"{sid!r} is not a clean document"))
        for t, doc_ids in q.injected.items():
            for did in doc_ids:
                if did not in ids:
                    problems.append(RecordProblem(q.id, "questions", f"injected.{t}",
                                                  f"unknown document {did!r}"))
    if problems:
        raise DatasetError("polluted_kb", str(path), problems)


# --------------------------------------------------------------------------
# cached KBs and indexed retrievers, shared by every method in the process

_LOCK = threading.Lock()
_KBS: dict[tuple[str, float], PollutedKB] = {}
_RETRIEVERS: dict[tuple[str, float, str, str], Any] = {}


def _key(path: str | Path) -> tuple[str, float]:
    p = _existing(path).resolve()
    return str(p), p.stat().st_mtime


def load_kb(path: str | Path) -> PollutedKB:
    """:func:`read_kb`, cached per file (and modification time)."""
    key = _key(path)
    with _LOCK:
        if key not in _KBS:
            _KBS[key] = read_kb(path)
        return _KBS[key]


def kb_retriever(path: str | Path, pollution: str, retriever: str = "dense"):
    """A retriever indexed on the corpus of ``pollution``, built once per process."""
    from conflict_eval.retrieval import make_retriever

    kb = load_kb(path)
    key = (*_key(path), pollution, retriever)
    with _LOCK:
        r = _RETRIEVERS.get(key)
        if r is None:
            r = make_retriever(retriever)
            r.index([{"id": d.id, "text": d.text, "title": d.title} for d in kb.corpus(pollution)])
            _RETRIEVERS[key] = r
        return r
