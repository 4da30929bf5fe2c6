"""The parser fuzz harness, and the core's own parsers of model output.

``tests/test_parser_robustness.py`` (hypothesis property tests, linear
time) and ``benchmarks/parser_robustness.py`` (>= 5,000 inputs per parser,
timings at 10 kB and 100 kB) run every :class:`ParserEntry` the plugin
manager collects (``components.manager.reply_readers().parsers``): the core's
:data:`CORE_PARSERS` and the entries each unit declares with the hook
``conflict_eval_reply_readers`` (``conflict_eval.answers.readers.ReplyReaders``;
a unit's lines live in its own ``readers.py``). **A new parser of model
output gets one line in its unit's declaration** (see CONTRIBUTING.md); a
third-party plugin's parser is checked the same way.

Each entry names the function by import path (``"module:attr"``, imported
lazily, so a declaration costs nothing to import), how to call it on one
reply string (its fuzz inputs: the extra arguments filled in), which
exception (if any) is its *documented* failure (e.g. Micro-Act's
``parse_call`` raises ``ValueError`` for the model to read), and how a
failure is scored by the metric or method that uses it (the benchmark's
"failure rule" column).

The contract every entry must meet: for ANY string the parser returns (or
raises only its documented failure), never another exception, in time
linear in the input (each reads at most
:data:`conflict_eval.answers.MAX_REPLY_CHARS` characters).
"""

from __future__ import annotations

import importlib
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["CHOICE_FAILURE", "CORE_PARSERS", "FUZZ_TOKENS", "PATHOLOGICAL_REPLIES", "random_reply", "ParserEntry",
           "ParserTimeout", "adversarial_inputs", "best_time", "check_total", "scaling_inputs", "time_limit"]


_RESOLVED: dict[str, Callable[..., Any]] = {}


@dataclass(frozen=True)
class ParserEntry:
    name: str
    target: str
    """``"package.module:function"``."""
    failure_rule: str
    """How a parse failure is recorded and scored where the parser is used."""
    call: Callable[[Callable[..., Any], str], Any] = field(default=lambda fn, text: fn(text))
    """How to call the function on one reply (extra arguments filled in)."""
    documented: tuple[str, ...] = ()
    """Names of exception classes that are the parser's documented failure."""
    owner: str = ""
    """Unit that owns the parser (``plugins/<unit>``; the plugin manager fills in the
    plugin's name where a declaration leaves it empty)."""

    def function(self) -> Callable[..., Any]:
        """The parser itself (imported once; import time is never part of a timing)."""
        if self.target not in _RESOLVED:
            module, _, attr = self.target.partition(":")
            _RESOLVED[self.target] = getattr(importlib.import_module(module), attr)
        return _RESOLVED[self.target]

    def run(self, text: str) -> Any:
        """Call the parser on ``text``; a documented failure exception is returned, not raised."""
        fn = self.function()
        try:
            return self.call(fn, text)
        except Exception as exc:  # noqa: BLE001 - re-raised unless documented
            if type(exc).__name__ in self.documented or any(
                    c.__name__ in self.documented for c in type(exc).__mro__):
                return exc
            raise


CHOICE_FAILURE = ("choice_accuracy: wrong (accuracy 0) and counted in parse_failure -- or in refusal when the reply "
                  "names no letter and refuses (ChoiceParse.refused); never mapped to a letter")
"""How a failure of the shared letter reader is scored (units whose readers end in it say the same)."""

