"""End-to-End's prompt ends inside ``<a>`` (Micro-Act Fig. 10). A completion
model continues it (``B</a>``); a chat model starts a fresh message that
writes the tag itself (``The final answer is: <a>B</a>``). Both are correct
replies and must score as their letter -- through the scripted model, through
Inspect's OpenAI provider against an OpenAI-compatible server on loopback,
and through the lm-eval export (issue 27, "First" item 1)."""

from __future__ import annotations

import json
import threading
from collections import Counter

import pytest
from inspect_ai import eval as inspect_eval
from openai_server import OpenAIServer

from conflict_eval.answers import continues_prefill, first_tagged_answer, parse_choice, restore_prefill
from conflict_eval.plugins.baselines.parse import parse_few_shot
from conflict_eval.plugins.demo.dataset import demo
from conflict_eval.kb.answer import END_TO_END_TEMPLATE
from conflict_eval.testing import scripted_model

PROMPT = END_TO_END_TEMPLATE.format(evidence="E", question="Q", options="A. x\nB. y\nC. z\nD. w")

#: Reply shapes with ``{x}`` for the letter. Chat replies (fresh messages)
#: first, then continuations of the prefilled ``<a>``.
SHAPES = [
    "The final answer is: <a>{x}</a>",
    "**Answer:** <a>{x}</a>",
    "I think the answer is <a>{x}</a>",
    "```\n<a>{x}</a>\n```",
    "```html\n<a>{x}</a>\n```",
    "<a>{x}</a>",
    "<A>{x}</A>",
    "Sure! Based on the evidence and my knowledge:\n\nThe final answer is: <a>**{x}**</a>\n\n"
    "Explanation: Document 1 is outdated, and the template asks for <a>...</a>.",
    "The final answer is: <a>{x}",  # a chat reply cut at the token limit
    "the final answer is: <a>{lower}</a>",
    # continuations
    "{x}</a>",
    "{x}",
    " {x}</a>",
    "{x}</a>\n\nAccording to the evidence provided and your knowledge, choose the best choice ...\n"
    "The final answer is: <a>D</a>",  # a reply that continues the few-shot pattern
    "{x}. France</a>",
]


def _fill(shape: str, letter: str) -> str:
    return shape.format(x=letter, lower=letter.lower())


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("letter", ["A", "C"])
def test_each_shape_gives_its_letter(shape, letter):
    reply = restore_prefill(PROMPT, _fill(shape, letter))
    segment, reason = first_tagged_answer(reply)
    assert segment is not None, reason
    parsed = parse_choice(segment)
    assert parsed.ok and parsed.letter == letter, (reply, segment, parsed)


def test_prefill_is_restored_only_for_continuations():
    assert restore_prefill(PROMPT, "B</a>") == "<a>B</a>"
    assert restore_prefill(PROMPT, "B") == "<a>B"
    assert restore_prefill(PROMPT, "B</a> then <a>C</a>") == "<a>B</a> then <a>C</a>"
    for fresh in ("The final answer is: <a>B</a>", "**Answer:** <a>B</a>", "```\n<a>B</a>\n```",
                  "I think the answer is <a>B</a>", " <a>B</a>", "<A >B</a>"):
        assert restore_prefill(PROMPT, fresh) == fresh
    assert not continues_prefill("<a>", "text <answer>B</answer> <a>B</a>")
    assert continues_prefill("<a>", "text <answer>B</answer>")  # <answer> is not the <a> tag
    # the thought tag of CoT / GKP (Figs. 12, 16)
    assert restore_prefill("thought: <t>", "x</t><a>A</a>") == "<t>x</t><a>A</a>"
    assert restore_prefill("thought: <t>", "<t>x</t><a>A</a>") == "<t>x</t><a>A</a>"
    assert restore_prefill("thought: <t>", "Thought: <t>x</t><a>A</a>") == "Thought: <t>x</t><a>A</a>"


def test_few_shot_reads_the_same_shapes():
    prompt = "... The final answer is: <a>"
    for shape in SHAPES:
        found = parse_few_shot(restore_prefill(prompt, _fill(shape, "B")))
        assert found.ok and parse_choice(found.answer).letter == "B", (shape, found)


def test_failures_stay_failures():
    for reply in ("I am not sure.", "The final answer is: <a></a>", "</a>"):
        segment, _ = first_tagged_answer(restore_prefill(PROMPT, reply))
        assert segment is None or not parse_choice(segment).ok, reply


# ---------------------------------------------------------------- whole runs

GOLD = {s.metadata["question"]: s.target for s in demo()}
#: The demo items the whole runs answer: one per conflict type, gold letters A, B and C (a shape's
#: reading depends on the prompt's template and the letter, which every item shares or these cover).
ITEMS = ["mis-01", "tmp-01", "sem-01", "none-01"]


