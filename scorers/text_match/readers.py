"""The answer reader of the text metrics, declared for the fuzz checks (hook ``conflict_eval_reply_readers``);
the reader itself is :func:`.scorer.extract_answer`."""

from __future__ import annotations

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import ReplyReaders

READERS = ReplyReaders(parsers=[
    ParserEntry("extract_answer", "conflict_eval.scorers.text_match.scorer:extract_answer",
                "token_f1 / exact_match / cover_em: the whole reply is the answer (scored as text, usually 0)",
                owner="scorers/text_match"),
])
