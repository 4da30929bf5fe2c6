"""Answers: reading what models write.

What belongs here: the reply utilities every parser of model output shares
(``reply``: clipping, safe logging, answer tags, reported and revised
answers, prefills), the multiple-choice letter parser (``choice``, with its
letter rules in ``letters``), the one refusal recogniser (``refusal``), the
yes/no verdict reader a method and a metric share (``yes_no``),
text-overlap metrics (``text_metrics``), the replies the parser fuzz tests are
built from and the core's own fuzz entries (``fuzz``), what a unit declares
about its reply readers for the checks (``readers``: hook
``conflict_eval_reply_readers``), the reuse of a model's output for a byte-identical
prompt in one run (``reuse``) and the check that turns a failed model call
into an error (``failures``). A method's own reply
format lives in its plugin folder and builds on these.
"""

from conflict_eval.answers.choice import ChoiceParse, Method, letters_for, parse_choice
from conflict_eval.answers.refusal import Refusal, find_refusal, reads_as_refusal
from conflict_eval.answers.reply import (
    MAX_GAP,
    MAX_REPLY_CHARS,
    Tag,
    blank_separated,
    clip,
    continues_prefill,
    first_tagged_answer,
    loggable,
    loggable_output,
    reported,
    restore_prefill,
    revised,
    revised_tag,
    revision_before,
    revision_spans,
    tag_bodies,
)

__all__ = [
    "MAX_GAP",
    "MAX_REPLY_CHARS",
    "blank_separated",
    "ChoiceParse",
    "Refusal",
    "Method",
    "Tag",
    "clip",
    "continues_prefill",
    "find_refusal",
    "reads_as_refusal",
    "first_tagged_answer",
    "letters_for",
    "loggable",
    "loggable_output",
    "parse_choice",
    "reported",
    "restore_prefill",
    "revised",
    "revised_tag",
    "revision_before",
    "revision_spans",
    "tag_bodies",
]

# ``doctest.testmod(conflict_eval.answers)`` still runs every example of the
# modules this package was split into.
from conflict_eval.answers import choice as _choice, letters as _letters, refusal as _refusal, reply as _reply  # noqa: E402


def _doctest_targets() -> dict:
    import inspect

    found: dict = {}
    for module in (_choice, _letters, _refusal, _reply):
        found[module.__name__] = module.__doc__ or ""
        for name, obj in vars(module).items():
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and obj.__module__ == module.__name__:
                found[f"{module.__name__}.{name}"] = obj
                if inspect.isclass(obj):
                    for attr, member in vars(obj).items():
                        if inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod)):
                            found[f"{module.__name__}.{name}.{attr}"] = getattr(obj, attr)
    return found


__test__ = _doctest_targets()
