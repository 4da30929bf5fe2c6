"""Hook specifications: what a conflict-eval plugin can provide.

A plugin is any module or object with functions decorated by
``@conflict_eval.hookimpl``, published under the ``conflict_eval`` entry-point
group. Built-in plugins implement the same hooks and are registered in code
(``components.manager.DEFAULT_PLUGINS``).

The ``register`` hooks are called once per plugin with no arguments and
return a mapping from a public name to a factory; each is a kind of component
(``components.manager.KINDS``). The other three hand a plugin a part of the
core to extend: the command line (``add_cli_commands``), the lm-eval
export (``lmeval_exports``) and the checks of reply readers
(``reply_readers``). None of the hooks is ``firstresult`` or
``historic``: the results of all plugins are merged, and a name registered
by two plugins is an error that names both.

Factories are called with keyword arguments only (``-T name=value`` on the
Inspect command line). Keep heavy imports (torch, transformers) inside the
factory bodies so listing plugins stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from conflict_eval.components.markers import hookspec


@hookspec
def conflict_eval_register_methods() -> Mapping[str, Callable[..., Any]]:
    """Register conflict-resolution methods.

    Returns:
        ``{name: factory}`` where ``factory(**options)`` returns an Inspect
        ``Solver`` (single- or multi-turn). The solver reads the sample's
        canonical record with ``state.metadata_as(ConflictQA)`` and leaves its
        final answer in ``state.output``.
    """


@hookspec
def conflict_eval_register_datasets() -> Mapping[str, Callable[..., Any]]:
    """Register datasets.

    Returns:
        ``{name: factory}`` where ``factory(path=None, **options)`` returns an
        Inspect ``Dataset`` whose samples were built from validated
        :class:`conflict_eval.records.ConflictQA` records (use
        :func:`conflict_eval.records.build_dataset`). ``path`` reads a local
        file in the upstream format instead of downloading.
    """


@hookspec
def conflict_eval_register_metrics() -> Mapping[str, Callable[..., Any]]:
    """Register metrics.

    Returns:
        ``{name: factory}`` where ``factory(**options)`` returns an Inspect
        ``Scorer``. Scorers that only need the final answer text and the
        target can also be used by ``conflict-eval score`` on a predictions
        file.
    """


@hookspec
def conflict_eval_register_sources() -> Mapping[str, Callable[..., Any]]:
    """Register knowledge sources (retrieval back-ends methods can query).

    Returns:
        ``{name: factory}`` where ``factory(**options)`` returns an object with
        ``name`` and ``search(query: str, k: int) -> list[Hit]`` (see
        ``conflict_eval.retrieval.sources.KnowledgeSource``), e.g. a text
        corpus, a knowledge graph or a web search adapter.
    """


@hookspec
def conflict_eval_add_cli_commands(sub: Any) -> None:
    """Add a plugin's own ``conflict-eval`` sub-commands (``conflict-eval atomr
    check-trees``, ``conflict-eval user-needs curves``, ...).

    Args:
        sub: the ``argparse`` sub-parsers action of the ``conflict-eval`` parser.
            Add commands with ``sub.add_parser(name, help=...)`` and give each
            ``set_defaults(fn=handler)``, where ``handler(args) -> int`` returns the
            exit code (raise ``ValueError`` for a user error: exit 2, one line).

    Called once per plugin when the command line is built, after the core's own
    commands; plugins given with ``--plugin`` or ``CONFLICT_EVAL_PLUGINS`` take
    part. A command name another plugin or the core already uses is an error.
    Import the command's implementation inside its handler, so building the
    parser stays cheap. Returns nothing.
    """


@hookspec
def conflict_eval_lmeval_exports() -> Mapping[str, Callable[..., Any]]:
    """Functions the lm-eval task YAMLs call (``!function utils.<name>``).

    Returns:
        ``{name: function}``: prompts (``doc -> str``), result processors
        (``(doc, results) -> {metric: value}``) and what the export asks of a
        unit (``user_need_names() -> tuple``, ``user_need_system(doc) -> str``).
        ``conflict_eval/lmeval/utils.py`` serves them by name, so the export
        names no unit module. A name exported by two plugins is an error.
    """


@hookspec
def conflict_eval_reply_readers() -> Any:
    """Declare the readers of the unit's model replies.

    Returns:
        a :class:`conflict_eval.answers.readers.ReplyReaders`: ``parsers``
        (:class:`conflict_eval.answers.fuzz.ParserEntry` lines: the function by
        import path, how to call it on one reply, its documented failure, how a
        failure is scored), ``chains`` (:class:`conflict_eval.answers.readers.Chain`:
        the reader chain applied to reply corpus rows of some ``kinds``) and
        ``shapes`` (JSON Lines files of labelled hand-written replies of those
        kinds). The fuzz and linear-time tests, ``benchmarks/parser_robustness.py``,
        ``benchmarks/reply_reading.py`` (read as meant, rewrites) and
        ``tests/test_reply_corpus.py`` collect them through
        ``components.manager.reply_readers()``, so the core names no unit's
        reader. A parser or chain name declared twice is an error.
    """
