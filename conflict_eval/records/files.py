"""Reading and writing dataset files (JSONL, JSON), with errors that name the file."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


from conflict_eval.records.errors import DataFileError, check_file

ENCODING = "utf-8-sig"
"""Dataset files are read as UTF-8; a leading byte-order mark is skipped."""


def read_jsonl(path: str | Path) -> Iterator[tuple[str, Any]]:
    """Yield ``(locator, row)`` for each non-blank line of a JSON Lines file,
    read with the ``jsonlines`` package (the one reader every loader uses).

    Malformed JSON yields ``(locator, error)`` -- the ``JSONDecodeError`` (or
    ``ValueError``/``RecursionError``) behind ``jsonlines``' ``InvalidLineError``
    -- so that it is reported together with the other problems instead of
    stopping at the first one. A UTF-8 byte-order mark is skipped, CRLF line
    ends are read as line ends, blank lines are skipped and a ``null`` line is
    yielded as ``None`` (the converter reports it: "expected an object"). A
    missing file raises :class:`FileNotFoundError`; a file with no non-blank
    line, or one that is not UTF-8, raises :class:`DataFileError` naming it.
    """
    import jsonlines

    path = check_file(path)
    rows = 0
    current = 0

    def numbered(f):
        nonlocal current
        for current, line in enumerate(f, start=1):
            yield line

    try:
        with open(path, encoding=ENCODING) as f, jsonlines.Reader(numbered(f), loads=json.loads) as reader:
            while True:
                try:
                    row = reader.read(skip_empty=True, allow_none=True)
                except EOFError:
                    break
                except jsonlines.InvalidLineError as exc:  # incl. ints over Python's digit limit
                    row = exc.__cause__ if isinstance(exc.__cause__, Exception) else exc
                except RecursionError as exc:
                    row = exc
                rows += 1
                yield f"line {current}", row
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    if not rows:
        raise DataFileError(None, path, "the file is empty (no records)")


def write_jsonl(path: str | Path, rows: Iterable[Any]) -> int:
    """Write ``rows`` to ``path`` as JSON Lines (UTF-8, non-ASCII kept as is),
    with the ``jsonlines`` package; returns the number of rows written. What it
    writes, :func:`read_jsonl` reads back unchanged."""
    import functools

    import jsonlines

    n = 0
    with jsonlines.open(path, mode="w", dumps=functools.partial(json.dumps, ensure_ascii=False)) as writer:
        for row in rows:
            writer.write(row)
            n += 1
    return n


def not_utf8(path: str | Path, dataset: str | None = None) -> DataFileError:
    """The error for a file that is not UTF-8, naming the line of the first bad byte."""
    data = Path(path).read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        return DataFileError(dataset, path, f"line {line}: not UTF-8 text ({exc.reason} at byte {exc.start}); "
                                            "save the file as UTF-8")
    return DataFileError(dataset, path, "not UTF-8 text")


def _first_char(path: Path) -> str:
    """The first non-whitespace character of a text file ('' if there is none)."""
    try:
        with open(path, encoding=ENCODING) as f:
            while chunk := f.read(1 << 16):
                if stripped := chunk.lstrip():
                    return stripped[0]
    except UnicodeDecodeError:
        raise not_utf8(path) from None
    return ""


def read_json_or_jsonl(path: str | Path) -> Iterator[tuple[str, Any]]:
    """Rows of a ``.json`` file holding a list (or ``{"data": [...]}``), or of JSONL.

    Errors as :func:`read_jsonl`; a JSON document that is not a list of
    records raises :class:`DataFileError`.
    """
    path = check_file(path)
    head = _first_char(path)
    if not head:
        raise DataFileError(None, path, "the file is empty (no records)")
    if path.suffix == ".json" or head == "[":
        try:
            data = json.loads(path.read_text(encoding=ENCODING))
        except RecursionError:
            raise DataFileError(None, path, "invalid JSON (nested too deeply)") from None
        except UnicodeDecodeError:
            raise not_utf8(path) from None
        except json.JSONDecodeError as exc:
            # may still be JSON Lines with a .json name
            if exc.msg == "Extra data":
                yield from read_jsonl(path)
                return
            raise DataFileError(None, path, f"line {exc.lineno}: invalid JSON ({exc.msg})") from None
        except ValueError as exc:  # e.g. an integer over Python's digit limit
            raise DataFileError(None, path, f"invalid JSON ({exc})") from None
        if isinstance(data, dict) and isinstance(data.get("data"), list):
            data = data["data"]
        if not isinstance(data, list):
            raise DataFileError(None, path, f"expected a JSON list of records, got a {type(data).__name__}")
        for i, row in enumerate(data):
            yield f"index {i}", row
    else:
        yield from read_jsonl(path)

