"""Located error reports for bad data: which dataset, file, record and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


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

