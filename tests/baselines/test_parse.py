"""Answer extraction of each baseline (pure functions)."""

from conflict_eval.plugins.baselines.parse import (
    parse_comparative,
    parse_cot,
    parse_few_shot,
    parse_knowledge,
    parse_self_ask,
)


def test_few_shot_takes_the_first_answer_and_ignores_continued_examples():
    reply = "<a>B</a>\n\nAccording to the evidence provided ...\nThe final answer is: <a>A</a>"
    assert parse_few_shot(reply).answer == "<a>B</a>"
    assert parse_few_shot("<a> C </a>").answer == "<a>C</a>"
    # the pre-filled tag never closed: its first line is the answer segment
    unclosed = parse_few_shot("<a>C. Great Britain\n\nEvidence: more")
    assert unclosed.answer == "<a>C. Great Britain</a>" and unclosed.parts == {"unclosed_tag": True}
    assert parse_few_shot("<a>\n\nEvidence: x").reason == "no <a>...</a> answer"
    # untagged: the shared letter reader reads the reply (a hedge naming one option is that option)
    assert parse_few_shot("I think C").answer == "I think C"
    assert parse_few_shot("**Answer:** C\n\nEvidence: invented").answer == "**Answer:** C"
    assert parse_few_shot("I wonder").reason == "no <a>...</a> answer"
    assert parse_few_shot("<a></a>").reason == "empty <a></a> answer"


def test_cot_needs_closed_thought_then_answer():
    ok = parse_cot("<t>Evidence says (A); I know B.</t>\n<a>B</a> and later <a>B</a>")
    assert ok.answer == "<a>B</a>" and ok.parts["thought"] == "Evidence says (A); I know B."
    # two different answers after the thought and no revision: ambiguous, never a pick (issue 42)
    assert parse_cot("<t>x</t>\n<a>B</a> and later <a>C</a>").reason.startswith("ambiguous")
    # an <a> inside the thought is not the answer
    inside = parse_cot("<t>maybe <a>A</a> ...</t> nothing after")
    assert inside.reason == "no <a>...</a> answer after the thought"
    # untagged after </t>: the region goes to the shared letter reader (issue 42)
    for region in ("# Answer: C", "**Answer:** C — solemn", "My answer: option A (web page)"):
        assert parse_cot(f"<t>x</t>\n{region}").answer == region
    assert parse_cot("<t>x</t><a>D</a> Actually, wait: no. <a>E</a>").answer == "<a>E</a>"
    assert parse_cot("<t>I think it is A. Answer: A").reason == "thought not closed with </t>"
    assert parse_cot("<t>x</t><a> </a>").reason == "empty <a></a> answer"
    assert parse_cot("<T>x</T><A>d</A>").answer == "<a>d</a>"  # tags case-insensitive


def test_self_ask_tag_then_final_answer_phrase():
    reply = ("Who founded X?\nIntermediate answer: Y.\nFollow up: When?\nIntermediate answer: 1990.\n"
             "Answer: <a> C </a>")
    found = parse_self_ask(reply)
    assert found.answer == "<a>C</a>" and found.parts["follow_ups"] == ["When?"]
    assert parse_self_ask("Follow up: Where?\nSo the final answer is: B").answer == "<a>B</a>"
    assert parse_self_ask("So the final answer is A.\n<a>D</a>").answer == "<a>D</a>"  # the tag wins
    failed = parse_self_ask("Follow up: Where is it?\nIntermediate answer: Paris.")
    assert failed.reason == "no <a>...</a> answer and no 'So the final answer is'"
    assert failed.parts["follow_ups"] == ["Where is it?"]


def test_comparative_records_both_answers_and_takes_the_last_tag():
    reply = "ANSWER1: A (the context says so)\nANSWER2: C\nFinal: <a>C</a>"
    found = parse_comparative(reply)
    assert found.answer == "<a>C</a>"
    assert found.parts == {"answer1": "A (the context says so)", "answer2": "C"}
    failed = parse_comparative("ANSWER1: A\nANSWER2: C")
    assert failed.reason == "no <a>...</a> final answer (only ANSWER1/ANSWER2)" and failed.parts["answer2"] == "C"


def test_knowledge_is_cut_at_a_new_input():
    assert parse_knowledge(" Rum is made from sugar cane.\nInput: next question\nKnowledge: x").answer == (
        "Rum is made from sugar cane.")
    assert parse_knowledge("  \n").reason == "no knowledge generated"
    assert parse_knowledge("Input: copy").reason == "no knowledge generated"


def test_restore_prefill():
    from conflict_eval.plugins.baselines.solver import restore_prefill

    assert restore_prefill("... is: <a>", "B</a>") == "<a>B</a>"
    assert restore_prefill("... is: <a>", " <a>B</a>") == " <a>B</a>"  # model repeated the tag
    assert restore_prefill("... is: <a>", "B</a> then <a>C</a>") == "<a>B</a> then <a>C</a>"
    assert restore_prefill("thought: <t>", "x</t><a>A</a>") == "<t>x</t><a>A</a>"
    assert restore_prefill("Follow up:", " Where?") == " Where?"
