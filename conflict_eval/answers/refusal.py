"""Recognising a sincere refusal to answer, once, for every method.

:func:`find_refusal` says whether a reply refuses to answer ("I cannot
determine ...", "None of the options is correct", "The documents do not
contain enough information ...") and which words do it; :func:`reads_as_refusal`
is the yes/no form. Every reader of a choice letter uses it through
:func:`conflict_eval.answers.parse_choice`, which marks a reply with no
letter of its own that refuses as ``refused`` (not a parse failure); the
metrics count it as a refusal beside ``parse_failure`` and score it wrong.

The rule, conservative on purpose
---------------------------------
A reply is a refusal when one of its sentences (a line, or text ending in
``.``/``!``/``?``/``;``) says, in the writer's own voice, that it cannot or
will not answer:

* ``I cannot`` / ``I can't`` / ``I am unable to`` / ``I'm not able to`` /
  ``it is impossible to`` / ``there is no way to`` + *determine, answer,
  tell, say, decide, choose, select, pick, identify, know, conclude, confirm,
  verify, be certain/sure* (``I cannot determine which option is correct``);
* ``... cannot be determined / answered / decided / known / inferred``;
* ``I don't know`` / ``I do not know``, ``I'm not sure`` / ``I am uncertain``;
* ``None of the options / choices / answers / above`` ... and ``Neither of the
  options``, ``neither A nor B``;
* ``not enough`` / ``insufficient`` / ``no sufficient`` *information,
  evidence, context, data, details* (``The documents do not contain enough
  information``, ``There is insufficient evidence``, ``the evidence is
  insufficient``);
* ``it is unclear which / whether ...``, ``I have no way of knowing``;
* a whole reply that is only ``Not sure``, ``Unsure``, ``No idea``, ``idk``,
  ``No answer``, ``Can't say`` / ``Cannot tell`` (markup and final
  punctuation aside). ``Unknown``, ``None``, ``N/A`` are not refusals: they
  can be an answer.

It is *not* a refusal when the refusing words are quoted (inside double
quotes, or reported from a document: ``Document 2 says "I don't know"``,
``Document 1 states there is not enough evidence``, see
:func:`conflict_eval.answers.reported`), or when the same sentence or the
one after it goes on to answer: a contrast (``but``, ``however``,
``although``, ``that said``, ``nevertheless``, ``still``) or a guess (``my best
guess``, ``most likely``, ``probably``, ``if I had to choose``) after the
refusal words. A reply that refuses and still declares a letter is read as
that letter by ``parse_choice`` (the letter is looked for first).

One variant, an option of the same rule: ``answer_slot=True`` reads what a
reply put in its answer slot (user needs' ``<output>``), where ``Unknown``,
``None``, ``N/A``, ``It is unclear``, ``The context does not say`` mean
there is no answer (user needs' ``is_near_refusal``). Typographic quotes are
folded once, first (``answers.text_metrics.fold_quotes``).

Only the first :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters are
read; each pattern is a bounded, non-nested regex, so the time is linear.

>>> reads_as_refusal("I cannot determine the answer from the documents provided.")
True
>>> reads_as_refusal("None of the options is supported by the documents.")
True
>>> reads_as_refusal("The documents do not contain enough information to answer this.")
True
>>> reads_as_refusal("I can't be certain, but the answer is most likely B.")
False
>>> reads_as_refusal('Document 2 says "I don\\'t know", but Document 1 gives Paris.')
False
>>> reads_as_refusal("Document 1 says there is not enough evidence.")
False
>>> find_refusal("Sorry, I'm unable to answer that.").phrase
"I'm unable to answer"
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from conflict_eval.answers.reply import blank_separated, clip, reported
from conflict_eval.answers.text_metrics import fold_quotes

__all__ = ["Refusal", "find_refusal", "reads_as_refusal"]

_VERBS = (r"(?:determine|answer|tell|say|decide|choose|select|pick|identify|know|conclude|confirm|verify|find"
          r"|be[ \t]+(?:certain|sure|confident)|give[ \t]+(?:an?[ \t]+)?(?:definitive[ \t]+)?answer|make[ \t]+a[ \t]+choice)")
_CANNOT = (r"(?:cannot|can[ \t]*not|can't|could[ \t]+not|couldn't"
           r"|(?:am|are|was|were)[ \t]+(?:unable|not[ \t]+able))")
_INFO = r"(?:information|evidence|context|data|details?|facts|support)"

_REFUSAL_BRANCHES = (
    # I cannot determine / I'm unable to answer / we can't tell
    rf"\b(?:i|we)(?:[ \t]+(?:really[ \t]+|simply[ \t]+|honestly[ \t]+)?{_CANNOT}|'m[ \t]+(?:unable|not[ \t]+able))"
    rf"(?:[ \t]+to)?[ \t]+(?:reliably[ \t]+|definitively[ \t]+|confidently[ \t]+|accurately[ \t]+)?{_VERBS}\b",
    # it is impossible to tell / there is no way to know / unable to determine
    rf"\b(?:impossible|not[ \t]+possible|no[ \t]+way)[ \t]+to[ \t]+{_VERBS}\b",
    rf"\bunable[ \t]+to[ \t]+{_VERBS}\b",
    # cannot be determined
    r"\b(?:cannot|can[ \t]*not|can't|could[ \t]+not|couldn't)[ \t]+be[ \t]+(?:reliably[ \t]+|definitively[ \t]+)?"
    r"(?:determined|answered|decided|known|inferred|concluded|verified|confirmed|told)\b",
    # I don't know / I'm not sure / I am uncertain
    r"\bi[ \t]+(?:really[ \t]+)?(?:do[ \t]+not|don't|dont)[ \t]+know\b",
    r"\bi(?:[ \t]+am|'m)[ \t]+(?:not[ \t]+(?:sure|certain)|unsure|uncertain)\b",
    # None of the options ... / neither of the options / neither A nor B
    r"\bnone[ \t]+of[ \t]+the[ \t]+(?:(?:given|provided|listed|available|answer|four|five|two|three)[ \t]+)?"
    r"(?:options|choices|answers|alternatives|above)\b",
    r"\bneither[ \t]+of[ \t]+the[ \t]+(?:options|choices|answers|two)\b",
    r"\bneither[ \t]+(?:option[ \t]+)?\(?[A-Z]\)?[ \t]+nor[ \t]+(?:option[ \t]+)?\(?[A-Z]\)?(?![A-Za-z])",
    # not enough information / insufficient evidence
    rf"(?:\bnot|\bno|n't)[ \t]+(?:\w+[ \t]+)?(?:enough|sufficient|adequate)[ \t]+(?:\w+[ \t]+)?{_INFO}\b",
    rf"\b(?:insufficient|inadequate)[ \t]+(?:\w+[ \t]+)?{_INFO}\b",
    # the evidence is insufficient / the context is not enough
    rf"\b{_INFO}[ \t]+(?:is|are|was|were|seems?|remains?)[ \t]+(?:simply[ \t]+)?(?:insufficient|inadequate"
    r"|not[ \t]+(?:enough|sufficient|adequate))\b",
    # it is unclear which option is correct / I have no way of knowing
    r"\b(?:it[ \t]+is|it's|it[ \t]+remains)[ \t]+(?:unclear|not[ \t]+clear)[ \t]+(?:which|what|whether|who)\b",
    r"\bi[ \t]+have[ \t]+no[ \t]+(?:way|means)[ \t]+(?:of|to)[ \t]+(?:know|knowing|tell|telling|determin\w*)\b",
)
_REFUSAL_FIRST = "cdefinsuw"
"""Every branch starts with one of these letters (checked in tests/test_regex_lookaheads.py): the lookahead
lets the regex engine reject any other position with one test instead of trying each branch there
(the same matches, 3x faster on the reply corpus, 8x on padded and repeated replies)."""
_REFUSAL_RE = re.compile(rf"(?=[{_REFUSAL_FIRST}])(?:" + "|".join(_REFUSAL_BRANCHES) + ")", re.IGNORECASE)

#: After the refusal words, in the same sentence or the next one: the reply
#: goes on to answer anyway.
_GOES_ON_RE = re.compile(
    r"\b(?:but|however|although|though|that[ \t]+said|nevertheless|nonetheless|still|yet"
    r"|best[ \t]+guess|most[ \t]+likely|probably|likely[ \t]+(?:is|to[ \t]+be)|if[ \t]+i[ \t]+(?:had|have)[ \t]+to"
    r"|leaning[ \t]+towards?|i[ \t]+(?:would|will|'d)[ \t]+(?:go|choose|pick|select|say))\b",
    re.IGNORECASE,
)

_SENTENCE_END = ".!?;\n"

#: Whole replies that refuse in two or three words ("Not sure.", "No idea").
#: Only as the *entire* reply: "unknown", "none", "n/a" are left out, as they
#: can be a free-form answer ("The composer is unknown").
_WHOLE_REPLY_REFUSALS = frozenset({"not sure", "unsure", "no idea", "idk", "no answer", "cannot say", "can't say",
                                   "can't tell", "cannot tell", "cannot answer", "can't answer"})

#: A document reporting, earlier in the refusal's sentence ("Document 1 says
#: there is not enough evidence"): the refusal is the document's, not the reply's.
_SOURCE_SAYS_RE = re.compile(
    r"\b(?:documents?|docs?|passages?|paragraphs?|sources?|contexts?|evidence|texts?|articles?|snippets?)\b"
    r"[^.!?\n;]{0,60}?\b(?:says?|said|states?|stated|claims?|suggests?|reports?|mentions?|notes?|argues?|writes?)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Refusal:
    """A refusal found by :func:`find_refusal`."""

    phrase: str
    """The refusing words as written."""
    span: tuple[int, int]
    """Their offsets in the text read (the first ``MAX_REPLY_CHARS`` characters)."""


_WINDOW = 300
"""How far a sentence is looked at around the refusal words (bounds the time)."""


def _sentence_end(text: str, pos: int) -> int:
    """Offset just past the sentence containing ``pos`` (a line, or up to ``. ! ? ;``),
    looking at most :data:`_WINDOW` characters ahead."""
    limit = min(len(text), pos + _WINDOW)
    ends = [i for i in (text.find(c, pos, limit) for c in _SENTENCE_END) if i >= 0]
    return min(ends) + 1 if ends else limit


#: Answer slots only (``answer_slot=True``): a slot filled with these words says
#: there is no answer ("Unknown", "N/A"); in a whole reply they can be the answer.
_SLOT_WORDS = frozenset({"unknown", "unclear", "uncertain", "none", "n/a", "n / a", "not known"})

#: Answer slots only: an answer that opens by saying there is none ("Unknown
#: from the documents", "It is unclear.", "The context does not say.", "No
#: information given.").
_SLOT_OPENING_RE = re.compile(
    r"(?:sorry,?[ \t]+)?(?:unknown\b|uncertain\b|unclear\b"
    r"|(?:it[ \t]+is|it's)[ \t]+(?:unclear|not[ \t]+clear|unknown|not[ \t]+known)\b"
    r"|(?:there[ \t]+is[ \t]+|there's[ \t]+)?no[ \t]+(?:relevant[ \t]+)?(?:information|context|data|evidence)\b"
    r"|(?:the[ \t]+)?(?:provided[ \t]+|given[ \t]+)?(?:information|context|documents?|passages?|evidence)[ \t]+"
    r"(?:does|do)[ \t]+not\b)",
    re.IGNORECASE,
)

_MARKUP = " \t\r\n*_`\"'.!<>"
#: A closing courtesy line after a short refusal: not part of what the reply says.
_COURTESY_RE = re.compile(r"\n[ \t\r\n]*(?:hope (?:this|that) helps|let me know if|happy to help)[^\n]{0,80}$",
                          re.IGNORECASE)


def _sincere(text: str, start: int, end: int) -> bool:
    """Whether refusing words at ``text[start:end]`` are the reply's own: not
    quoted or reported from a document, and not followed (in their sentence or
    the next) by an answer anyway."""
    first = max(text.rfind(c, max(0, start - _WINDOW), start) for c in _SENTENCE_END) + 1
    first = max(first, start - _WINDOW)
    if reported(text, start) or _SOURCE_SAYS_RE.search(text, first, start) is not None:
        return False
    stop = _sentence_end(text, end)
    stop = _sentence_end(text, stop) if stop < len(text) else stop  # ... and the sentence after it
    return _GOES_ON_RE.search(text, end, stop) is None


def find_refusal(text: str, *, answer_slot: bool = False) -> Refusal | None:
    """The first sincere refusal in ``text`` (see the module docstring), or ``None``.

    ``answer_slot``: ``text`` is what a reply put in its answer slot (the
    ``<output>`` tag of the user-needs prompts), not a whole reply. A slot is
    meant to hold an answer, so it also refuses when it holds only
    ``Unknown``, ``Unclear``, ``Uncertain``, ``None``, ``N/A`` or ``Not
    known``, or opens by saying there is none (``Unknown from the documents``,
    ``It is unclear.``, ``No information given.``, ``The context does not
    say.``); the rest of the rule is the same.

    Typographic quotes are folded first (:func:`~conflict_eval.answers.text_metrics.fold_quotes`,
    one for one), so ``I don’t know`` reads as ``I don't know``; ``phrase``
    is given as written.

    Total: any string gives a :class:`Refusal` or ``None``; a non-string raises
    ``TypeError``.

    >>> find_refusal("Unknown.") is None, find_refusal("Unknown.", answer_slot=True).phrase
    (True, 'Unknown')
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    written = clip(text, "head")
    text = fold_quotes(written)  # one for one: offsets in ``text`` are offsets in ``written``
    courtesy = _COURTESY_RE.search(text, max(0, len(text) - 160))  # a closing line: the last characters only
    bare = (text[:courtesy.start()] if courtesy else text).strip(_MARKUP)  # "Not sure.\n\nHope this helps!"
    whole = " ".join(bare.split()).lower()
    if whole in _WHOLE_REPLY_REFUSALS or (answer_slot and whole in _SLOT_WORDS):
        start = text.index(bare)
        return Refusal(written[start:start + len(bare)], (start, start + len(bare)))
    if answer_slot:
        lead = len(text) - len(text.lstrip(_MARKUP))
        m = _SLOT_OPENING_RE.match(text, lead)
        if m is not None and _sincere(text, m.start(), m.end()):
            return Refusal(written[m.start():m.end()], m.span())
    for start, end in blank_separated(text):  # no refusal spans a run of MAX_GAP blanks
        for m in _REFUSAL_RE.finditer(text, start, end):
            if _sincere(text, m.start(), m.end()):
                return Refusal(written[m.start():m.end()], m.span())
    return None


def reads_as_refusal(text: str, *, answer_slot: bool = False) -> bool:
    """Whether ``text`` reads as a sincere refusal to answer, in any wording the
    rule above knows ("I cannot determine ...", "None of the options ...", "not
    enough information ...": :func:`find_refusal`). Not the user-needs paper's
    strict count of the answer "I don't know" only
    (``conflict_eval.scorers.user_needs.normalize.is_i_dont_know``)."""
    return find_refusal(text, answer_slot=answer_slot) is not None
