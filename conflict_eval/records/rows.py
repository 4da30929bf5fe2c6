"""Reading upstream rows: the read-only :class:`Row` view and field coercions with located errors."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from conflict_eval.records.errors import BadField, MissingField
from conflict_eval.records.schema import LETTERS, MAX_ID_CHARS, ConflictQA, _id_too_long


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

    def options(self, key: str) -> list[str]:
        """The options of a multiple-choice item: a list of at least 2
        non-empty strings, kept as written."""
        value = self.list(key)
        if len(value) < 2 or not all(isinstance(o, str) and o.strip() for o in value):
            raise BadField(key, "expected a list of at least 2 non-empty strings")
        return value

    def letter(self, key: str, options: list[str], unlike: str | None = None) -> str:
        """The option letter in field ``key`` (``A`` for ``options[0]``...;
        white space and case ignored). With ``unlike``, the key of the gold
        letter, the two must differ: a distractor is never the gold option."""
        value = self.text(key).strip().upper()
        allowed = LETTERS[: len(options)]
        if value not in allowed:
            raise BadField(key, f"expected one of {list(allowed)}, got {self[key]!r}")
        if unlike is not None and value == self.letter(unlike, options):
            raise BadField(key, f"option {value!r} equals {unlike} (the gold option)")
        return value


def content_id(prefix: str, *texts: str) -> str:
    """``<prefix>-<first 10 hex of the sha1 of texts joined by newlines>``: an
    id a row without one keeps in the full upstream file and in any subset of it."""
    digest = hashlib.sha1("\n".join(texts).encode()).hexdigest()[:10]
    return f"{prefix}-{digest}"


def numbered() -> Callable[[str], str]:
    """A function returning an id unchanged the first time and as
    ``<id>-2``, ``<id>-3``... after, so rows with the same content keep
    distinct ids (in file order)."""
    seen: dict[str, int] = {}

    def number(base: str) -> str:
        seen[base] = seen.get(base, 0) + 1
        return base if seen[base] == 1 else f"{base}-{seen[base]}"

    return number


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

