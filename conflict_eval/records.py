"""Canonical records: one strict schema for every conflict QA item.

Each dataset plugin maps its upstream rows to :class:`ConflictQA` records and
builds Inspect samples from them with :func:`build_dataset`. Validation is
strict (unknown fields are errors, records are frozen), and a bad file reports
*all* its bad records at once, each with the dataset, file, record id and
field::

    DatasetError: 2 bad records in dataset 'kre_ecqa' (file data.jsonl):
      - record 'q17' (line 17) field 'question': Field required
      - record 'q20' (line 20) field 'options': expected a list, got str

Methods read the record back from a sample with
``state.metadata_as(ConflictQA)``.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

PassageLabel = Literal["supporting", "conflicting", "irrelevant", "unknown"]

CONFLICT_TYPES = (
    "misinformation",
    "temporal",
    "semantic",
    "counterfactual",
    "inter_context",
    "none",
)
"""Conventional values of :attr:`ConflictQA.conflict_type` (``none`` = conflict-free).
Datasets may use others; these are the ones the built-ins use."""

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

MAX_ID_CHARS = 1000
"""The longest record id accepted. Real ids are short (hashes, ``2hop__1_2``,
``kre_ecqa-3f2a9c01de``); an id is written into every log entry of its sample,
and a runaway one (a whole document pasted into ``id``) makes Inspect's log
writer fail with a message that does not name the record. Longer ids are
rejected at load, naming the record's line and field."""


def _id_too_long(value: str) -> str:
    return (f"id is {len(value):,} characters long (starts {value[:40]!r}); "
            f"record ids may be at most {MAX_ID_CHARS} characters")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class Passage(_Strict):
    """One piece of evidence shown to (or retrieved for) the model."""

    text: str = Field(min_length=1)
    label: PassageLabel = "unknown"
    """How the passage relates to the gold answer: it supports it, it implies a
    different (conflicting) answer, it is irrelevant, or unknown."""
    title: str | None = None
    id: str | None = None
    source: str | None = None
    """Where the passage came from, e.g. ``wikipedia``, ``news``, ``book``."""


class ConflictQA(_Strict):
    """A conflict QA item in canonical form."""

    id: str = Field(min_length=1)
    dataset: str = Field(min_length=1)
    question: str = Field(min_length=1)
    options: list[str] = Field(default_factory=list)
    """Answer options for multiple choice, in letter order; empty for free-form."""
    answers: list[str] = Field(min_length=1)
    """Gold answer text(s); for multiple choice, the text of the gold option."""
    gold_option: str | None = None
    """Letter of the gold option (multiple choice only)."""
    conflict_answer: str | None = None
    """The answer implied by the conflicting evidence, where there is one."""
    conflict_option: str | None = None
    """Letter of the option implied by the conflicting evidence."""
    evidence: list[Passage] = Field(default_factory=list)
    """Passages given to the model in this item's context setting."""
    conflict_type: str = "none"
    """See :data:`CONFLICT_TYPES`; ``none`` means conflict-free evidence."""
    setting: str | None = None
    """Context setting, e.g. ``conflict``, ``matching``, ``irrelevant``."""
    source_ids: list[str] = Field(default_factory=list)
    """Ids of the upstream record(s) this item was built from."""
    extra: dict[str, Any] = Field(default_factory=dict)
    """Dataset-specific fields methods may need (kept JSON-serialisable)."""

    @field_validator("id")
    @classmethod
    def _check_id(cls, value: str) -> str:
        if len(value) > MAX_ID_CHARS:
            raise ValueError(_id_too_long(value))
        return value

    @model_validator(mode="after")
    def _check_options(self) -> ConflictQA:
        letters = LETTERS[: len(self.options)]
        for field in ("gold_option", "conflict_option"):
            value = getattr(self, field)
            if value is not None and value not in letters:
                raise ValueError(
                    f"{field} {value!r} is not one of the option letters "
                    f"{list(letters) or '(no options)'}"
                )
        if self.options and self.gold_option is None:
            raise ValueError("multiple-choice record (options given) needs gold_option")
        return self

    @property
    def is_multiple_choice(self) -> bool:
        return bool(self.options)

    def formatted_options(self) -> str:
        """Options as ``A. text`` lines."""
        return "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(self.options))

    def evidence_text(self, sep: str = "\n") -> str:
        """The evidence passages' text joined by ``sep``."""
        return sep.join(p.text for p in self.evidence)


