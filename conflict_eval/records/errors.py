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


# errors whose fix is a task argument: the argument is data; the commands render it


@dataclass(frozen=True)
class TaskArgument:
    """A task argument an error tells the user to give: its ``name`` and the
    ``value`` to give (a placeholder such as ``FILE``, or the value itself).
    ``str()`` is how ``inspect eval`` and ``conflict-eval run`` take it (the
    error's text where no command of ours is between it and the user); a suite
    file takes it as ``name: value`` in the task's ``args:``
    (``conflict_eval.runs.arguments`` renders both).

    >>> str(TaskArgument("path")), str(TaskArgument("paths", "{ambigdocs: FILE}"))
    ('-T path=FILE', "-T paths='{ambigdocs: FILE}'")
    """

    name: str
    value: str = "FILE"

    def __str__(self) -> str:
        value = f"'{self.value}'" if any(c.isspace() for c in self.value) else self.value
        return f"-T {self.name}={value}"


class ArgumentError(ValueError):
    """A bad or missing input whose fix is a task argument. The message is
    data: ``parts``, text and :class:`TaskArgument` pieces in order; the first
    argument is the error's own (:attr:`argument`, :attr:`value`).
    ``in_sample``: raised inside a running sample, so the user reads it in the
    eval log, past any command; ``str()`` then also lists the suite form.
    ``str()`` writes each argument as ``inspect eval`` takes it; a command that
    takes arguments otherwise (the suite commands) renders ``parts`` itself
    (``conflict_eval.runs.arguments.render``), finding the error in an
    exception's cause chain (:func:`argument_error`). A subclass that is also
    another exception type (``retrieval.servers.SourceAdvice``) keeps it when
    pickled.

    >>> err = ArgumentError("unknown model 'x' (or give its file as ", TaskArgument("path"), ")")
    >>> str(err), err.argument, err.value
    ("unknown model 'x' (or give its file as -T path=FILE)", 'path', 'FILE')
    >>> str(ArgumentError("pass one ", TaskArgument("user_need", "..."), in_sample=True))
    "pass one -T user_need=... (in a suite file: `user_need: ...` in that task's `args:`)"
    """

    def __init__(self, *parts: str | TaskArgument, in_sample: bool = False):
        self.parts, self.in_sample = parts, in_sample
        # the full text as the exception's argument too: Inspect's log shows repr() of an error in a sample;
        # not super(): a subclass may mix in DataFileError
        ValueError.__init__(self, str(self))

    @property
    def arguments(self) -> list[TaskArgument]:
        return [p for p in self.parts if isinstance(p, TaskArgument)]

    @property
    def argument(self) -> str | None:
        """The name of the error's own argument (its first)."""
        return self.arguments[0].name if self.arguments else None

    @property
    def value(self) -> str | None:
        """The value (or placeholder) of the error's own argument."""
        return self.arguments[0].value if self.arguments else None

    def __str__(self) -> str:
        text = "".join(map(str, self.parts))
        if self.in_sample and self.arguments:
            text += (f" (in a suite file: {', '.join(f'`{a.name}: {a.value}`' for a in self.arguments)} "
                     "in that task's `args:`)")
        return text

    def __reduce__(self):  # the fields as they are (a subclass's constructor takes other arguments)
        return (_restored, (type(self), self.args, self.__dict__))


def _restored(cls, args, state):
    err = cls.__new__(cls, *args)
    err.args = args
    err.__dict__.update(state)
    return err


class DataFileAdvice(ArgumentError, DataFileError):
    """A :class:`DataFileError` whose message tells where a fixed file goes:
    ``message`` is text and :class:`TaskArgument` pieces (the file's argument,
    ``path`` with the file name it suggests)."""

    def __init__(self, dataset: str | None, file: str | Path | None, *message: str | TaskArgument):
        DataFileError.__init__(self, dataset, file, "".join(map(str, message)))
        self.message_parts = message
        ArgumentError.__init__(self, DataFileError._text(self).removesuffix(self.message), *message)
        self.problems = [RecordProblem("-", "", "-", self.message)]

    def for_dataset(self, dataset: str) -> DataFileError:
        return self if self.dataset else DataFileAdvice(dataset, self.file, *self.message_parts)


NEEDS = {  # missing-data kind -> why the data is not here
    "required": "",  # the loader never downloads: the file must be given
    "offline": "network access is disabled (CONFLICT_EVAL_OFFLINE)",
    "download failed": "the download failed",
}


class DataNeeded(ArgumentError):
    """A loader cannot get its data here: a local file must be given as the task's
    ``field`` argument (``path``). ``kind`` says why (:data:`NEEDS`: ``required``,
    ``offline``, ``download failed``); ``dataset`` is the loader, ``file`` the upstream
    file wanted (a URL or hub path), ``record`` a record id where one record is the
    cause, ``detail`` what to fetch and from where.

    >>> str(DataNeeded("ambigdocs", "required", "test.json of AmbigDocs"))
    'ambigdocs needs -T path=FILE: test.json of AmbigDocs'
    """

    def __init__(self, dataset: str | None, kind: str, detail: str = "", *, file: str | None = None,
                 record: str | None = None, field: str = "path"):
        if kind not in NEEDS:
            raise ValueError(f"unknown missing-data kind {kind!r}; expected one of {', '.join(NEEDS)}")
        self.dataset, self.kind, self.detail, self.file, self.record, self.field = \
            dataset, kind, detail, file, record, field
        who = " ".join(x for x in (dataset, f"record {record!r}" if record else None) if x) or file or "this dataset"
        detail = f": {detail}" if detail else ""
        if kind == "required":
            super().__init__(f"{who} needs ", TaskArgument(field), detail)
        else:
            wanted = f"{who} ({file})" if file and who != file else who
            super().__init__(f"{wanted}: {NEEDS[kind]}{detail}; give a local copy as ", TaskArgument(field))


def argument_error(exc: BaseException | None) -> ArgumentError | None:
    """The :class:`ArgumentError` (a :class:`DataNeeded`, a :class:`DataFileAdvice`,
    ...) that ``exc`` is or was raised from (its cause chain), if any: the
    commands render it for how they take arguments."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, ArgumentError):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


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