def test_the_items_cover_every_conflict_type_and_gold_letter():
    chosen = [s for s in demo() if s.id in ITEMS]
    assert len(chosen) == len(ITEMS)
    assert {s.metadata["conflict_type"] for s in chosen} == {s.metadata["conflict_type"] for s in demo()}
    assert {s.target for s in chosen} == {s.target for s in demo()}


def _gold(prompt: str) -> str:
    [letter] = [g for q, g in GOLD.items() if f"Question: {q}\n" in prompt]
    return letter


class _Shapes:
    """Answers each demo item with its gold letter, in the next shape for that
    item: with ``epochs=len(SHAPES)`` every item is answered in every shape."""

    def __init__(self):
        self.seen: Counter = Counter()
        self.lock = threading.Lock()

    def __call__(self, prompt: str) -> str:
        letter = _gold(prompt)
        with self.lock:
            k = self.seen[prompt]
            self.seen[prompt] += 1
        return _fill(SHAPES[k % len(SHAPES)], letter)


def _assert_all_correct(log):
    assert log.status == "success", log.error
    assert len(log.samples) == len(ITEMS) * len(SHAPES)
    assert {s.id for s in log.samples} == set(ITEMS)
    failures = [(s.output.completion, s.scores["choice_accuracy"].explanation) for s in log.samples
                if s.scores["choice_accuracy"].value["parse_failure"]]
    assert failures == []
    wrong = [(s.output.completion, s.scores["choice_accuracy"].answer, s.target) for s in log.samples
             if s.scores["choice_accuracy"].value["accuracy"] != 1]
    assert wrong == []
    by_key = {s.name: s for s in log.results.scores}
    assert by_key["accuracy"].metrics["accuracy"].value == 1.0
    assert by_key["parse_failure"].metrics["mean"].value == 0.0


def test_end_to_end_scripted_model_scores_every_shape(log_dir):
    replies = _Shapes()
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model=scripted_model(replies), epochs=len(SHAPES), sample_id=ITEMS, log_dir=log_dir,
                         display="none")
    _assert_all_correct(log)
    assert set(replies.seen.values()) == {len(SHAPES)}


@pytest.fixture
def chat_server():
    """The test OpenAI-compatible server: the reply is the next shape for the item named in the prompt."""
    pytest.importorskip("openai", reason="the api extra (pip install 'conflict-eval[api]') is not installed")
    with OpenAIServer(_Shapes()) as srv:
        yield srv


def test_end_to_end_openai_provider_scores_every_shape(chat_server, log_dir, monkeypatch):
    from inspect_ai.model import get_model

    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    monkeypatch.setenv("no_proxy", "127.0.0.1")
    model = get_model("openai-api/local/chat-model", base_url=chat_server.url, api_key="sk-dummy-for-test",
                      memoize=False)
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model=model, epochs=len(SHAPES), sample_id=ITEMS, log_dir=log_dir, display="none",
                         max_retries=0)
    _assert_all_correct(log)
    assert len(chat_server.seen) == len(ITEMS) * len(SHAPES)
    assert {s["body"]["model"] for s in chat_server.seen} == {"chat-model"}
    assert {s["path"] for s in chat_server.seen} == {"/v1/chat/completions"}
    # the fresh chat replies are logged as the model wrote them: no "<a>" put in front
    logged = {s.output.completion for s in log.samples}
    assert "The final answer is: <a>A</a>" in logged and "<a>The final answer is: <a>A</a>" not in logged


def test_lmeval_end_to_end_reads_the_same_shapes():
    pytest.importorskip("lm_eval")
    from conflict_eval.lmeval.utils import load_docs, process_end_to_end

    docs = load_docs("demo")["test"]
    for doc in docs:
        gold = json.loads(doc["target"])
        for shape in SHAPES:
            scores = process_end_to_end(doc, [_fill(shape, gold)])
            assert scores["parse_failure"] == 0 and scores["accuracy"] == 1, (shape, doc["id"], scores)


@pytest.mark.parametrize("reply", [
    "The final answer is: <a>James Meredith</a>",
    "**Answer:** <a>James Meredith</a>\n\nDocument 2 contains '<a>John Smith</a>'.",
    "```\n<a>James Meredith</a>\n```",
    "James Meredith</a>",
    "James Meredith",
])
def test_free_form_end_to_end_reads_the_same_shapes(reply):
    from conflict_eval.kb.answer import END_TO_END_FREE_FORM_TEMPLATE
    from conflict_eval.scorers.text_match.scorer import extract_answer

    prompt = END_TO_END_FREE_FORM_TEMPLATE.format(evidence="E", question="Who?")
    segment, reason = first_tagged_answer(restore_prefill(prompt, reply))
    assert segment is not None, reason
    assert extract_answer(segment) == "James Meredith"