def to_sample(record: ConflictQA):  # -> inspect_ai.dataset.Sample
    """An Inspect sample: the question as input, the gold letter (multiple
    choice) or gold answers (free-form) as target, the record as metadata."""
    from inspect_ai.dataset import Sample

    return Sample(
        id=record.id,
        input=record.question,
        target=record.gold_option if record.is_multiple_choice else list(record.answers),
        choices=list(record.options) or None,
        metadata=record.model_dump(mode="json"),
    )


# --------------------------------------------------------------------------
# validation with complete, located error reports


@dataclass(frozen=True)
class RecordProblem:
    record_id: str
    locator: str
    field: str
    message: str

    def __str__(self) -> str:
        if self.record_id == self.locator:  # no id: the locator is the name
            return f"record at {self.locator} field {self.field!r}: {self.message}"
        where = f" ({self.locator})" if self.locator else ""
        rid = self.record_id
        shown = repr(rid) if len(rid) <= 80 else f"{rid[:60]!r}... ({len(rid):,} characters)"
        return f"record {shown}{where} field {self.field!r}: {self.message}"


class DatasetError(ValueError):
    """One or more records of a dataset file are invalid. ``problems`` lists all."""

    def __init__(self, dataset: str, file: str | None, problems: list[RecordProblem]):
        self.dataset, self.file, self.problems = dataset, file, problems
        shown = "\n".join(f"  - {p}" for p in problems[:50])
        more = f"\n  ... and {len(problems) - 50} more" if len(problems) > 50 else ""
        super().__init__(
            f"{len(problems)} bad record(s) in dataset {dataset!r} "
            f"(file {file or '<in memory>'}):\n{shown}{more}"
        )

    def __reduce__(self):  # picklable (e.g. across worker processes)
        return (DatasetError, (self.dataset, self.file, self.problems))


class DataFileError(DatasetError):
    """A dataset file as a whole is unusable: empty, not UTF-8, not the
    expected container. The message names the dataset (when known) and the file."""

    def __init__(self, dataset: str | None, file: str | Path | None, message: str):
        self.dataset, self.file, self.message = dataset, str(file) if file else None, message
        self.problems = [RecordProblem("-", "", "-", message)]
        ValueError.__init__(self, self._text())

    def _text(self) -> str:
        where = f"dataset {self.dataset!r}: " if self.dataset else ""
        return f"{where}file {self.file or '<in memory>'}: {self.message}"

    def __reduce__(self):
        return (DataFileError, (self.dataset, self.file, self.message))

    def for_dataset(self, dataset: str) -> DataFileError:
        """The same error, naming ``dataset`` if it did not name one yet."""
        return self if self.dataset else DataFileError(dataset, self.file, self.message)


def check_file(path: str | Path, dataset: str | None = None) -> Path:
    """``path`` as a :class:`~pathlib.Path` after checking it is an existing
    regular file. A missing file raises a one-line :class:`FileNotFoundError`
    naming the dataset and the file."""
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"{dataset + ': ' if dataset else ''}no such file {p}")
    if not p.is_file():
        raise DataFileError(dataset, p, "not a regular file")
    return p


class MissingField(KeyError):
    """Raised by :class:`Row` when an upstream field is absent."""

    def __init__(self, field: str, message: str = "field is missing"):
        super().__init__(field)
        self.field, self.message = field, message


