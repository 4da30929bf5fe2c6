"""Pure parsing of Micro-Act replies (scorers/microact/parse.py)."""

import pytest

from conflict_eval.scorers.microact.parse import (
    ACTIONS,
    EVIDENCE_VARIABLE,
    parse_assert,
    parse_call,
    parse_steps,
    parse_turn,
)

ALL = tuple(ACTIONS)


def test_turn_with_thought_and_each_action():
    cases = {
        '<f>knowledge_gen(target="Where is X?")</f>': ("knowledge_gen", {"target": "Where is X?"}),
        "<f>reason(evidence=given_evidence)</f>": ("reason", {"evidence": EVIDENCE_VARIABLE}),
        "<f>decompose(reasoning_step='X moved in 2010')</f>": ("decompose", {"reasoning_step": "X moved in 2010"}),
        '<f>assert(state_left="a", state_right="b")</f>': ("assert", {"state_left": "a", "state_right": "b"}),
        '<f>assert("a", "b")</f>': ("assert", {"state_left": "a", "state_right": "b"}),
        "<f>terminate()</f>": ("terminate", {}),
    }
    for action, (name, args) in cases.items():
        p = parse_turn(f"**Thought:** I check it.\n**Action:** {action}")
        assert p.ok, (action, p.error)
        assert (p.action, p.args, p.thought) == (name, args, "I check it.")


def test_thought_may_mention_the_word_action():
    p = parse_turn("**Thought**: I need an action to compare.\n\n**Action**: <f>terminate()</f>")
    assert p.thought == "I need an action to compare." and p.action == "terminate"
    assert parse_turn("just text <f>terminate()</f>").thought == "just text"


def test_turn_tolerates_missing_closing_tag_and_echoed_template():
    p = parse_turn("Thought: go on\nAction: '**Action:** <f>...</f>' <f>terminate()")
    assert p.action == "terminate" and p.thought == "go on"


@pytest.mark.parametrize("reply,error", [
    ("The answer is B.", "no action in the template <f>...</f>"),
    ("<f>fly()</f>", "unknown action 'fly'"),
    ("<f>assert(state_left=\"a\")</f>", "assert is missing argument(s) state_right"),
    ("<f>reason(evidence=\"a\", evidence=\"b\")</f>", "reason got argument 'evidence' twice"),
    ("<f>reason(source=\"a\")</f>", "reason has no parameter 'source' (parameters: evidence)"),
    ("<f>reason(evidence=other_var)</f>", "argument 'evidence' of reason must be a quoted string or given_evidence"),
    ("<f>knowledge_gen(target=\"  \")</f>", "argument(s) target of knowledge_gen are empty"),
    ("<f>terminate()</f> <f>reason(evidence=given_evidence)</f>", "2 actions given; take only one action per turn"),
    ("<f>terminate</f>", "'terminate' is not a call like name(argument=\"...\")"),
])
def test_malformed_turns_name_the_problem(reply, error):
    p = parse_turn(reply)
    assert not p.ok and p.action is None
    assert p.error == error


def test_unterminated_string_is_an_error():
    p = parse_turn('<f>reason(evidence="abc)</f>')
    assert not p.ok and p.error.startswith("could not read the arguments")


def test_action_outside_ablation_is_rejected():
    with pytest.raises(ValueError, match="action 'decompose' is not available"):
        parse_call('decompose(reasoning_step="x")', ("assert", "terminate"))


def test_parse_assert():
    assert parse_assert("<c>1</c> <p>0.9</p>").conflict == 1
    assert parse_assert("<c>0</c><p>80%</p>").confidence == pytest.approx(0.8)
    ok = parse_assert("<c> 1 </c>")
    assert (ok.conflict, ok.confidence, ok.error) == (1, None, None)
    assert parse_assert("yes they conflict").error == "no verdict in <c>...</c>"
    assert parse_assert("<c>yes</c>").error == "verdict 'yes' is not 0 or 1"
    assert parse_assert("<c>1</c> then <c>0</c>").error == "several verdicts ['0', '1']"
    bad = parse_assert("<c>1</c> <p>1.5</p>")
    assert bad.conflict == 1 and bad.error == "confidence '1.5' is not in [0, 1]"


def test_parse_steps():
    assert parse_steps("Sub-steps:\n1. find X\n2) compare\nStep 3: done\n- extra") == [
        "find X", "compare", "done", "extra"]
    assert parse_steps("just one sentence") == []


def test_docstring_examples():
    import doctest

    from conflict_eval.plugins.microact import analysis
    from conflict_eval.scorers.microact import parse

    for module in (parse, analysis):
        result = doctest.testmod(module)
        assert result.attempted > 0 and result.failed == 0, module.__name__
