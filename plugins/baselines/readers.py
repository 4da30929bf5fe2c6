"""The readers of the baselines' replies (Few-Shot, CoT, Self-Ask, Comparative, GKP), declared for the
checks (hook ``conflict_eval_reply_readers``): fuzz entries (``answers.fuzz``) and the chains the reply
corpus is read through (``benchmarks/reply_reading.py``): the baseline's segmenter, then the shared
letter reader. The parsers themselves are in :mod:`.parse`."""

from __future__ import annotations

import re
from collections.abc import Callable

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import (Chain, Reading, ReplyReaders, choice_reading, letters_of, prefilled,
                                           says_refusal)

OWNER = "plugins/baselines"
FAILURE = "the method stores answer_parse_failure; choice_accuracy scores it wrong and counts it in parse_failure"


def then_choice(function: str) -> Callable[[dict], Reading]:
    """A baseline's extraction, then ``choice_accuracy``'s letter reading of
    the extracted answer (what a Comparative / Self-Ask sample is scored on)."""

    def read(row: dict) -> Reading:
        from conflict_eval.answers import parse_choice

        from . import parse

        extraction = getattr(parse, function)(row["reply"])
        if says_refusal(extraction):
            return Reading("refusal", reason=extraction.reason)
        if not extraction.ok:
            return Reading("failure", reason=extraction.reason)
        return choice_reading(parse_choice(extraction.answer, letters_of(row), options=row["args"]["options"]))

    return read


_T_CLOSE = re.compile(r"</t[ \t]*>", re.IGNORECASE)
_INTERMEDIATE_LINE = re.compile(r"^.*intermediate[ \t]+answer[ \t]*:.*$", re.IGNORECASE | re.MULTILINE)


def after_thought(reply: str, answer: str) -> str:
    """A CoT / GKP reply with its answer written as ``answer``: the thought, ``</t>``, then the answer."""
    close = _T_CLOSE.search(reply)
    thought = reply[:close.start()] if close else "The evidence and my own knowledge disagree."
    return f"{thought}</t>\n{answer}"


def after_follow_ups(reply: str, answer: str) -> str:
    """A Self-Ask reply with its answer written as ``answer``: the follow-ups and their answers, then it."""
    last = None
    for last in _INTERMEDIATE_LINE.finditer(reply):
        pass
    head = reply[:last.end()] if last is not None else ""
    return f"{head}\n\n{answer}" if head else answer


def segmented(function: str) -> Callable[[dict], Reading]:
    """A baseline's segmenter on the prefilled reply, then ``parse_choice``."""
    read = then_choice(function)
    return lambda row: read(dict(row, reply=prefilled(row)))


READERS = ReplyReaders(
    parsers=[
        *[ParserEntry(f"baselines.{n}", f"conflict_eval.plugins.baselines.parse:{n}", FAILURE, owner=OWNER)
          for n in ("parse_few_shot", "parse_cot", "parse_self_ask", "parse_comparative")],
        ParserEntry("baselines.parse_knowledge", "conflict_eval.plugins.baselines.parse:parse_knowledge",
                    "GKP: knowledge_failure recorded; the answer phase runs with empty knowledge", owner=OWNER),
    ],
    chains=[
        Chain("baselines.parse_comparative+parse_choice", ("comparative",), then_choice("parse_comparative"),
              knows_refusal=True, choice_rewrites=True),
        Chain("baselines.parse_self_ask+parse_choice", ("self_ask",), then_choice("parse_self_ask"),
              knows_refusal=True, choice_rewrites=True, compose=after_follow_ups),
        Chain("baselines.parse_few_shot+parse_choice", ("x.few_shot",), segmented("parse_few_shot"),
              knows_refusal=True, choice_rewrites=True, prompt_tail="The final answer is: <a>"),
        Chain("baselines.parse_cot+parse_choice", ("x.cot",), segmented("parse_cot"), knows_refusal=True,
              choice_rewrites=True, prompt_tail="Step-by-step thought: <t>", compose=after_thought),
        Chain("baselines.parse_cot+parse_choice (GKP)", ("x.gkp_answer",), segmented("parse_cot"),
              knows_refusal=True, choice_rewrites=True, prompt_tail="# Step-by-step thought: <t>",
              compose=after_thought),
    ],
)
