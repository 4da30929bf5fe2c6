"""Metamorphic test of every reader chain (issue 42, Deliver 5).

Each labelled row of the corpus is rewritten by the rewrites of
``benchmarks/reply_rewrites.py`` (>= 25 that keep its meaning, >= 10 that
change it) and read through its chain as the method reads it
(``benchmarks/reply_reading.py`` ``reader_chains()``, every unit's declared chains): under the preserving rewrites
at least 98% read as meant and no misread; under the changing ones, never the
original answer. To stay cheap the test reads, in process, the first
:data:`PER_KIND` rows of each prompt kind of the hand-written shapes and the
second real set (and of the two kinds only the first real set holds); the
benchmark reads the whole corpus.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("reply_reading", REPO / "benchmarks" / "reply_reading.py")
bench = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("reply_reading", bench)
_spec.loader.exec_module(bench)
rw = bench._rewrites()


def test_there_are_enough_rewrites_of_each_family():
    assert len(rw.TEXT_PRESERVING) + len(rw.CHOICE_PRESERVING) >= 25
    assert len(rw.CHOICE_CHANGING) + len(rw.GENERIC_CHANGING) >= 10


def test_a_rewrite_keeps_the_method_format():
    chains = {c.name: c for c in bench.reader_chains()}
    cot = chains["baselines.parse_cot+parse_choice"].compose("thinking</t>\n<a>B</a>", "**Answer:** B")
    assert cot == "thinking</t>\n**Answer:** B"
    ask = chains["baselines.parse_self_ask+parse_choice"].compose(
        "Follow up: x?\nIntermediate answer: y.\nSo the final answer is: B", "Probably B.")
    assert ask == "Follow up: x?\nIntermediate answer: y.\n\nProbably B."


PER_KIND = 10
"""Rows per prompt kind (and corpus) the test rewrites: the first ones; the benchmark takes all."""


@pytest.fixture(scope="module")
def result():
    rows = bench.load_corpus("shapes")
    if bench.SECOND.is_dir():
        rows += bench.load_corpus("second")
    if bench.REPLIES.is_dir():  # the two kinds only the first real set holds
        rows += [r for r in bench.load_corpus("real") if r["kind"] in ("conflictscore.label_list", "conflictscore.claims")]
    taken: dict = {}
    sample = [r for r in rows if taken.setdefault((r["corpus"], r["kind"]), []).append(r) or
              len(taken[(r["corpus"], r["kind"])]) <= PER_KIND]
    return bench.measure_rewrites(sample)


@pytest.mark.parametrize("chain", [r.name for r in bench.reader_chains()])
def test_chain_reads_rewritten_replies_as_meant_and_never_the_old_answer_after_a_change(chain, result):
    assert chain in result["chains"], f"no labelled row of {chain}"
    counts = result["chains"][chain]
    misses = [m for m in result["misses"] if m["chain"] == chain]
    kept = counts["preserving"]
    assert kept["misread"] == 0 and kept["crashed"] == 0, misses[:5]
    assert kept["meant"] >= 0.98 * sum(kept.values()), misses[:5]
    assert counts["changing"]["kept"] == 0 and counts["changing"]["crashed"] == 0, misses[:5]
    assert counts["changing"]["changed"] > 0


def test_every_choice_chain_sees_every_choice_rewrite(result):
    names = set(rw.CHOICE_PRESERVING) | set(rw.CHOICE_CHANGING)
    assert names <= set(result["rewrites"])
