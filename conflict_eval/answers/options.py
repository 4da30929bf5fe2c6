"""Conservative matching of a free-form answer to one of a question's options.

A method that asks for a short free answer ("an entity") on multiple-choice
data (KRE's e-CARE and ECQA in the user-needs grid) must decide which option
the answer names. Sharing one content word is not enough: "three eyes" does
not name "two eyes", "not falling asleep" does not name "falling asleep",
"He does not process flaxseeds" does not name "He processes flaxseeds.".
:func:`match_option` names an option only when nothing in the answer
contradicts it; otherwise the answer is ``unmatched`` (counted apart from a
wrong answer by the metric, never guessed).

Both sides are read the same way (ours; no paper gives a rule):

1. typographic quotes fold to ASCII
   (:func:`~conflict_eval.answers.text_metrics.fold_quotes`), ``n't`` becomes
   `` not``, then SQuAD normalisation (lower case, no punctuation, no
   articles);
2. the words split into **negations** (not, no, never, none, nothing,
   neither, nor, without, cannot, nobody, nowhere), **numbers** (digits, or
   number words zero-twenty, the tens, hundred, thousand, million, billion),
   stop words (pronouns, auxiliaries, prepositions, conjunctions), and
   **content words**, each reduced by a light suffix stemmer
   (:func:`stem`: ``darkness``/``dark``, ``processes``/``process``,
   ``walked``/``walk``, ``petted``/``pet``, ``eyes``/``eye``);
3. the answer's **head** is its last content word.

An answer names an option when (a) both have the same number of negations
modulo 2, (b) the same numbers, (c) the answer's head is a content word of the
option and (d) one side's content words are all among the other's. Options
are tried in three tiers, and the first tier with exactly one option decides:
the same normalised text, the same content words, then (a)-(d). Two or more
options in the deciding tier is ``unmatched`` ("several options match").

Two further rules come first (issue 42): a parenthetical gloss ending the
answer is not part of it ("moving forward (the first option)" is "moving
forward"), and an answer that joins two answers by "or" ("rest or falling
asleep", "bus depot or bridge"), each naming a different option, is a hedge
across options: ``unmatched``, never the last option named.

A self-correction follows the reader contract (docs/metrics-and-parsing.md,
rule 2, explicit by revision): when the answer after the last revision word
(:func:`~conflict_eval.answers.reply.revision_spans`: "actually", "wait",
"no,", "on second thought", ...) names an option, and the text before it names
a different one, the option after the revision wins ("bridge, no wait, bus
depot" is "bus depot"). A revision word inside a longer word ("waited") or
inside an option's own text in the answer ("wait for") is no revision; the
part after the revision is read by the rules above, so a hedge there is still
``unmatched``.

Total and linear: any strings give an :class:`OptionMatch`; each side is
read up to :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters.

>>> match_option("darkness", ["dark", "light"]).option
'dark'
>>> match_option("three eyes", ["two eyes", "names"]).reason
'no option matches'
>>> match_option("not falling asleep", ["falling asleep", "waking up"]).option is None
True
>>> match_option("He does not process flaxseeds", ["He processes flaxseeds.", "He eats them."]).option is None
True
>>> match_option("Sahara desert", ["Tom did a lot of experiments.",
...                                "A research team went to the Sahara desert."]).index
1
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from conflict_eval.answers.reply import clip, revision_spans
from conflict_eval.answers.text_metrics import fold_quotes, normalize_squad

__all__ = ["OptionMatch", "Reading", "match_option", "read_words", "stem"]

NEGATIONS = frozenset("not no never none nothing neither nor without cannot nobody nowhere".split())
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({w: str(10 * i) for i, w in
                      enumerate("_ _ _ thirty forty fifty sixty seventy eighty ninety".split()) if i >= 3})
_NUMBER_WORDS.update({"hundred": "100", "thousand": "1000", "million": "1000000", "billion": "1000000000"})
STOP_WORDS = frozenset("""
    a an the of to in on at for by with from and or but so than then as into onto about over after
    before under between through during up down out off is are was were be been being am do does did
    doing done has have had having will would can could may might shall should must it its itself
    this that these those he she they we you i me him her them us my your his their our theirs
    there here what which who whom whose why how when where very more most some any all each other
    such just also too only own same both either
    """.split())
_NUMBER_RE = re.compile(r"\d+(?:\.\d+)?")
_DECIMAL_RE = re.compile(r"(?<=\d)\.(?=\d)")


def stem(word: str) -> str:
    """A light suffix stemmer (plural, -ing/-ed, -ness, -ly, final -e), applied
    to both sides alike, so only consistency matters.

    >>> [stem(w) for w in ("darkness", "dark", "processes", "eyes", "walked", "petted", "falling", "flies")]
    ['dark', 'dark', 'process', 'eye', 'walk', 'pet', 'fall', 'fly']
    """
    w = word
    if len(w) <= 3:
        return w
    doubled = False
    if w.endswith("iness"):
        w = w[:-5] + "y"
    elif w.endswith("ness") and len(w) > 6:
        w = w[:-4]
    elif w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith(("sses", "xes", "zes", "ches", "shes")):
        w = w[:-2]
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")):
        w = w[:-1]
    elif w.endswith("ing") and len(w) > 5:
        w, doubled = w[:-3], True
    elif w.endswith("ed") and len(w) > 4:
        w, doubled = w[:-2], True
    elif w.endswith("ly") and len(w) > 5:
        w = w[:-2]
    if doubled and len(w) > 2 and w[-1] == w[-2] and w[-1] not in "aeiouylsz":
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    return w


@dataclass(frozen=True)
class Reading:
    """How one side (answer or option) reads: see the module docstring."""

    text: str
    """The normalised text."""
    content: tuple[str, ...]
    """Stemmed content words, in order."""
    negations: int
    numbers: tuple[str, ...]
    """Sorted canonical numbers."""

    @property
    def head(self) -> str | None:
        return self.content[-1] if self.content else None


def _number(token: str) -> str | None:
    if token in _NUMBER_WORDS:
        return _NUMBER_WORDS[token]
    plain = token.replace("\x00", ".")
    if _NUMBER_RE.fullmatch(plain):
        whole, _, frac = plain.partition(".")
        whole, frac = whole.lstrip("0") or "0", frac.rstrip("0")
        return f"{whole}.{frac}" if frac else whole
    return None


def read_words(text: str) -> Reading:
    """The :class:`Reading` of one side.

    >>> r = read_words("He doesn’t process three flaxseeds.")
    >>> r.content, r.negations, r.numbers
    (('process', 'flaxseed'), 1, ('3',))
    """
    text = fold_quotes(clip(text if isinstance(text, str) else "", "head")).lower()
    text = text.replace("can't", "cannot").replace("won't", "will not").replace("n't", " not")
    # a decimal point survives normalisation ("4.5" is not "45"); SQuAD drops
    # the thousands separator ("1,000" -> "1000") by itself
    norm = normalize_squad(_DECIMAL_RE.sub("\x00", text))
    content: list[str] = []
    numbers: list[str] = []
    negations = 0
    for token in norm.split():
        if token in NEGATIONS:
            negations += 1
        elif (n := _number(token)) is not None:
            numbers.append(n)
        elif token not in STOP_WORDS:
            content.append(stem(token))
    return Reading(norm, tuple(content), negations, tuple(sorted(numbers)))


@dataclass(frozen=True)
class OptionMatch:
    option: str | None
    """The option named, as given; None when ``unmatched``."""
    index: int | None
    reason: str | None = None
    """Why no option is named (``unmatched``)."""

    @property
    def matched(self) -> bool:
        return self.option is not None

    @property
    def status(self) -> str:
        return "matched" if self.option is not None else "unmatched"


def _compatible(a: Reading, o: Reading) -> bool:
    """Rules (a)-(d) of the module docstring."""
    if a.negations % 2 != o.negations % 2 or Counter(a.numbers) != Counter(o.numbers):
        return False
    if not a.content:
        return not o.content and a.numbers == o.numbers and bool(a.numbers)
    words_a, words_o = set(a.content), set(o.content)
    if a.head not in words_o:
        return False
    return words_a <= words_o or words_o <= words_a


def match_option(answer: str, options: list[str]) -> OptionMatch:
    """The option a free answer names, conservatively (see the module docstring).

    >>> match_option("lots of attention", ["bone", "lots of attention", "walked"]).index
    1
    >>> match_option("dark", ["dark room", "dark corridor"]).reason
    'several options match (0, 1)'
    >>> match_option("", ["a", "b"]).reason
    'empty answer'
    >>> match_option("rest or falling asleep", ["rest", "falling asleep"]).reason
    'hedge across options (0, 1)'
    >>> match_option("bus depot (or possibly a train station)", ["bus depot", "train station"]).option
    'bus depot'
    >>> match_option("bridge, no wait, bus depot", ["bridge", "bus depot"]).option
    'bus depot'
    """
    if not isinstance(options, (list, tuple)) or not options:
        return OptionMatch(None, None, "no options")
    answer = clip(answer if isinstance(answer, str) else "", "head")
    opening = answer.rfind("(")
    if opening > 0 and answer[:opening].strip() and _GLOSS_RE.fullmatch(answer, opening):
        answer = answer[:opening]  # "moving forward (the first option)": the gloss is not the answer
    return _revised(answer, options) or _read(answer, options)


#: "No," answering something before the answer ("No, bus depot"), or negating it ("no, not the
#: bus depot"): a "no" followed by punctuation and more text.
_NO_COMMA_RE = re.compile(r"(?<![\w'’])no[ \t]*[,.!:;]+(?=\s*\S)", re.IGNORECASE)


def _read(answer: str, options: list[str]) -> OptionMatch:
    """:func:`_read_whole`; an answer with a "no," in it is read with and without
    that "no" counted as a negation, and is ``unmatched`` when the two disagree
    ("bridge, no, not the bus depot" is not "bus depot" by two negations)."""
    plain = _NO_COMMA_RE.sub(",", answer)
    if plain == answer:
        return _read_whole(answer, options)
    counted, dropped = _read_whole(answer, options), _read_whole(plain, options)
    if counted.option != dropped.option:
        return OptionMatch(None, None, "a 'no,' that may or may not negate the answer")
    return counted


def _read_whole(answer: str, options: list[str]) -> OptionMatch:
    """The answer read whole, but a hedge across options is ``unmatched``."""
    whole = _match(answer, options)
    if whole.matched and read_words(answer).text == read_words(whole.option).text:
        return whole  # an option that is itself "X or Y"
    parts = [p for p in _OR_RE.split(answer) if p.strip()] if len(answer) <= _SHORT else []
    if len(parts) > 1:
        named = {m.index for m in (_match(p, options) for p in parts) if m.matched}
        if len(named) > 1:
            return OptionMatch(None, None, f"hedge across options ({', '.join(map(str, sorted(named)))})")
    return whole


#: A parenthetical gloss ending the answer ("(the first option)", "(or possibly a train station)"),
#: matched from its opening bracket only (one anchored match: linear).
_GLOSS_RE = re.compile(r"\([^()\n]{0,200}\)[\s.!]{0,20}")
_SHORT = 300
"""A hedge across options is a short answer; a longer one is not split on "or"."""
#: A disjunction between two answers: "rest or falling asleep", "bus depot / bridge", "either X or Y".
_OR_RE = re.compile(r"\b(?:or|either)\b|/", re.IGNORECASE)


#: Where the text before a revision splits into the answers it declared ("bridge, no", "**bridge** --").
_CLAUSE_RE = re.compile(r"[,;:.!?()\[\]\n\u2013\u2014]|\s-+\s|\s-+$")


def _revised(answer: str, options: list[str]) -> OptionMatch | None:
    """The option named after the answer's last revision, when the text before
    it names another option (the module docstring); else None."""
    folded = answer.casefold()
    spelled = [o.casefold().strip(" .") for o in options if isinstance(o, str) and o.strip(" .")]

    def in_option(s: int, e: int) -> bool:  # the answer spells an option around the word ("wait for")
        return any(o.find(folded[s:e]) >= 0 and folded.find(o, max(0, e - len(o)), s + len(o)) >= 0
                   for o in spelled)

    spans = [(s, e) for s, e in revision_spans(answer)
             if not (e < len(answer) and (answer[e].isalnum() or answer[e] == "_"))  # "waited"
             and not in_option(s, e)]
    if not spans:
        return None
    last = _read(answer[spans[-1][1]:], options)
    if not last.matched:
        return None
    before = list(answer[:spans[-1][0]])
    for s, e in spans[:-1]:
        before[s:e] = "," * (e - s)  # an earlier revision word is no answer ("wait" would name "wait for")
    named = {m.index for m in (_match(c, options) for c in _CLAUSE_RE.split("".join(before)) if c.strip())
             if m.matched}
    return last if named - {last.index} else None


def _match(answer: str, options: list[str]) -> OptionMatch:
    a = read_words(answer)
    if not a.text:
        return OptionMatch(None, None, "empty answer")
    readings = [read_words(o) if isinstance(o, str) else None for o in options]
    tiers = (
        lambda o: o.text == a.text,
        lambda o: (o.content, o.numbers) == (a.content, a.numbers) and o.negations % 2 == a.negations % 2
        and bool(a.content or a.numbers),
        lambda o: _compatible(a, o),
    )
    for test in tiers:
        found = [i for i, o in enumerate(readings) if o is not None and o.text and test(o)]
        if len(found) == 1:
            return OptionMatch(options[found[0]], found[0])
        if len(found) > 1:
            return OptionMatch(None, None, f"several options match ({', '.join(map(str, found))})")
    return OptionMatch(None, None, "no option matches")
