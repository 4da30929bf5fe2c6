"""How a command tells the user to give a task argument: the rendering of an
:class:`~conflict_eval.records.errors.ArgumentError` (its ``parts``, text and
:class:`~conflict_eval.records.errors.TaskArgument` pieces) for the command
that runs the task.

* ``"task"`` -- ``inspect eval`` and ``conflict-eval run``: ``-T name=value``
  (the error's own ``str()``);
* ``"suite"`` -- the suite commands, which take no ``-T``: ``name: value`` in
  the task's ``args:`` of a copy of the suite file (the note said once);
* ``"any"`` -- where the command is not known (a message printed for both):
  the ``-T`` forms in place, the suite forms once at the end.

``conflict-eval run`` and the suite commands find the error in an exception's
cause chain (:func:`~conflict_eval.records.errors.argument_error`) and print
:func:`render` of it; the suite's cost estimate shows it on a task's row.
"""

from __future__ import annotations

from conflict_eval.records.errors import ArgumentError, TaskArgument

CONTEXTS = ("task", "suite", "any")
NOTE = " (a copy of the suite file; suite commands take no -T)"

__all__ = ["CONTEXTS", "NOTE", "argument_text", "render"]


def _suite(argument: TaskArgument) -> str:
    return f"`{argument.name}: {argument.value}` in that task's `args:`"


def render(parts: ArgumentError | tuple, context: str = "task") -> str:
    """The message of an :class:`ArgumentError` (or its ``parts``) as the command
    ``context`` takes task arguments.

    >>> err = ArgumentError("run on ", TaskArgument("dataset", "kb"), " ", TaskArgument("path", "KB"))
    >>> render(err)
    'run on -T dataset=kb -T path=KB'
    >>> render(err, "any")
    "run on -T dataset=kb -T path=KB (in a suite file: `dataset: kb`, `path: KB` in that task's `args:`)"
    >>> render(err, "suite") == f"run on `dataset: kb` in that task's `args:`{NOTE} `path: KB` in that task's `args:`"
    True
    """
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; expected one of {', '.join(CONTEXTS)}")
    parts = parts.parts if isinstance(parts, ArgumentError) else tuple(parts)
    if context != "suite":
        return str(ArgumentError(*parts, in_sample=context == "any"))
    out, first = [], True
    for p in parts:
        if isinstance(p, TaskArgument):
            out.append(_suite(p) + (NOTE if first else ""))
            first = False
        else:
            out.append(p)
    return "".join(out)


def argument_text(argument: TaskArgument, context: str = "task") -> str:
    """One argument as ``context`` takes it (e.g. a converter's "use it with: ...").

    >>> argument_text(TaskArgument("path", "q.jsonl"), "any")
    "-T path=q.jsonl (in a suite file: `path: q.jsonl` in that task's `args:`)"
    """
    return render((argument,), context)
