"""The example's reply reader, declared for conflict-eval's checks (hook ``conflict_eval_reply_readers``).

Three things, as a built-in unit declares them:

* a fuzz entry: ``read_verdict`` by import path, called on any reply with the
  letters ``ABC`` (conflict-eval's fuzz and linear-time tests and
  ``benchmarks/parser_robustness.py`` run it), and the labels it looks for,
  which those tests mix into random replies and pad with 20,000 spaces;
* a chain for the reply corpus kind ``example.verdict_first``: what the method
  reads from one reply, as a :class:`conflict_eval.answers.readers.Reading`
  (``benchmarks/reply_reading.py`` reports it read as meant);
* ``data/reply_shapes.jsonl``: hand-written replies to the ``verdict_first``
  prompt, each labelled with what its writer meant (the corpus format of
  conflict-eval's ``tests/data/reply_corpus/README.md``).

The choice rewrites of conflict-eval's rewrite benchmark do not apply
(``choice_rewrites`` stays False): they write a letter in any voice as the whole
reply, and this method reads only a ``VERDICT:`` line, so a reply without one is
a counted failure by design.
"""

from __future__ import annotations

from pathlib import Path

from conflict_eval.answers.fuzz import ParserEntry
from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, choice_reading, letters_of


def read_verdict_row(row: dict) -> Reading:
    """A corpus row (``reply``, ``args.options``) as ``evidence_following`` reads it."""
    from .parse import read_verdict

    return choice_reading(read_verdict(row["reply"], letters_of(row)))


READERS = ReplyReaders(
    parsers=[
        ParserEntry("example.read_verdict", "conflict_eval_example.parse:read_verdict",
                    "evidence_following: followed is NaN and the reply is counted in parse_failure (or refusal); "
                    "never guessed", call=lambda fn, t: fn(t, "ABC"), owner="conflict-eval-example-plugin"),
    ],
    chains=[
        Chain("example.read_verdict", ("example.verdict_first",), read_verdict_row, knows_refusal=True),
    ],
    shapes=[Path(__file__).parent / "data" / "reply_shapes.jsonl"],
    tokens=["VERDICT:", "REASON:", "**VERDICT:**", "> VERDICT:"],
)
