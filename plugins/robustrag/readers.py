"""The readers of RobustRAG's replies, declared for the checks (hook ``conflict_eval_reply_readers``):
the keyword reader's fuzz entry and the isolated / hint answer chain. The code is in :mod:`.keywords`
and :mod:`.solver`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, norm


def _fallback_extractor():
    from .keywords import load_extractor

    return load_extractor("fallback")


def read_robustrag(row: dict) -> Reading:
    """RobustRAG's isolated / hint answers: the open-model cleaning (first
    paragraph), an abstention when it says "I don't"."""
    from .keywords import abstains
    from .solver import clean

    text = clean(row["reply"], "open")
    if abstains(text):
        return Reading("refusal")
    return Reading("value", norm(text)) if text else Reading("failure", reason="empty answer")


READERS = ReplyReaders(
    parsers=[
        ParserEntry("robustrag.keywords", "conflict_eval.plugins.robustrag.keywords:response_keywords",
                    "never fails (an answer without keywords adds none)",
                    call=lambda fn, t: fn(t, _fallback_extractor()), owner="plugins/robustrag"),
    ],
    chains=[Chain("robustrag.clean+abstains", ("robustrag.isolated", "robustrag.hint"), read_robustrag,
                  knows_refusal=True)],
)