class BadField(ValueError):
    """Raise from a converter when an upstream field has a bad value."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


class Row(Mapping[str, Any]):
    """Read-only view of an upstream row; a missing key raises :class:`MissingField`
    so the error report can name the field."""

    def __init__(self, data: Mapping[str, Any]):
        self._data = data

    def __getitem__(self, key: str) -> Any:
        try:
            return self._data[key]
        except KeyError:
            raise MissingField(key) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def text(self, key: str) -> str:
        """A non-empty string field (valid Unicode: no lone surrogates)."""
        value = self[key]
        if not isinstance(value, str) or not value.strip():
            raise BadField(key, f"expected a non-empty string, got {value!r:.80}")
        return _valid_unicode(value, key)

    def list(self, key: str) -> list[Any]:
        value = self[key]
        if not isinstance(value, list):
            raise BadField(key, f"expected a list, got {type(value).__name__} {value!r:.60}")
        return value

    def id(self, key: str) -> str:
        """An identifier: a non-empty string or an integer (never ``None``,
        which would otherwise become the id ``"None"``)."""
        value = self[key]
        return as_id(value, key)

    def strings(self, key: str) -> list[str]:
        """A list of strings, stripped, empty ones dropped. A bare string is an
        error (iterating it would give one-letter answers), as is a non-string item."""
        return as_strings(self[key], key)

    def text_any(self, *keys: str) -> str:
        """:meth:`text` of the first of ``keys`` present (upstream spellings
        of one field); missing from all, :class:`MissingField` names the first."""
        for key in keys:
            if key in self._data:
                return self.text(key)
        also = ", ".join(repr(k) for k in keys[1:])
        raise MissingField(keys[0], f"field is missing (also looked for {also})" if also else "field is missing")


def as_id(value: Any, field: str) -> str:
    """``value`` as a record id, or :class:`BadField` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise BadField(field, f"expected a non-empty string or integer id, got {value!r:.60}")
    if len(str(value)) > MAX_ID_CHARS:
        raise BadField(field, _id_too_long(str(value)))
    return str(value)


def as_strings(value: Any, field: str) -> list[str]:
    """``value`` as a list of non-empty stripped strings (see :meth:`Row.strings`)."""
    if isinstance(value, str):
        raise BadField(field, f"expected a list of strings, got a string {value!r:.60}")
    if not isinstance(value, list):
        raise BadField(field, f"expected a list of strings, got {type(value).__name__} {value!r:.60}")
    for i, item in enumerate(value):
        if not isinstance(item, str):
            raise BadField(f"{field}[{i}]", f"expected a string, got {type(item).__name__} {item!r:.60}")
    return [_valid_unicode(item.strip(), f"{field}[{i}]") for i, item in enumerate(value) if item.strip()]


