"""Readers' many-branch regexes open with a lookahead on the letters a match can start with
(``(?=[...])``), so the regex engine rejects every other position with one test instead of
trying each branch there. The lookahead must not hide a match: every letter a match of the
rest of the pattern can start with is in it (read from the parsed pattern, ``re._parser``)."""

from __future__ import annotations

import re
from re import _constants as c

import pytest

from conflict_eval.answers import letters, refusal, reply

LOOKAHEAD_REGEXES = {
    "refusal": refusal._REFUSAL_RE,
    "answer phrase": letters._PHRASE_RE,
    "hedge": letters._HEDGE_RE,
    "revision": reply.REVISION_RE,
}


def first_letters(items) -> tuple[set[str] | None, bool]:
    """(the lower-case letters a match of the parsed ``items`` can start with, whether it can
    match empty); None for the letters when it could start with anything else (a class, a dot)."""
    out: set[str] = set()
    for op, av in items:
        if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue  # zero width
        if op is c.LITERAL:
            letter = chr(av).lower()
            return (out | {letter}, False) if letter.isalpha() else (None, False)
        if op is c.SUBPATTERN:
            got, empty = first_letters(av[-1])
        elif op is c.BRANCH:
            sets = [first_letters(branch) for branch in av[1]]
            if any(s is None for s, _ in sets):
                return None, False
            got, empty = set().union(*(s for s, _ in sets)), any(e for _, e in sets)
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT):
            got, empty = first_letters(av[2])
            empty = empty or av[0] == 0
        else:
            return None, False
        if got is None:
            return None, False
        out |= got
        if not empty:
            return out, False
    return out, True


@pytest.mark.parametrize("name", LOOKAHEAD_REGEXES)
def test_the_lookahead_holds_every_letter_a_match_starts_with(name):
    pattern = LOOKAHEAD_REGEXES[name]
    parsed = list(re._parser.parse(pattern.pattern, pattern.flags))
    op, (direction, body) = parsed[0]
    assert op is c.ASSERT and direction == 1, f"{name}: the pattern does not open with a lookahead"
    [(kind, members)] = list(body)
    assert kind is c.IN, f"{name}: the lookahead is not one character class"
    allowed = {chr(v).lower() for k, v in members if k is c.LITERAL}
    letters_, empty = first_letters(parsed[1:])
    assert letters_ is not None and not empty, f"{name}: a match could start with a character that is not a letter"
    assert letters_ <= allowed, f"{name}: a match can start with {sorted(letters_ - allowed)}, not in the lookahead"


def test_the_check_sees_a_letter_the_lookahead_misses():
    # a branch starting with "s" behind a lookahead on "i" only: the check above must fail it
    parsed = list(re._parser.parse(r"(?=[i])\b(?:i[ \t]+know|(?:so)?sorry)", re.IGNORECASE))
    assert first_letters(parsed[1:]) == ({"i", "s"}, False)
    assert first_letters(list(re._parser.parse(r"(?:my )?guess|\w+", re.IGNORECASE)))[0] is None
