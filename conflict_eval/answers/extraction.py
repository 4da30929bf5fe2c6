"""Answer extraction by a grader model, for replies no reader could read (issue 32, Deliver 5).

Optional per run: ``-T answer_extraction=grader`` (``choice_accuracy``).
A reply whose choice letter no reader could read is sent, with the options,
to the model bound to the ``grader`` role (``--model-role grader=...``;
without one, the evaluated model) with :data:`EXTRACTION_PROMPT` (ours: the
papers have no such step). The grader's reply is read by
:func:`read_extraction`. A letter found this way is recorded as
``extracted``: the sample is scored with it, but it stays counted in
``parse_failure`` (the reply itself was not readable), so no figure counts
an extracted answer as parsed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .choice import ChoiceParse, parse_choice
from .reply import clip

__all__ = ["EXTRACTION_MODES", "EXTRACTION_PROMPT", "Extraction", "check_mode", "extract_choice", "extraction_prompt",
           "read_extraction"]

EXTRACTION_MODES = ("none", "grader")
_AFTER_LETTER = ".:)*_`\"'-–—,;\n\r"
_AFTER_SPACE = ("(", "-", "–", "—", ":")

#: Characters of the unreadable reply quoted in the prompt (its end, where a final answer usually is).
MAX_QUOTED_CHARS = 4_000

# Ours (issue 32, Deliver 5). Placeholders: {options} ("A. text" lines), {letters} ("A, B or C"), {reply}.
EXTRACTION_PROMPT = """Below is a reply to a multiple-choice question. Which option did the reply choose as its answer?

Options:
{options}

Reply:
<<<
{reply}
>>>

Answer with one letter ({letters}) and nothing else. A letter or option only quoted from documents, or mentioned while explaining, is not the choice. If the reply chooses no option or declines to answer, write NONE."""


@dataclass(frozen=True)
class Extraction:
    letter: str | None
    """The extracted letter, or ``None`` (the grader found no choice)."""
    grader_reply: str
    reason: str | None = None


def check_mode(mode: str) -> str:
    if mode not in EXTRACTION_MODES:
        raise ValueError(f"answer_extraction must be one of {', '.join(EXTRACTION_MODES)}; got {mode!r}")
    return mode


def extraction_prompt(reply: str, options: Sequence[str] | None, letters: str) -> str:
    """The grader prompt for one unreadable ``reply`` (options may be unknown: letters only)."""
    lines = [f"{letter}. {text}" for letter, text in zip(letters, options or [])] or list(letters)
    names = ", ".join(letters[:-1]) + f" or {letters[-1]}" if len(letters) > 1 else letters
    return EXTRACTION_PROMPT.format(options="\n".join(lines), letters=names,
                                    reply=clip(reply or "", "tail")[-MAX_QUOTED_CHARS:])


def read_extraction(grader_reply: str, letters: str) -> ChoiceParse:
    """The letter in the grader's reply to :func:`extraction_prompt`; ``NONE``
    (or no single letter) is a failure, never a letter."""
    text = clip(grader_reply if isinstance(grader_reply, str) else "", "head")
    head = text.lstrip().lstrip("*_`(\"'[")
    if head.upper().startswith(("NONE", "NO OPTION")):
        return ChoiceParse.failure("the grader found no choice (NONE)")
    parsed = parse_choice(text, letters)
    if parsed.ok or (parsed.reason or "").startswith("ambiguous"):
        return parsed  # every signal of the reply (a revision too: "A. Actually, B." is B)
    # asked for one letter: a reply that opens with an allowed letter standing alone
    # ("B", "B.", "B: Rome", "(B)", "**B**") answers with it
    after = head[1:3]
    if head[:1].upper() in letters.upper() and head[:1].strip() and (
            not after or after[0] in _AFTER_LETTER or (after[0] == " " and after[1:] in _AFTER_SPACE)):
        letter = head[0].upper()
        return ChoiceParse(letter, True, None, None, "bare", letters.upper().index(letter))
    return parsed


async def extract_choice(reply: str, options: Sequence[str] | None, letters: str, role: str = "grader") -> Extraction:
    """Ask the ``role`` model (the evaluated model without one) which letter
    ``reply`` chose: one call at temperature 0, at most 16 new tokens."""
    from inspect_ai.model import GenerateConfig, get_model, model_roles

    model = get_model(role=role) if role in model_roles() else get_model()
    output = await model.generate(extraction_prompt(reply, options, letters),
                                  config=GenerateConfig(temperature=0.0, max_tokens=16))
    text = output.completion
    parsed = read_extraction(text, letters)
    return Extraction(parsed.letter if parsed.ok else None, text, None if parsed.ok else parsed.reason)