def _valid_unicode(value: str, field: str) -> str:
    """``value`` unchanged, or :class:`BadField` if it holds a lone surrogate
    (valid as a JSON escape, but not text any model or log can take)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise BadField(field, f"invalid Unicode: unpaired surrogate at character {exc.start}") from None
    return value


def optional_text(value: Any, field: str) -> str | None:
    """``None`` for an absent/null value, else a string; other types are errors.
    (Use for optional titles and ids, so that ``None`` never becomes ``"None"``.)"""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise BadField(field, f"expected a string, got {type(value).__name__} {value!r:.60}")
    return str(value)


Converter = Callable[[Row], "ConflictQA | Iterable[ConflictQA] | None"]


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


def _lone_surrogate(raw: Mapping) -> str | None:
    """The path of the first string (key or value) in ``raw`` that is not valid
    Unicode -- JSON allows ``\\ud800`` escapes that no model or log can take."""
    stack: list[tuple[str, Any]] = [("", raw)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode("utf-8")
            except UnicodeEncodeError:
                return where or "-"
        elif isinstance(value, Mapping):
            for k, v in value.items():
                name = str(k).encode("utf-8", "backslashreplace").decode("utf-8")
                path = f"{where}.{name}" if where else name
                stack.append((path, v))
                stack.append((path, k))  # the key itself
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
    return None


def _convert_one(locator: str, raw: Any, convert: Converter, id_field: str | Sequence[str] | None,
                 records: list) -> list[RecordProblem]:
    """Convert one row into ``records``; return its problems (empty if none)."""
    rid = locator
    if isinstance(raw, Mapping):
        for key in (id_field,) if isinstance(id_field, str) else id_field or ():
            if isinstance(raw.get(key), str | int) and str(raw[key]).strip():
                rid = str(raw[key])
                if len(rid) > MAX_ID_CHARS:  # named by its line, not by the runaway id
                    return [RecordProblem(locator, locator, key, _id_too_long(rid))]
                break
    if isinstance(raw, RecursionError):
        return [RecordProblem(rid, locator, "-", "invalid JSON: nested too deeply")]
    if isinstance(raw, Exception):
        return [RecordProblem(rid, locator, "-", f"invalid JSON: {raw}")]
    if not isinstance(raw, Mapping):
        return [RecordProblem(rid, locator, "-", f"expected an object, got {type(raw).__name__}")]
    if bad := _lone_surrogate(raw):
        return [RecordProblem(rid, locator, bad, "invalid Unicode: unpaired surrogate (e.g. a \\ud800 escape)")]
    try:
        out = convert(Row(raw))
        if out is not None:
            out = [out] if isinstance(out, ConflictQA) else list(out)
    except (MissingField, BadField) as exc:
        return [RecordProblem(rid, locator, exc.field, exc.message)]
    except ValidationError as exc:
        return [RecordProblem(rid, locator, ".".join(str(p) for p in err["loc"]) or "-", err["msg"])
                for err in exc.errors()]
    except (TypeError, AttributeError, KeyError, IndexError, ValueError) as exc:
        # the converter met a value shape it does not check for: still report
        # it against this record instead of ending the load with a traceback
        return [RecordProblem(rid, locator, "-", f"unexpected value ({type(exc).__name__}: {exc})")]
    if out is not None:
        records.extend(out)
    return []


def convert_rows(
    dataset: str,
    rows: Iterable[tuple[str, Any]],
    convert: Converter,
    *,
    file: str | Path | None = None,
    id_field: str | Sequence[str] | None = "id",
) -> list[ConflictQA]:
    """Convert upstream rows to records, reporting every bad one at once.

    ``convert`` gets a :class:`Row` and returns a record, several records, or
    ``None`` to skip the row deliberately. :class:`MissingField`,
    :class:`BadField` and pydantic validation errors are collected with the
    record id (``row[id_field]`` if present -- with several id fields, the
    first present -- else the locator) and raised
    together as :class:`DatasetError`; any other value error a converter
    raises is reported against its record too. No rows at all is a
    :class:`DataFileError` ("no records"); duplicate record ids are a
    :class:`DatasetError` naming where each copy came from.
    """
    records: list[ConflictQA] = []
    problems: list[RecordProblem] = []
    n_rows = 0
    where: list[str] = []  # the locator of each record
    try:
        for locator, raw in rows:
            n_rows += 1
            problems += _convert_one(locator, raw, convert, id_field, records)
            where += [locator] * (len(records) - len(where))
    except DataFileError as exc:
        raise exc.for_dataset(dataset) from None
    if problems:
        raise DatasetError(dataset, str(file) if file else None, problems)
    if not n_rows:
        raise DataFileError(dataset, file, "no records")
    seen: dict[str, list[str]] = {}
    for r, loc in zip(records, where):
        seen.setdefault(r.id, []).append(loc)
    dupes = [RecordProblem(i, locs[0], "id", f"duplicate id ({len(locs)} records: {', '.join(locs[:5])})")
             for i, locs in seen.items() if len(locs) > 1]
    if dupes:
        raise DatasetError(dataset, str(file) if file else None, dupes)
    return records


def build_dataset(
    name: str,
    records: Iterable[ConflictQA],
    *,
    location: str | None = None,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
):  # -> inspect_ai.dataset.MemoryDataset
    """An Inspect ``MemoryDataset`` from validated records.

    ``shuffle`` uses ``seed`` so the same run sees the same order; ``limit``
    keeps the first ``limit`` records after shuffling. Bad ``limit`` /
    ``shuffle`` / ``seed`` values and an empty record list are errors.
    """
    from inspect_ai.dataset import MemoryDataset

    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"dataset {name!r}: limit must be a positive integer, got {limit!r}")
    if not isinstance(shuffle, bool):
        raise ValueError(f"dataset {name!r}: shuffle must be true or false, got {shuffle!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"dataset {name!r}: seed must be an integer, got {seed!r}")
    records = list(records)
    if not records:
        raise DataFileError(name, location, "no records to evaluate")
    counts: dict[str, int] = {}
    for r in records:
        counts[r.id] = counts.get(r.id, 0) + 1
    if dupes := [RecordProblem(i, "", "id", f"duplicate id ({n} records)") for i, n in counts.items() if n > 1]:
        raise DatasetError(name, location, dupes)
    if shuffle:
        random.Random(seed).shuffle(records)
    if limit is not None:
        records = records[:limit]
    return MemoryDataset(
        [to_sample(r) for r in records], name=name, location=location, shuffled=shuffle
    )
