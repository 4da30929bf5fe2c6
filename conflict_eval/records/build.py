"""Turning upstream rows into canonical records and an Inspect dataset, reporting every bad record at once."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from conflict_eval.records.errors import BadField, DataFileError, DatasetError, MissingField, RecordProblem
from conflict_eval.records.rows import Converter, Row
from conflict_eval.records.schema import MAX_ID_CHARS, ConflictQA, _id_too_long, to_sample

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
    first_seen: dict[str, str] = {}  # row digest -> its locator
    repeated: list[RecordProblem] = []
    try:
        for locator, raw in rows:
            n_rows += 1
            key = _row_key(raw)
            if key is not None and key in first_seen:  # a row given twice would be scored twice
                repeated.append(RecordProblem(str(raw.get(id_field)) if isinstance(id_field, str) and raw.get(id_field)
                                              else locator, locator, "-",
                                              f"duplicate record: the same row as {first_seen[key]}; remove the copy"))
            elif key is not None:
                first_seen[key] = locator
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
    in_dupes = {loc for locs in seen.values() if len(locs) > 1 for loc in locs}
    first_id: dict[str, str] = {}
    for r, loc in zip(records, where):
        first_id.setdefault(loc, r.id)
    dupes += [RecordProblem(first_id.get(p.locator, p.record_id), p.locator, p.field, p.message)
              for p in repeated if p.locator not in in_dupes]  # a copy the id check did not already name
    if dupes:
        raise DatasetError(dataset, str(file) if file else None, dupes)
    return records


def _row_key(raw: Any) -> str | None:
    """A digest of one upstream row (None for a row that did not parse)."""
    import hashlib
    import json

    if not isinstance(raw, Mapping):
        return None
    try:
        text = json.dumps(raw, sort_keys=True, ensure_ascii=True, default=str)
    except (TypeError, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()


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
