"""Located error reports for bad data: which dataset, file, record and field."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import re


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


# where a task argument goes, by how the task is run: a task argument on the command
# line (`inspect eval`, `conflict-eval run`) or a task's `args:` in a suite file;
# "any" for a message that cannot know (raised inside a running sample, printed by a
# command that is neither)
PATH_ARGUMENT = {
    "task": "-T {field}={file}",
    "suite": "`{field}: {file}` in that task's `args:` (a copy of the suite file; suite commands take no -T)",
    "any": "-T {field}={file} (in a suite file: `{field}: {file}` in that task's `args:`)",
}
SUITE_AGAIN = "`{field}: {file}` in that task's `args:`"
"""The suite form of the second and later arguments of one message (the note once)."""
ARG = "{path argument}"
"""Where the error's own argument (``arg_field``, ``arg_file``) goes in the text of a :class:`PathAdvice` error."""
NEEDS = {  # missing-data kind -> why the data is not here
    "required": "",  # the loader never downloads: the file must be given
    "offline": "network access is disabled (CONFLICT_EVAL_OFFLINE)",
    "download failed": "the download failed",
}


def path_argument(context: str = "task", field: str = "path", file: str = "FILE") -> str:
    """How the command that runs a task takes its argument ``field`` (``path``: the data
    file): ``context`` ``"task"`` (``inspect eval``, ``conflict-eval run``), ``"suite"``
    (suite commands) or ``"any"`` (both forms, where the context is unknown).

    >>> path_argument()
    '-T path=FILE'
    >>> path_argument("suite", file="q.jsonl").split(" (")[0]
    "`path: q.jsonl` in that task's `args:`"
    >>> path_argument("any", "scorer", "NAME")
    "-T scorer=NAME (in a suite file: `scorer: NAME` in that task's `args:`)"
    """
    return PATH_ARGUMENT[context].format(field=field, file=file)


def arg(field: str, value: str = "FILE") -> str:
    """A placeholder for the task argument ``field=value`` in the text of a
    :class:`PathAdvice` error (:data:`ARG` is the error's own argument), for
    messages that name several.

    >>> render_arguments(f"pass {arg('dataset', 'polluted_kb')} {arg('path', 'KB_FILE')}", "task")
    'pass -T dataset=polluted_kb -T path=KB_FILE'
    >>> render_arguments(f"pass {arg('dataset', 'polluted_kb')} and {arg('path', 'KB_FILE')}", "suite")
    "pass `dataset: polluted_kb` in that task's `args:` (a copy of the suite file; suite commands take no -T) \
and `path: KB_FILE` in that task's `args:`"
    """
    if "}" in field + value or "=" in field:
        raise ValueError(f"bad task argument placeholder {field!r}={value!r}")
    return f"{{arg {field}={value}}}"


_ARG_PATTERN = re.compile(r"\{arg ([^=}]+)=([^}]*)\}|" + re.escape(ARG))


def render_arguments(text: str, context: str = "task", field: str = "path", file: str = "FILE") -> str:
    """``text`` with :data:`ARG` (as ``field=file``) and every :func:`arg` placeholder
    written as ``context`` takes the argument. In a suite, the note that suite
    commands take no -T is said once; ``"any"`` writes the ``-T`` forms in place and
    the suite forms once, at the end.

    >>> render_arguments(f"run on {arg('dataset', 'kb')} {ARG}", "any", "path", "KB")
    "run on -T dataset=kb -T path=KB (in a suite file: `dataset: kb`, `path: KB` in that task's `args:`)"
    """
    seen = []

    def one(m: re.Match) -> str:
        name, value = (m[1], m[2]) if m[1] is not None else (field, file)
        form = PATH_ARGUMENT["task"] if context == "any" else SUITE_AGAIN if context == "suite" and seen \
            else PATH_ARGUMENT[context]
        seen.append((name, value))
        return form.format(field=name, file=value)

    text = _ARG_PATTERN.sub(one, text)
    if context == "any" and seen:
        text += f" (in a suite file: {', '.join(f'`{n}: {v}`' for n, v in seen)} in that task's `args:`)"
    return text


class PathAdvice:
    """An error whose text tells where a task argument goes (a data file's ``path``,
    a ``scorer``, a ``kg_triples`` file, ...): :meth:`render` writes each as the
    command that runs the task takes it (:func:`render_arguments`); ``str()``
    renders for ``shown`` (``"task"``; ``"any"``, both forms, for an error raised
    inside a running sample, which reaches the user through the eval log, past the
    command). ``conflict-eval run`` and the suite commands find one in an error's
    cause chain (:func:`data_needed`). A subclass gives :meth:`_template` (its text,
    :data:`ARG` where its own argument goes, :func:`arg` for others), ``arg_field``
    and ``arg_file``."""

    arg_field = "path"
    arg_file = "FILE"
    shown = "task"

    def _template(self) -> str:
        raise NotImplementedError

    def render(self, context: str = "task") -> str:
        """The message for a command context: ``"task"``, ``"suite"`` or ``"any"`` (:data:`PATH_ARGUMENT`)."""
        return render_arguments(self._template(), context, self.arg_field, self.arg_file)

    def __str__(self) -> str:
        return self.render(self.shown)


