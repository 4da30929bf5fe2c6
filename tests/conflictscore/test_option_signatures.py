"""ConflictScore's options are one definition (``pipeline.Options``): every
function that takes them as parameters is checked against it when imported
(``takes_options``), and none is missed."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path
from typing import Literal

import pytest

from conflict_eval.scorers.conflictscore.pipeline import (
    DEFAULTS,
    ONE_CLAIM,
    OPTION_SITES,
    Backend,
    ClaimMode,
    Labelling,
    Options,
    option_signature_problems,
    takes_options,
)

ROOT = Path(__file__).resolve().parents[2]
UNITS = {"plugins": "conflict_eval.plugins", "scorers": "conflict_eval.scorers", "tasks": "conflict_eval.tasks"}


def _sites() -> list[tuple[str, str]]:
    """(module, function) of every function in the units with ConflictScore's
    labelling options as parameters (``labelling`` and ``grader_max_tokens``)."""
    out = []
    for folder, package in UNITS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef):
                    names = {a.arg for a in node.args.args + node.args.kwonlyargs}
                    if {"labelling", "grader_max_tokens"} <= names:
                        module = ".".join((package, *path.relative_to(ROOT / folder).with_suffix("").parts))
                        out.append((module, node.name))
    return out


def test_every_function_with_the_options_is_checked_against_options():
    sites = _sites()
    assert len(sites) >= 6, sites  # metric, regeneration, detector, three tasks
    for module, name in sites:
        importlib.import_module(module)  # a drifted signature raises here
        assert f"{module}.{name}" in OPTION_SITES, f"{module}.{name} takes ConflictScore options without @takes_options"


def _ok(claims: ClaimMode = "atomic", k: int = 3, labelling: Labelling = "pairwise", backend: Backend = "llm",
        nli_model: str | None = None, grader_max_tokens: int | None = 512, grader_dedupe: bool = True,
        judge_repeats: int = 1, judge_swap: bool = False, judge_temperature: float = 1.0, path: str = ""):
    return Options.of(locals())


def _drifted(claims: str = "whole", k: int = 3, labelling: Labelling = "pairwise", backend: Backend = "llm",
             nli_model: str | None = None, grader_max_tokens: int | None = 512, judge_repeats: int = 1,
             judge_swap: bool = False, judge_temperature: int = 1):
    return None


def test_a_drift_is_named():
    assert option_signature_problems(_ok) == [] and _ok() == DEFAULTS
    assert _ok(claims="whole", path="x") == ONE_CLAIM
    problems = option_signature_problems(_drifted)
    assert problems == ["claims defaults to 'whole', Options to 'atomic'",
                        "claims is typed str, Options ClaimMode",
                        "no parameter grader_dedupe",
                        "judge_temperature defaults to 1, Options to 1.0",
                        "judge_temperature is typed int, Options float"]
    assert option_signature_problems(_drifted, ONE_CLAIM, without={"grader_dedupe"})[0] == \
        "claims is typed str, Options ClaimMode"
    with pytest.raises(TypeError, match="no parameter grader_dedupe"):
        takes_options()(_drifted)


def test_the_types_are_the_options_types():
    assert ClaimMode == Literal["atomic", "whole", "salient", "sentences"]
    assert Options.of({"judge_swap": True, "k": 5}, without={"k"}) == Options(judge_swap=True)
