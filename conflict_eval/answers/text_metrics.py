"""Token-level answer metrics: F1, exact match and cover-EM.

All metrics compare a prediction with one or several gold answers after
*normalising* both, and return the **maximum over the gold answers** as a
float in ``[0, 1]``. ``gold`` may be a single string or a non-empty sequence
of strings (an empty sequence is a ``ValueError``: there is nothing to score
against).

Normalisers
-----------
``normalizer`` is either a name from :data:`NORMALIZERS` or any callable
``str -> str``.

Every named normaliser first folds typographic quotes and apostrophes to
ASCII (:func:`fold_quotes`: ``’ ‘ ‛ ′ ʼ`` -> ``'``, ``“ ” „ ‟ ″ « »`` ->
``"``), so a model that writes ``“Wulfsige’s farm”`` matches the gold
``Wulfsige's farm``. This departs from the official SQuAD script (and so
from the RAMDocs/MADAM-RAG and AtomR authors' normalisers), which delete
ASCII punctuation only; ``"squad_authors"`` and ``"atomr_authors"`` are those
normalisers exactly as published, for reporting the authors' figure beside
ours (RAMDocs ``strict_em`` reports both).

``"squad"`` -- :func:`normalize_squad`, the official SQuAD evaluation
normalisation after folding: lower-case, delete ASCII punctuation
(``string.punctuation``), delete the articles *a*, *an*, *the* as whole
words, collapse whitespace. Deleting punctuation glues words together:
``"state-of-the-art"`` becomes ``"stateoftheart"``.

>>> normalize_squad("“Wulfsige’s farm”"), normalize_squad_authors("“Wulfsige’s farm”")
('wulfsiges farm', '“wulfsige’s farm”')

``"atomr"`` -- :func:`normalize_atomr`, as ``"squad"`` but every ASCII hyphen
``-`` is first replaced by a space, so ``"state-of-the-art"`` becomes
``"state of art"`` (the article is then removed as a word). Only the ASCII
hyphen-minus is treated this way; other dashes (``–``, ``—``) are left alone
exactly as in the SQuAD normaliser, which does not delete non-ASCII
punctuation either.

>>> normalize_squad("The  Eiffel-Tower!")
'eiffeltower'
>>> normalize_atomr("The  Eiffel-Tower!")
'eiffel tower'

Definitions
-----------
With ``p`` and ``g`` the whitespace tokens of the normalised prediction and
gold:

* :func:`token_f1` -- SQuAD F1. ``common`` is the size of the multiset
  intersection of ``p`` and ``g`` (``Counter(p) & Counter(g)``), precision is
  ``common/len(p)``, recall ``common/len(g)``, F1 their harmonic mean (0 when
  ``common`` is 0). If either side is empty after normalisation the score is
  1.0 when *both* are empty and 0.0 otherwise (as in the SQuAD 2.0 script; the
  1.1 script would divide by zero or give 0).
* :func:`exact_match` -- 1.0 iff the normalised strings are equal.
* :func:`cover_em` -- 1.0 iff the normalised gold occurs in the normalised
  prediction **as a contiguous run of whole tokens** ("cover exact match").
  Token-boundary aware by design: gold ``"art"`` is *not* covered by
  ``"start"``, while ``"new york"`` is covered by ``"in new york city"``. A
  gold that normalises to the empty string (e.g. ``"The"``) covers only an
  empty prediction, i.e. the score falls back to exact match instead of the
  vacuous "the empty string is in everything".

Examples computed by hand (``squad`` normaliser):

>>> token_f1("the cat sat on the mat", "a cat on a mat")
0.8571428571428571

(prediction tokens ``cat sat on mat``, gold ``cat on mat``: 3 common, P=3/4,
R=3/3, F1=2*(3/4)/(3/4+1)=6/7.)

>>> token_f1("Paris", ["London", "paris."])
1.0
>>> exact_match("The Beatles!", "beatles")
1.0
>>> cover_em("It was in New York City.", "new york")
1.0
>>> cover_em("a fresh start", "art")
0.0
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable, Sequence
from typing import NamedTuple

__all__ = [
    "NORMALIZERS",
    "PRF",
    "Normalizer",
    "cover_em",
    "exact_match",
    "f1_precision_recall",
    "fold_quotes",
    "get_normalizer",
    "normalize_atomr",
    "normalize_atomr_authors",
    "normalize_squad",
    "normalize_squad_authors",
    "token_f1",
]

Normalizer = Callable[[str], str]

_PUNCT_TABLE = str.maketrans("", "", string.punctuation)
_ARTICLES_RE = re.compile(r"\b(a|an|the)\b")


_FOLD_TABLE = str.maketrans({**{c: "'" for c in "\u2018\u2019\u201a\u201b\u2032\u02bc\uff07"},
                            **{c: '"' for c in "\u201c\u201d\u201e\u201f\u2033\u00ab\u00bb\uff02"}})


def fold_quotes(text: str) -> str:
    """Typographic quotes and apostrophes as ASCII ``'`` and ``"`` (one for one,
    so offsets stay valid).

    >>> print(fold_quotes("“Wulfric’s tūn”"))
    "Wulfric's tūn"
    """
    return text.translate(_FOLD_TABLE)


def normalize_squad(text: str) -> str:
    """SQuAD normalisation after :func:`fold_quotes`: lower, drop punctuation,
    drop articles, squash spaces.

    >>> normalize_squad("An apple, a DAY; the end.")
    'apple day end'
    """
    return normalize_squad_authors(fold_quotes(text))


def normalize_squad_authors(text: str) -> str:
    """The official SQuAD normalisation as published (no quote folding).

    >>> normalize_squad_authors("An apple, a DAY; the end.")
    'apple day end'
    """
    text = text.lower()
    text = text.translate(_PUNCT_TABLE)
    text = _ARTICLES_RE.sub(" ", text)
    return " ".join(text.split())


def normalize_atomr(text: str) -> str:
    """AtomR normalisation: like :func:`normalize_squad`, hyphens become spaces first.

    >>> normalize_atomr("Jean-Paul Sartre's well-known novel")
    'jean paul sartres well known novel'
    """
    return normalize_squad(text.lower().replace("-", " "))


def normalize_atomr_authors(text: str) -> str:
    """AtomR's normalisation as published (no quote folding)."""
    return normalize_squad_authors(text.lower().replace("-", " "))