class OptionError(PathAdvice, ValueError):
    """A bad option, or a missing one, whose fix is a task argument: ``text`` holds
    :data:`ARG` where the argument ``field`` (``path``) goes, :func:`arg` for others.
    ``shown="any"`` for an error raised inside a running sample (:class:`PathAdvice`).
    A subclass that is also another exception type (``SourceError``) keeps it
    when pickled.

    >>> err = OptionError(f"unknown model 'x' (or give its file as {ARG})")
    >>> str(err), err.render("suite").startswith("unknown model 'x' (or give its file as `path: FILE`")
    ("unknown model 'x' (or give its file as -T path=FILE)", True)
    >>> str(OptionError(f"pass one {ARG}", field="user_need", file="...", shown="any"))
    "pass one -T user_need=... (in a suite file: `user_need: ...` in that task's `args:`)"
    """

    def __init__(self, text: str, *, field: str = "path", file: str = "FILE", shown: str = "task"):
        if shown not in PATH_ARGUMENT:
            raise ValueError(f"unknown context {shown!r}; expected one of {', '.join(PATH_ARGUMENT)}")
        self.text, self.arg_field, self.arg_file, self.shown = text, field, file, shown
        super().__init__(self.render(shown))

    def _template(self) -> str:
        return self.text

    def __reduce__(self):
        return (_option_error, (self.text, self.arg_field, self.arg_file, self.shown, type(self)))


def _option_error(text, field, file, shown="task", cls=None):
    return (cls or OptionError)(text, field=field, file=file, shown=shown)


class DataFileAdvice(PathAdvice, DataFileError):
    """A :class:`DataFileError` whose message tells where a fixed file goes
    (``message`` holds :data:`ARG`; ``file_hint`` is the file name it suggests)."""

    def __init__(self, dataset: str | None, file: str | Path | None, message: str, *, file_hint: str = "FILE",
                 field: str = "path"):
        self.arg_file, self.arg_field = file_hint, field
        DataFileError.__init__(self, dataset, file, message)
        self.problems = [RecordProblem("-", "", "-", render_arguments(message, "task", field, file_hint))]

    def _template(self) -> str:
        return DataFileError._text(self)

    def _text(self) -> str:
        return self.render()

    def __reduce__(self):
        return (_data_file_advice, (self.dataset, self.file, self.message, self.arg_file, self.arg_field))

    def for_dataset(self, dataset: str) -> DataFileError:
        return self if self.dataset else DataFileAdvice(dataset, self.file, self.message, file_hint=self.arg_file,
                                                        field=self.arg_field)


def _data_file_advice(dataset, file, message, file_hint, field):
    return DataFileAdvice(dataset, file, message, file_hint=file_hint, field=field)


class DataNeeded(PathAdvice, ValueError):
    """A loader cannot get its data here: a local file must be given as the task's
    ``field`` argument (``path``). ``kind`` says why (:data:`NEEDS`: ``required``,
    ``offline``, ``download failed``); ``dataset`` is the loader, ``file`` the upstream
    file wanted (a URL or hub path), ``record`` a record id where one record is the
    cause, ``detail`` what to fetch and from where. The message is rendered for the
    command that runs the task (:meth:`render`): ``-T path=FILE`` by default, a
    suite's ``args:`` for suite commands."""

    def __init__(self, dataset: str | None, kind: str, detail: str = "", *, file: str | None = None,
                 record: str | None = None, field: str = "path"):
        if kind not in NEEDS:
            raise ValueError(f"unknown missing-data kind {kind!r}; expected one of {', '.join(NEEDS)}")
        self.dataset, self.kind, self.detail, self.file, self.record, self.field = \
            dataset, kind, detail, file, record, field
        super().__init__(self.render())

    def render(self, context: str = "task") -> str:
        """The message for a command context: ``"task"``, ``"suite"`` or ``"any"`` (:data:`PATH_ARGUMENT`)."""
        arg = path_argument(context, self.field)
        who = " ".join(x for x in (self.dataset, f"record {self.record!r}" if self.record else None) if x) \
            or self.file or "this dataset"
        if self.kind == "required":
            return f"{who} needs {arg}" + (f": {self.detail}" if self.detail else "")
        wanted = f"{who} ({self.file})" if self.file and who != self.file else who
        return (f"{wanted}: {NEEDS[self.kind]}" + (f": {self.detail}" if self.detail else "")
                + f"; give a local copy as {arg}")

    def __reduce__(self):
        return (_data_needed, (self.dataset, self.kind, self.detail, self.file, self.record, self.field,
                               type(self)))


def data_needed(exc: BaseException | None) -> PathAdvice | None:
    """The :class:`PathAdvice` (:class:`DataNeeded` and the others whose text
    names the path argument) that ``exc`` is or was raised from (its cause
    chain), if any: the commands render it for how they take the file."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, PathAdvice):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


def _data_needed(dataset, kind, detail, file, record, field, cls=None):
    return (cls or DataNeeded)(dataset, kind, detail, file=file, record=record, field=field)


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

