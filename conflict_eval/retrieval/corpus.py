"""Reading corpus files: passages in file order, with the format detected
from the first record (``iter_corpus``, ``detect_format``), and the one error
type of corpus and index problems (``CorpusIndexError``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from conflict_eval.records import DataFileError, not_utf8, read_jsonl
from conflict_eval.retrieval.base import Document

__all__ = ["CorpusIndexError", "detect_format", "iter_corpus"]


class CorpusIndexError(ValueError):
    """An index cannot be built or opened; the message names the file and what is wrong."""


# --------------------------------------------------------------------------
# corpus reading


def _first_record(path: Path) -> Any:
    try:
        with open(path, encoding="utf-8-sig") as f:
            head = f.read(1)
            while head and head.isspace():
                head = f.read(1)
            if head == "[":
                return "array"
            f.seek(0)
            for n, line in enumerate(f, start=1):
                if line.strip():
                    try:
                        return json.loads(line)
                    except json.JSONDecodeError as exc:
                        raise CorpusIndexError(f"{path}: line {n}: invalid JSON ({exc.msg})") from None
    except UnicodeDecodeError:
        raise CorpusIndexError(str(not_utf8(path))) from None
    raise CorpusIndexError(f"{path}: the corpus file is empty")


def iter_corpus(path: str | Path, fmt: str = "auto", stats: dict | None = None) -> Iterator[Document]:
    """The passages of a corpus file, in file order.

    ``stats`` (a dict, if given) receives ``duplicates_skipped``: the exact
    repeats skipped (same title and text; for ``pages``, repeated pages), and
    ``duplicate_unit`` (``passages`` or ``pages``).

    ``fmt``:

    * ``jsonl`` -- one ``{"id"?, "title"?, "text"}`` object per line,
      streamed (constant memory). A missing id becomes ``p<N>`` (N = passage
      number from 0); ids must be unique; exact repeats of (title, text) are
      indexed once, as in the in-memory path.
    * ``passages`` -- the upstream formats the ``text`` source reads
      (IRCoT/HotpotQA ``contexts``, MuSiQue ``paragraphs``, BlendQA
      ``long_answer``; see ``retrieval.sources.read_passages``).
    * ``pages`` -- the web formats the ``web`` source reads (CRAG
      ``search_results``, or ``url``/``title``/``text`` pages; ``read_pages``).
    * ``auto`` -- ``jsonl`` when the first record is a plain passage,
      otherwise ``passages`` (``search_results`` rows: ``pages``).
    """
    path = Path(path)
    if not path.is_file():
        raise CorpusIndexError(f"no such corpus file {path}")
    if fmt == "auto":
        fmt = detect_format(path)
    stats = {} if stats is None else stats
    stats.update(duplicates_skipped=0, duplicate_unit="pages" if fmt == "pages" else "passages")
    if fmt == "passages":
        from conflict_eval.retrieval.sources import read_passages

        yield from read_passages(path, stats)
        return
    if fmt == "pages":
        from conflict_eval.retrieval.sources import read_pages

        yield from read_pages(path, stats=stats)
        return
    if fmt != "jsonl":
        raise CorpusIndexError(f"unknown corpus format {fmt!r}; expected auto, jsonl, passages or pages")
    ids: set[str] = set()
    seen: set[bytes] = set()
    try:
        for line, row in read_jsonl(path):
            if isinstance(row, Exception):
                raise CorpusIndexError(f"{path}: {line}: invalid JSON ({getattr(row, 'msg', row)})")
            if not isinstance(row, dict):
                raise CorpusIndexError(f"{path}: {line}: expected a JSON object, got {type(row).__name__}")
            text, title = row.get("text"), row.get("title")
            rid = row.get("id")
            where = f"{path}: record {rid!r} ({line})" if rid is not None else f"{path}: {line}"
            if not isinstance(text, str) or not text.strip():
                raise CorpusIndexError(f"{where} field 'text': expected a non-empty string, got {text!r:.60}")
            if title is not None and not isinstance(title, str):
                raise CorpusIndexError(f"{where} field 'title': expected a string or null, got {title!r:.60}")
            key = hashlib.blake2b(f"{title}\x00{text}".encode(), digest_size=12).digest()
            if key in seen:
                stats["duplicates_skipped"] += 1
                continue
            seen.add(key)
            doc_id = str(rid) if rid is not None else f"p{len(ids)}"
            if doc_id in ids:
                raise CorpusIndexError(f"{where} field 'id': duplicate passage id {doc_id!r}")
            ids.add(doc_id)
            yield Document(doc_id, text, title)
    except DataFileError as exc:  # empty or not UTF-8: one error type for index users
        raise CorpusIndexError(str(exc)) from None


def detect_format(path: Path) -> str:
    first = _first_record(path)
    if first == "array":
        return "passages"
    if not isinstance(first, dict):
        raise CorpusIndexError(f"{path}: line 1: expected a JSON object")
    if "search_results" in first:
        return "pages"
    if any(k in first for k in ("contexts", "paragraphs", "long_answer")):
        return "passages"
    if "text" in first:
        return "jsonl"
    raise CorpusIndexError(f"{path}: line 1: no passages (expected 'text', or the upstream 'contexts', "
                      f"'paragraphs', 'long_answer' or 'search_results'); keys {sorted(first)}")