CORE_PARSERS: list[ParserEntry] = [
    ParserEntry("parse_choice", "conflict_eval.answers:parse_choice", CHOICE_FAILURE,
                call=lambda fn, t: fn(t, "ABCD", options=["Paris", "Rome", "Paris, Texas", "the placenta"]),
                owner="conflict_eval.answers"),
    ParserEntry("reads_as_refusal", "conflict_eval.answers.refusal:reads_as_refusal",
                "never fails: a reply is a sincere refusal or not (a refusal is scored wrong and counted in refusal)",
                owner="conflict_eval.answers"),
    ParserEntry("find_refusal", "conflict_eval.answers.refusal:find_refusal",
                "never fails: the refusing words, or None", owner="conflict_eval.answers"),
    ParserEntry("first_tagged_answer", "conflict_eval.answers:first_tagged_answer",
                "End-to-End / Micro-Act final answer: no answer_text stored; choice_accuracy reads the whole "
                "reply, which has no tag, and counts a parse failure if no letter", owner="conflict_eval.answers"),
    ParserEntry("restore_prefill", "conflict_eval.answers:restore_prefill",
                "never fails: a reply that does not continue the prompt's open tag is returned unchanged",
                call=lambda fn, t: fn("The final answer is: <a>", t), owner="conflict_eval.answers"),
    ParserEntry("answers.read_span", "conflict_eval.answers.span:read_span",
                "a counted failure with its reason (polluted-KB target: no target, nothing injected; "
                "Conflict Exposure ReAns: reans_parse_failure, no answer query)", owner="conflict_eval.answers"),
    ParserEntry("answers.trim_span", "conflict_eval.answers.span:trim_span",
                "a counted failure with its reason (see read_span)", owner="conflict_eval.answers"),
    ParserEntry("answers.match_option", "conflict_eval.answers.options:match_option",
                "user_need_accuracy: unmatched, counted apart from wrong (metric unmatched); never guessed",
                call=lambda fn, t: fn(t, ["two eyes", "not falling asleep", "He processes flaxseeds.", "dark",
                                          "wait for"]),
                owner="conflict_eval.answers"),
    # answer extraction (issue 32, Deliver 5): the grader's reply to the extraction prompt
    ParserEntry("read_extraction", "conflict_eval.answers.extraction:read_extraction",
                "answer extraction (-T answer_extraction=grader): no letter extracted; the sample stays a counted "
                "parse failure, scored wrong", call=lambda fn, t: fn(t, "ABCD"), owner="conflict_eval.answers"),
    # the yes/no verdict of kb.rag's Figure 3 prompt (polluted KB, Conflict Exposure)
    ParserEntry("polluted_kb.parse_yes_no", "conflict_eval.answers.yes_no:parse_yes_no",
                "yes_no_accuracy (ACC): wrong and counted in parse_failure; pre-screening: the question is not kept",
                owner="conflict_eval.answers"),
]
"""The core's own parsers (``conflict_eval/answers/*``); every unit's are declared by the unit."""


# --------------------------------------------------------------------------
# adversarial inputs

FUZZ_TOKENS: list[str] = [
    "<a>", "</a>", "<answer>", "</answer>", "<output>", "</output>", "<f>", "</f>", "<c>", "</c>", "<p>", "</p>",
    "<t>", "</t>", "<manipulated>", "</manipulated>", "(", ")", "[", "]", "{", "}", '"', "'", "“", "”", "‘", "’",
    ",", ":", ";", ".", "\n", "\n\n", " ", "   ", "\t", "**", "*", "_", "#", "```json\n", "```", "\\", "-", "–",
    "yes", "no", "Yes", "No", "No doubt", "yes or no", "Answer:", "answer is", "The answer is", "Final answer:",
    "Thought:", "**Thought:**", "Action:", "**Action:**", "A", "B", "(B)", "b", "B.", "1.", "2)", "- ", "?",
    "given_evidence", "reason(", "assert(", "decompose(", "knowledge_gen(", "terminate()", "evidence=",
    "Search(", "Relate(", "Filter(", "[1]", "[DR]", "[SIB]", "Answer List:", "Paraphrase Answer:",
    "So the answer is:", "So the final answer is", "Follow up:", "ANSWER1:", "ANSWER2:", "Input:",
    "SUPPORTS", "CONTRADICTS", "IRRELEVANT", '{"answer": "', '"}', "Claims:", "Sub-questions for [X]:",
    "Wikipedia", "Wikidata", "Google", "9" * 60, "1e999", "-" * 40, "\ud800", "\udc00", "\udfff", "\x00",
    "İ", "ß", "😀", "\u200b", "\r\n", "<c>1</c>", "<p>0.9</p>", "Paris", "Texas", "the placenta",
    # issue 42's new reader paths: final markers, hedges, revisions, glosses, "[] then note", label revision
    "\\boxed{", "$$\\boxed{B}$$", "**Answer — A**", "| Final answer | B |", "| final | A |", "|---|---|",
    "I think it's B.", "Probably B.", "My best guess is", "A or B", "rest or falling asleep", "(the first option)",
    "Actually, wait", "actually", "on second thought", "I revise", "Final:", "Final: <c>1</c>", "[]", "Note:",
    "so the correct label is CONTRADICTS", '{"label": "SUPPORTS"}', "not B", "I cannot determine",
    # the contract's later paths (last explicit marker wins): label forms, revisions in plain text, MAX_GAP runs
    "**Answer**:", "Answer =", "Verdict:", "Verdict: NO", "Label:", "Final label:", "SUPPORTS and CONTRADICTS",
    "A. Actually, B.", "NO. Actually, YES.", "Wait,", "No,", "on reflection", " " * 101,
    # the option matcher's revision and "no," paths: an option holding a revision word, a double reading
    "wait for", "waited", "dark, no wait, two eyes", "no, not dark", "No, two eyes", "dark (or possibly two eyes)",
]
"""Pieces that parsers look for (tags, labels, brackets, quotes, markup,
surrogates, huge numbers); random replies are built by joining them with
random text."""


