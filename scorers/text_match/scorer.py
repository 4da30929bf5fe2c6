"""Token F1, exact match and cover-EM over free-form answers.

The answer is taken from the reply by :func:`extract_answer` (the ``<a>…</a>``
tag or the AtomR answer list when present, else the whole reply) and compared
with every gold answer in the target; the best match counts (SQuAD
convention). ``normalizer`` selects ``squad`` (default) or ``atomr``
normalisation, see :mod:`conflict_eval.answers.text_metrics`.
"""

import re

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer, stderr
from inspect_ai.solver import TaskState

from conflict_eval.answers import clip
from conflict_eval.answers.text_metrics import NORMALIZERS, cover_em, exact_match, token_f1
from conflict_eval.answers.reasons import NO_RESPONSE

_A_OPEN = re.compile(r"<a>", re.I)
_A_CLOSE = re.compile(r"</a>", re.I)
_ATOMR_LIST = re.compile(r"Answer List:", re.I)


def extract_answer(reply: str) -> str:
    """The answer part of a reply: the body of the last ``<a>`` tag (an
    unclosed last tag runs from its last opening ``<a>`` to the end), else the items of the last AtomR
    ``Answer List: [...]``, else the whole reply stripped.

    Total and linear (plain searches, no backtracking on thousands of
    unclosed tags); only the last :data:`~conflict_eval.answers.MAX_REPLY_CHARS`
    characters are read.

    >>> extract_answer("<a>Paris</a>")
    'Paris'
    >>> extract_answer("So the answer is: (1) Paraphrase Answer: Paris; (2) Answer List: ['Paris', 'Lyon']")
    'Paris, Lyon'
    >>> extract_answer(" Paris ")
    'Paris'
    """
    reply = clip(reply or "", "tail")
    last = None
    pos = 0
    while (m := _A_OPEN.search(reply, pos)) is not None:
        close = _A_CLOSE.search(reply, m.end())
        if close is None:  # an unclosed last tag: from its last opening to the end
            while (again := _A_OPEN.search(reply, m.end())) is not None:
                m = again
            last = reply[m.end():]
            break
        last, pos = reply[m.end():close.start()], close.end()
    if last is not None:
        return last.strip()
    heading = None
    for heading in _ATOMR_LIST.finditer(reply):
        pass
    if heading is not None:
        start = heading.end()
        while start < len(reply) and reply[start].isspace():
            start += 1
        end = reply.find("]", start)
        if start < len(reply) and reply[start] == "[" and end > start:
            items = [x.strip().strip("'\"“”‘’") for x in reply[start + 1:end].split(",")]
            return ", ".join(x for x in items if x)
    return reply.strip()


def _check_normalizer(normalizer: str) -> None:
    if normalizer not in NORMALIZERS:
        raise ValueError(
            f"unknown normalizer {normalizer!r}; available: {', '.join(NORMALIZERS)}"
        )


def _text_scorer(fn, name: str, normalizer: str) -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        # a method may say which part of its reply is the answer (store key
        # "answer_text", as choice_accuracy reads it)
        answer = extract_answer(state.store.get("answer_text") or state.output.completion)
        golds = list(target.target)
        value = fn(answer, golds, normalizer=normalizer)
        return Score(
            value=value,
            answer=answer,
            reason=None if answer.strip() else NO_RESPONSE,  # an empty answer: scored, and said so
            explanation=f"{name}={value:.3f} against {golds}",
            metadata={"reply": state.output.completion, "normalizer": normalizer},
        )

    return score


@scorer(metrics=[mean(), stderr()], name="token_f1")
def token_f1_scorer(normalizer: str = "squad") -> Scorer:
    """Token-level F1, max over gold answers."""
    _check_normalizer(normalizer)
    return _text_scorer(token_f1, "token_f1", normalizer)


@scorer(metrics=[mean(), stderr()], name="exact_match")
def exact_match_scorer(normalizer: str = "squad") -> Scorer:
    """Exact match after normalisation, max over gold answers."""
    _check_normalizer(normalizer)
    return _text_scorer(exact_match, "exact_match", normalizer)


@scorer(metrics=[mean(), stderr()], name="cover_em")
def cover_em_scorer(normalizer: str = "squad") -> Scorer:
    """1 if a normalised gold answer occurs in the normalised prediction."""
    _check_normalizer(normalizer)
    return _text_scorer(cover_em, "cover_em", normalizer)
