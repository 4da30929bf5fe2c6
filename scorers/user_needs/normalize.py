"""Answer normalisation for user-need scoring: numbers, yes/no, refusals, entities.

The paper restricts answers to "a numeric value, a boolean ("yes" or "no"), or
an entity" (Appendix B) but gives no matching rule; ours (also in README.md):

* **refusal**: "I don't know" in any case/punctuation ("i dont know", "I do not
  know.") -> ``idk``;
* **yes/no**: "Yes", "yes.", "Yes, it is" -> ``yes`` (only the first word counts
  when it is yes/no followed by punctuation);
* **numbers**: digits with thousands separators or decimals, or a number word
  up to twenty / a tens word -> the canonical number (``"1,000"`` -> ``1000``,
  ``"4.0"`` -> ``4``, ``"four"`` -> ``4``). A number followed by a unit
  (``"4 apples"``) is not a bare number and is compared as an entity;
* **entities**: SQuAD normalisation (lower case, no punctuation or articles).

:func:`canonical` takes any string and never raises; numbers are
canonicalised as text (leading zeros, separators and trailing decimal zeros
dropped), so a 5,000-digit "number" is not converted to a float; only the
first :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are read.
"""

from __future__ import annotations

import re

from conflict_eval.answers import clip
from conflict_eval.answers.refusal import find_refusal
from conflict_eval.answers.text_metrics import fold_quotes, normalize_squad

_WORDS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
          "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split()
NUMBER_WORDS = {w: i for i, w in enumerate(_WORDS)}
NUMBER_WORDS.update({w: 10 * i for i, w in enumerate("x x x thirty forty fifty sixty seventy eighty ninety".split()) if i >= 3})
NUMBER_WORDS["hundred"] = 100

_NUMBER_RE = re.compile(r"[-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?")
_REFUSALS = {"i dont know", "i do not know", "idk"}


def _strip(text: str) -> str:
    return fold_quotes(text).strip().strip("*_`\"' ").strip()


def _canonical_number(plain: str) -> str:
    """``"+1,000.50"`` -> ``"1000.5"``, ``"4.0"`` -> ``"4"``, ``"-0"`` -> ``"0"``
    (what float formatting gave for ordinary numbers, exact for any length)."""
    sign = "-" if plain.startswith("-") else ""
    whole, _, frac = plain.lstrip("+-").replace(",", "").partition(".")
    whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
    if whole == "0" and not frac:
        sign = ""
    return f"{sign}{whole}.{frac}" if frac else f"{sign}{whole}"


def canonical(text: str) -> str:
    """A comparable form: ``idk``, ``yes``/``no``, a number, or the SQuAD-normalised text.

    >>> canonical("I don't know."), canonical("Yes, it is"), canonical("1,000"), canonical("four")
    ('idk', 'yes', '1000', '4')
    >>> canonical("4.0"), canonical("The Sun")
    ('4', 'sun')
    """
    raw = _strip(clip(text, "head"))
    plain = raw.rstrip(".!")
    if _NUMBER_RE.fullmatch(plain):
        return _canonical_number(plain)
    # quotes are folded (_strip); normalize_squad deletes ' ("don't" -> "dont"); double quotes part words here
    squad = normalize_squad(raw.replace('"', " "))
    if squad in _REFUSALS:
        return "idk"
    if squad in NUMBER_WORDS:
        return str(NUMBER_WORDS[squad])
    first = re.match(r"(yes|no)\b\s*[,.;:!]", raw, re.IGNORECASE)
    if squad in ("yes", "no"):
        return squad
    if first:
        return first.group(1).lower()
    return squad


def is_i_dont_know(text: str) -> bool:
    """The paper's refusal, read strictly: the answer is "I don't know" (any case
    or punctuation), "I do not know" or "idk", and nothing else. The headline
    refusal count. (Named for what it counts: not the toolkit's general refusal
    recogniser, :func:`conflict_eval.answers.refusal.reads_as_refusal`.)

    >>> [is_i_dont_know(t) for t in ("I DON'T KNOW.", "idk", "I don't know the answer.")]
    [True, True, False]
    """
    return canonical(text) == "idk"


def is_near_refusal(text: str) -> bool:
    """A refusal in other words ("I don't know the answer.", "I'm not sure",
    "Not enough information"), not counted by :func:`is_i_dont_know`. Reported
    beside the strict count, never folded into it (ours; the paper counts
    "I don't know" only).

    >>> [is_near_refusal(t) for t in ("I don't know the answer.", "I'm not sure", "I don't know", "Paris")]
    [True, True, False, False]
    """
    if is_i_dont_know(text):
        return False
    # the shared recogniser, reading an answer slot ("Unknown", "The context
    # does not say." refuse there); the same one parse_output reads an untagged
    # reply by, so such a reply is counted as a near refusal
    return find_refusal(text, answer_slot=True) is not None


def option_match(answer: str, options: list[str]):
    """The :class:`~conflict_eval.answers.options.OptionMatch` of a free answer
    against multiple-choice options (KRE's e-CARE and ECQA): the option equal
    to it after :func:`canonical`, else the conservative match of
    :func:`conflict_eval.answers.options.match_option` (a negation, a
    different number or a head word absent from the option is never a match;
    "darkness" names "dark"). e-CARE's options are whole sentences while the
    Appendix B instruction asks for an entity, so "Sahara desert" names "A
    research team went to the Sahara desert ..." (ours: the user-needs paper
    has no multiple-choice data; KRE scores the chosen option). An answer that
    names no option, or several, is ``unmatched``; a self-correction names the
    option after it ("bridge, no wait, bus depot" is "bus depot")."""
    from conflict_eval.answers.options import OptionMatch
    from conflict_eval.answers.options import match_option as _match

    want = canonical(answer)
    if isinstance(options, (list, tuple)):
        for i, o in enumerate(options):
            if isinstance(o, str) and want and canonical(o) == want:
                return OptionMatch(o, i)
    return _match(answer, list(options) if isinstance(options, (list, tuple)) else [])


def match_option(answer: str, options: list[str]) -> str | None:
    """The option ``answer`` names (:func:`option_match`), or None when unmatched.

    >>> match_option("Sahara desert", ["The tourists went to the desert.", "They stayed home."]) is None
    True
    >>> match_option("the desert", ["The tourists went to the desert.", "They stayed home."])
    'The tourists went to the desert.'
    >>> match_option("three eyes", ["two eyes", "names"]) is None
    True
    """
    return option_match(answer, options).option


def matches(pred: str, golds: list[str]) -> bool:
    """Whether ``pred`` equals one of ``golds`` after :func:`canonical`."""
    p = canonical(pred)
    return bool(p) and any(p == canonical(g) for g in golds)
