"""The End-to-End answer chain, declared for the read-as-meant checks (hook
``conflict_eval_reply_readers``): ``kb.answer.finish_prefilled_answer`` then
``choice_accuracy``. Both readers are the core's (``answers``), fuzzed there."""

from __future__ import annotations

from conflict_eval.answers.readers import Chain, Reading, ReplyReaders, choice_reading, letters_of, prefilled


def read_end_to_end(row: dict) -> Reading:
    """The answer segment of the prefilled reply, else the whole reply, read by ``parse_choice``."""
    from conflict_eval.answers import first_tagged_answer, parse_choice

    reply = prefilled(row)
    segment, _ = first_tagged_answer(reply)
    return choice_reading(parse_choice(segment if segment is not None else reply, letters_of(row),
                                       options=row["args"]["options"]))


READERS = ReplyReaders(chains=[
    Chain("end_to_end.first_tagged_answer+parse_choice", ("x.end_to_end",), read_end_to_end, knows_refusal=True,
          choice_rewrites=True, prompt_tail="The final answer is: <a>"),
])
