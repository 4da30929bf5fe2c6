"""RAMDocs' strict exact match over a reply, declared as a chain for the read-as-meant checks
(hook ``conflict_eval_reply_readers``): ``extract_answer`` (fuzzed by ``scorers/text_match``) then
:func:`.metrics.strict_em_parts`."""

from __future__ import annotations

from conflict_eval.answers.readers import Chain, Reading, ReplyReaders


def read_strict_em(row: dict) -> Reading:
    from conflict_eval.scorers.text_match.scorer import extract_answer

    from .metrics import strict_em_parts

    em, _, _ = strict_em_parts(extract_answer(row["reply"]), row["args"]["golds"], row["args"]["wrongs"])
    return Reading("value", em)


READERS = ReplyReaders(chains=[Chain("ramdocs.extract_answer+strict_em", ("ramdocs.strict_em",), read_strict_em)])
