"""Command-line options shared by the commands: the one ``NAME=VALUE`` parser
(``-T`` task/metric options, ``-M`` model arguments) and Inspect's
environment-variable defaults for flags."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["DEFAULT_MODEL", "OptionError", "env_default", "parse_pairs", "positive_number", "print_json"]

DEFAULT_MODEL = "conflict_eval/smollm2"


class OptionError(ValueError):
    """A ``NAME=VALUE`` option without ``=``; the message names the flag."""


def parse_pairs(pairs: Sequence[str], flag: str = "-T") -> dict[str, Any]:
    """``["a=1", "b=x"]`` as ``{"a": 1, "b": "x"}``: values read as YAML (an
    empty value stays ``""``); raises :class:`OptionError` naming ``flag``
    for an item without ``=``, and ``yaml.YAMLError`` for a value YAML cannot read.

    >>> parse_pairs(["limit=3", "name=a b", "flag="])
    {'limit': 3, 'name': 'a b', 'flag': ''}
    >>> parse_pairs(["limit"])
    Traceback (most recent call last):
    ...
    conflict_eval.cli.options.OptionError: -T expects name=value, got 'limit'
    """
    import yaml

    options: dict[str, Any] = {}
    for pair in pairs:
        if "=" not in pair:
            raise OptionError(f"{flag} expects name=value, got {pair!r}")
        key, value = pair.split("=", 1)
        options[key.strip()] = yaml.safe_load(value) if value else value
    return options


def positive_number(text: str) -> float:
    """An argparse ``type`` for dollars and limits: a finite number > 0, the rule
    of a suite file's budget and limits (``runs.spec_checks.positive_number_problem``;
    ``nan``, ``inf`` and ``0`` are refused with argparse's one-line error, exit 2).

    >>> positive_number("2.5")
    2.5
    >>> positive_number("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a positive number (finite: no NaN or infinity), got 'nan'
    """
    import argparse

    from conflict_eval.runs.spec_checks import positive_number_problem

    try:
        value: object = float(text)
    except ValueError:
        value = text  # not a number: the rule refuses it
    if (bad := positive_number_problem(value, repr(text))) is not None:
        raise argparse.ArgumentTypeError(bad)
    return value


def env_default(value: Any, var: str, convert=str) -> Any:
    """A flag's value, else Inspect's environment variable for it (as ``inspect eval`` does)."""
    import os

    if value is not None:
        return value
    raw = os.environ.get(var)
    if raw is None or not raw.strip():
        return None
    try:
        return convert(raw.strip())
    except ValueError:
        raise ValueError(f"environment variable {var}={raw!r} is not a valid value") from None


def print_json(args: Any, data: Any, **dumps: Any) -> None:
    """Print a ``--json`` result on the command's real standard output (``main``
    sends everything else printed during a ``--json`` command to stderr)."""
    import json
    import sys

    print(json.dumps(data, **dumps), file=getattr(args, "json_out", None) or sys.stdout)
