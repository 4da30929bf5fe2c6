"""Choice accuracy for multiple-choice conflict QA.

Per sample the score value is a dict:

* ``accuracy`` 1 if the parsed letter is the gold letter, else 0. A reply with
  no parseable choice counts as wrong here *and* is counted in
  ``parse_failure``; it is never mapped to a letter.
* ``parse_failure`` 1 if no choice could be parsed from the reply.
* ``refusal`` 1 if the reply names no choice of its own and sincerely refuses
  ("I cannot determine ...", "None of the options ...", "The documents do not
  contain enough information ...", see :mod:`conflict_eval.answers.refusal`).
  A refusal is scored wrong (accuracy 0) and is *not* a parse failure; a
  reply that refuses and still declares a letter is that letter.
* ``misled`` 1 if the parsed letter is the option implied by the conflicting
  evidence (``ConflictQA.conflict_option``); 0 otherwise, including items
  without one.

Each of the three is also reported per conflict type (the sample's
``conflict_type`` metadata, ``none`` = conflict-free), with Inspect's
``grouped`` metric: e.g. the ``accuracy`` score has metrics ``accuracy``,
``stderr`` and ``misinformation``, ``temporal``, ``semantic``, ``none`` ...
(the mean over that type's samples). Every ``ConflictQA`` sample carries
``conflict_type``; a sample without it makes the grouped metric fail with an
error naming the sample.

What is read: a method may leave the part of its reply that holds the answer
in the store key ``answer_text`` (e.g. CoT's ``<a>B</a>`` after its thought),
or say in ``answer_parse_failure`` why its reply has no answer (e.g. CoT's
thought never closed). The failure is then counted as a parse failure with
that reason (or as a refusal, when the whole reply refuses and names no
letter); otherwise the letter is parsed from ``answer_text`` if set, else
from the whole completion.

Options with the same text: some items list one option text under two letters
(KRE ECQA: 6 of 400 sample records, 3 with the gold text twice). A reply that
picks the gold *text* under the other letter is correct, and one that picks the
conflicting option's text is misled only when that text is not also the gold
text: such items are scored by option text (white space and case ignored, see
:func:`.values.equivalent_letters`); the score's metadata then says so.

The raw reply, the parsed letter and the parse failure reason are kept in the
score so they show in ``inspect view``.
"""

from inspect_ai.scorer import (
    Score,
    Scorer,
    Target,
    accuracy,
    grouped,
    mean,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState

from conflict_eval.answers import parse_choice
from conflict_eval.answers.reasons import REFUSAL, counts, unread_reason
from conflict_eval.records import LETTERS

from .extraction import with_extraction
from .values import choice_values

ANSWER_TEXT_KEY = "answer_text"
PARSE_FAILURE_KEY = "answer_parse_failure"
GROUP_KEY = "conflict_type"


def _by_type():
    return grouped(mean(), GROUP_KEY, all=False)


@scorer(
    metrics={
        "accuracy": [accuracy(), stderr(), _by_type()],
        "parse_failure": [mean(), _by_type()],
        "refusal": [mean(), _by_type()],
        "misled": [mean(), _by_type()],
    }
)
def choice_accuracy(answer_extraction: str = "none") -> Scorer:
    """Accuracy of the chosen option letter; parse failures and refusals counted
    separately; all four also by conflict type. ``answer_extraction=grader``: see
    :mod:`.extraction` (a reply no reader could read is sent to the grader;
    a letter found so is scored, counted as ``extracted``, still a parse failure)."""

    async def score(state: TaskState, target: Target) -> Score:
        n = len(state.choices) if len(state.choices) else 4
        letters = LETTERS[:n]
        reply = state.output.completion
        options = [c.value for c in state.choices] if len(state.choices) else None
        method_failure = state.store.get(PARSE_FAILURE_KEY)
        answer_text = state.store.get(ANSWER_TEXT_KEY)
        if method_failure:
            # The method found no answer segment; a reply that refuses (and
            # names no letter anywhere) is a refusal all the same.
            parsed = parse_choice(reply, letters, options=options)
            refused = str(method_failure).startswith("refusal") or parsed.refused
            reason = parsed.reason if parsed.refused else f"{method_failure}"
        else:
            parsed = parse_choice(answer_text if answer_text is not None else reply,
                                  letters, options=options)
            refused = parsed.refused
            reason = None if parsed.ok else parsed.reason
        conflict_option = (state.metadata or {}).get("conflict_option")
        if refused:
            return Score(
                value={"accuracy": 0, **counts(REFUSAL), "misled": 0},
                answer=None,
                reason=REFUSAL,
                explanation=f"refusal (scored wrong): {reason}",
                metadata={"reply": reply, "answer_text": answer_text, "refusal": reason},
            )
        if reason is not None:  # nothing read: an empty answer is no_response, else invalid_response_format
            why = unread_reason(reply if method_failure or answer_text is None else answer_text)
            return Score(
                value={"accuracy": 0, **counts(why), "misled": 0},
                answer=None,
                reason=why,
                explanation=f"parse failure: {reason}",
                metadata={"reply": reply, "answer_text": answer_text,
                          "parse_failure_reason": reason},
            )
        accuracy, misled, by_text = choice_values(parsed.letter, target.text, conflict_option, options)
        metadata = {"reply": reply, "answer_text": answer_text}
        explanation = f"parsed {parsed.letter!r}; gold {target.text!r}"
        if by_text:
            metadata["scored_by_option_text"] = True
            explanation += " (scored by option text: this item lists the same option text twice)"
        return Score(
            value={"accuracy": accuracy, "parse_failure": 0, "refusal": 0, "misled": misled},
            answer=parsed.letter,
            explanation=explanation,
            metadata=metadata,
        )

    return with_extraction(score, answer_extraction)