#: Named normalisers accepted by the ``normalizer=`` argument of every metric.
NORMALIZERS: dict[str, Normalizer] = {"squad": normalize_squad, "atomr": normalize_atomr,
                                      "squad_authors": normalize_squad_authors,
                                      "atomr_authors": normalize_atomr_authors}


def get_normalizer(normalizer: str | Normalizer = "squad") -> Normalizer:
    """Resolve a normaliser name (see :data:`NORMALIZERS`) or pass a callable through.

    Raises:
        ValueError: for an unknown name (the message lists the known ones).
        TypeError: for anything that is neither a string nor callable.
    """
    if isinstance(normalizer, str):
        try:
            return NORMALIZERS[normalizer]
        except KeyError:
            known = ", ".join(sorted(NORMALIZERS))
            raise ValueError(f"unknown normalizer {normalizer!r}; available: {known}") from None
    if callable(normalizer):
        return normalizer
    raise TypeError(f"normalizer must be a name or a callable, got {type(normalizer).__name__}")


class PRF(NamedTuple):
    """F1 with the precision and recall it was computed from."""

    f1: float
    precision: float
    recall: float


def _golds(gold: str | Sequence[str]) -> list[str]:
    if isinstance(gold, str):
        return [gold]
    golds = list(gold)
    if not golds:
        raise ValueError("at least one gold answer is required")
    for g in golds:
        if not isinstance(g, str):
            raise TypeError(f"gold answers must be strings, got {type(g).__name__}")
    return golds


def _check_pred(pred: str) -> None:
    if not isinstance(pred, str):
        raise TypeError(f"prediction must be a string, got {type(pred).__name__}")


def _prf_tokens(pred_tokens: list[str], gold_tokens: list[str]) -> PRF:
    if not pred_tokens or not gold_tokens:
        score = 1.0 if pred_tokens == gold_tokens else 0.0
        return PRF(score, score, score)
    common = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if common == 0:
        return PRF(0.0, 0.0, 0.0)
    precision = common / len(pred_tokens)
    recall = common / len(gold_tokens)
    return PRF(2 * precision * recall / (precision + recall), precision, recall)


def f1_precision_recall(
    pred: str, gold: str | Sequence[str], normalizer: str | Normalizer = "squad"
) -> PRF:
    """F1, precision and recall against the gold answer with the highest F1.

    Ties between gold answers go to the first one in ``gold``.

    >>> f1_precision_recall("the cat sat on the mat", "a cat on a mat")
    PRF(f1=0.8571428571428571, precision=0.75, recall=1.0)
    """
    _check_pred(pred)
    norm = get_normalizer(normalizer)
    pred_tokens = norm(pred).split()
    best: PRF | None = None
    for g in _golds(gold):
        prf = _prf_tokens(pred_tokens, norm(g).split())
        if best is None or prf.f1 > best.f1:
            best = prf
    assert best is not None
    return best


def token_f1(pred: str, gold: str | Sequence[str], normalizer: str | Normalizer = "squad") -> float:
    """SQuAD token F1, maximised over the gold answers (see module docstring).

    >>> token_f1("", "")
    1.0
    >>> token_f1("", "Paris")
    0.0
    >>> token_f1("the", "a")  # both normalise to the empty string
    1.0
    """
    return f1_precision_recall(pred, gold, normalizer).f1


def exact_match(pred: str, gold: str | Sequence[str], normalizer: str | Normalizer = "squad") -> float:
    """1.0 if the normalised prediction equals any normalised gold answer, else 0.0.

    >>> exact_match("Paris, France", ["paris", "Paris France"])
    1.0
    """
    _check_pred(pred)
    norm = get_normalizer(normalizer)
    p = norm(pred)
    return 1.0 if any(p == norm(g) for g in _golds(gold)) else 0.0


def cover_em(pred: str, gold: str | Sequence[str], normalizer: str | Normalizer = "squad") -> float:
    """1.0 if some normalised gold is a whole-token substring of the normalised prediction.

    >>> cover_em("The answer is Barack Obama.", ["Obama", "Barack H. Obama"])
    1.0
    >>> cover_em("Obamacare", "Obama")
    0.0
    """
    _check_pred(pred)
    norm = get_normalizer(normalizer)
    p = " ".join(norm(pred).split())
    padded = f" {p} "
    for g in _golds(gold):
        g_norm = " ".join(norm(g).split())
        if not g_norm:
            if not p:
                return 1.0
            continue
        if f" {g_norm} " in padded:
            return 1.0
    return 0.0