def random_reply(rng, max_chars: int = 10_000, tokens: Sequence[str] = ()) -> str:
    """One random reply from ``rng`` (a ``random.Random``): FUZZ_TOKENS (and
    ``tokens``: the units' declared ``ReplyReaders.tokens``) mixed with random
    code points (lone surrogates included); lengths mostly under 500
    characters, some up to ``max_chars``."""
    pieces = FUZZ_TOKENS + [t for t in tokens if t not in FUZZ_TOKENS] if tokens else FUZZ_TOKENS
    roll = rng.random()
    target = rng.randint(0, 500) if roll < 0.7 else rng.randint(500, 5_000) if roll < 0.95 else \
        rng.randint(5_000, max_chars)
    parts: list[str] = []
    size = 0
    while size < target:
        pick = rng.random()
        if pick < 0.55:
            piece = rng.choice(pieces)
        elif pick < 0.8:
            piece = "".join(chr(rng.randint(32, 126)) for _ in range(rng.randint(1, 12)))
        elif pick < 0.95:
            piece = "".join(chr(rng.randint(0, 0x2FFFF)) for _ in range(rng.randint(1, 6)))
        else:
            piece = rng.choice(pieces) * rng.randint(2, 200)
        parts.append(piece)
        size += len(piece)
    return "".join(parts)


PATHOLOGICAL_REPLIES: dict[str, str] = {
    "deep brackets": "(" * 10_000 + "[" * 10_000 + "{" * 10_000,
    "unclosed tags": "<a><output><f><c><t>" * 4_000,  # 20,000 unclosed tags
    "white space": " " * 40_000 + "\n" * 20_000 + "Answer:" + " \t" * 20_000,
    "lone surrogates": "\ud800 Answer: \udc00 <a>\udfff</a> <output>\ud800</output> "
                       "<f>reason(evidence=\"\ud800\")</f> (\ud800, \udc00, x) yes? no?",
}
"""Whole replies for scripted-model evals: a run whose model answers every
call with one of these must end with status ``success``, the replies counted
as parse failures (``tests/test_no_reply_ends_an_eval.py``)."""


def _fill(unit: str, size: int, prefix: str = "", suffix: str = "") -> str:
    n = max(1, (size - len(prefix) - len(suffix)) // max(1, len(unit)))
    return prefix + unit * n + suffix


def adversarial_inputs(size: int) -> dict[str, str]:
    """Pathological replies of about ``size`` characters, by family name.

    Families: deep brackets (unbalanced and balanced), thousands of unclosed
    tags of every tag a parser reads, long white-space runs after every label
    a parser looks for, lone surrogates, huge numbers, JSON-ish junk, repeated
    answer phrases and runs of quotes and markup.
    """
    out: dict[str, str] = {}
    for b in ("(", "[", "{"):
        out[f"deep {b}"] = _fill(b, size)
    out["deep balanced []"] = "[" * (size // 2) + "]" * (size // 2)
    out["deep balanced ()"] = "(" * (size // 2) + "a, b, c" + ")" * (size // 2)
    out["deep mixed"] = _fill("([{", size)
    out["deep JSON list"] = _fill("[", size // 2) + "1" + "]" * (size // 2)
    out["deep JSON object"] = _fill('{"a":', size // 2) + "1" + "}" * (size // 10)
    for tag in ("a", "answer", "output", "f", "c", "p", "t", "manipulated"):
        out[f"unclosed <{tag}>"] = _fill(f"<{tag}>", size)
        out[f"unclosed <{tag}>x"] = _fill(f"<{tag}>x", size)
    out["unclosed tags then answer"] = _fill("<a>", size - 10) + "<a>B</a>"
    for label in ("", "Answer:", "**Thought:**", "Thought:", "Paraphrase Answer:", "so the final answer is",
                  "ANSWER1", "Answer List:", "follow up:", "<c>", "<f>reason(", "1.", "Claims:", '{"answer":'):
        out[f"spaces after {label!r}"] = _fill(" ", size, prefix=label, suffix="x")
        out[f"newlines after {label!r}"] = _fill("\n", size, prefix=label)
        out[f"tabs+spaces after {label!r}"] = _fill(" \t", size, prefix=label, suffix="\n")
    out["lone surrogates"] = _fill("\ud800 yes <a>\udc00</a> <f>reason(evidence=\"\udfff\")</f> (a, \ud800, c) ", size)
    out["surrogate in call"] = '<f>assert(state_left="\ud800", state_right="\udc00")</f>'
    out["huge integer"] = _fill("9", size)
    out["huge number in tags"] = "<p>" + _fill("9", size) + "</p> <c>1</c> <output>" + "9" * 5000 + "</output>"
    out["huge JSON int"] = '[{"hops": ' + "9" * min(size, 6000) + ', "question": "q?"}]'
    out["huge float"] = '[{"hops": 1e999999, "original_answer": 1e999999}]' + _fill(" ", size)
    out["JSON-ish junk"] = _fill('Answer List: [{{1}: 2}] {"a": [1, {"b": ', size)
    out["nested call"] = _fill("f(", size, prefix="<f>reason(evidence=", suffix="</f>")
    out["operator stars"] = _fill("**", size, prefix="<f>reason(evidence=", suffix=")</f>")
    out["unary minus"] = _fill("-", size, prefix="Search(", suffix="1)")
    out["plus chain"] = _fill('"a"+', size, prefix="Relate(", suffix='"b")')
    out["repeated answer phrase"] = _fill("the answer is ", size)
    out["repeated yes no"] = _fill("yes no ", size)
    out["repeated Answer List"] = _fill("Answer List: [", size)
    out["repeated follow up"] = _fill("Follow up: ", size)
    out["quotes"] = _fill('"', size)
    out["quote-bracket"] = _fill('("', size)
    out["markup"] = _fill("**", size)
    out["dashes"] = _fill("- ", size)
    out["numbered"] = _fill("1. ", size)
    out["question marks"] = _fill("?\n", size)
    out["long line with brackets"] = _fill("[x] ", size)
    out["option text repeated"] = _fill("Paris Texas Paris ", size)
    out["backslashes"] = _fill("\\", size, prefix='<f>reason(evidence="', suffix='")</f>')
    return out


# --------------------------------------------------------------------------
# running one call safely


class ParserTimeout(Exception):
    """A parser call ran past its time limit (counts as a failure of the contract)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`ParserTimeout` in the calling (main) thread after
    ``seconds`` (SIGALRM; elsewhere, no limit)."""
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        yield
        return

    def _alarm(signum, frame):
        raise ParserTimeout(f"no result after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def check_total(entry: ParserEntry, text: str, limit: float = 2.0) -> float:
    """Run ``entry`` on ``text`` within ``limit`` seconds; return the time taken.

    Raises whatever the parser raised beyond its documented failure, or
    :class:`ParserTimeout`.
    """
    entry.function()  # import outside the timed call
    start = time.perf_counter()
    with time_limit(limit):
        entry.run(text)
    return time.perf_counter() - start


def best_cpu_time(entry: ParserEntry, text: str, repeat: int, limit: float = 5.0) -> float:
    """The fewest CPU seconds of this thread over ``repeat`` calls (``time.thread_time``), each
    within ``limit`` (:func:`check_total`): time the thread spent preempted on a loaded machine,
    or waiting for a core another pytest-xdist worker holds, is not counted (a wall-clock ratio
    counted it: a 15 ms read preempted a few times looked 100x slower than a 0.1 ms read that
    never was). The growth test and ``benchmarks/reader_growth.py`` both time with it."""
    best = float("inf")
    for _ in range(repeat):
        start = time.thread_time()
        check_total(entry, text, limit=limit)
        best = min(best, time.thread_time() - start)
    return best


# --------------------------------------------------------------------------
# linear time: 10x the input, at most about 10x the time

SCALING_LABELS: tuple[str, ...] = (
    "", "Answer", "Answer:", "answer", "**Answer", "**Answer:**", "Final answer", "Final answer:", "the answer is",
    "Verdict", "verdict:", "YES", "NO", "yes", "All Correct Answers", "All Correct Answers:", "Explanation",
    "Thought", "Thought:", "Action", "Action:", "Paraphrase Answer", "Answer List", "So the answer is",
    "Follow up", "ANSWER1", "Claims", "Input", "SUPPORTS", "B", "(B)", "B.", "B:", "**B**", "<a>", "<a>B",
    "<a>B</a>", "<output>", "<f>reason(", "1.", "- ", "(", "[", "{", '"', "'", "*", "Paris", "the placenta",
    "Search(", "Wikipedia", "no conflicts", "(Paris, is, ",
)
"""Labels a reader looks for; each is followed by a long white-space run in :func:`scaling_inputs`."""

SCALING_UNITS: tuple[str, ...] = (
    "<a>", "</a>", "<a>B</a>", "<answer>", "<output>", "<f>", "<c>", "<p>", "<t>", "<manipulated>", "(B) ",
    "Answer: ", "Answer ", "Verdict ", "YES ", "yes no ", "All Correct Answers ", "[", "([", '"', "**", "B. ",
    "1. ", "- ", "\n", "Paris ", "Follow up: ", "Answer List: [", "(a, b, c) ",
)
"""Units repeated many times (tags, labels, markup) in :func:`scaling_inputs`."""


def scaling_inputs(size: int, labels: Sequence[str] = ()) -> dict[str, str]:
    """Padded and repeated replies of exactly ``size`` characters, by family.

    At ``size=20_000`` (``MAX_REPLY_CHARS``, all of it read): every label of
    :data:`SCALING_LABELS` followed by a run of about 20,000 spaces (then
    ``x``), of space-tab pairs or of newlines, and every unit of
    :data:`SCALING_UNITS` repeated 10,000 times (a unit longer than two
    characters as often as fits in ``size``). The linear-time test compares
    each family at ``size`` and at a tenth of it. ``labels``: more labels
    (the units' declared ``ReplyReaders.tokens``), padded the same way.
    """
    out: dict[str, str] = {}
    for label in (*SCALING_LABELS, *(t for t in labels if t not in SCALING_LABELS)):
        pad = max(0, size - len(label) - 1)
        out[f"{label!r} + spaces"] = label + " " * pad + "x"
        out[f"{label!r} + space-tabs"] = (label + " \t" * (pad // 2 + 1))[:size - 1] + "x"
        out[f"{label!r} + newlines"] = label + "\n" * pad + "x"
    for unit in SCALING_UNITS:
        out[f"{unit!r} repeated"] = unit * min(size // 2, size // len(unit))
    return out


def best_time(entry: ParserEntry, text: str, repeat: int = 3, limit: float = 5.0) -> float:
    """The fastest of ``repeat`` calls of ``entry`` on ``text`` (a pause on a
    loaded machine is not slow every time; a slow reader is)."""
    return min(check_total(entry, text, limit=limit) for _ in range(repeat))
