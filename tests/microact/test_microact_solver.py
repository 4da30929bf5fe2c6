"""The Micro-Act loop driven by scripted models: every branch, with the calls taken asserted."""

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.event import InfoEvent

from conflict_eval.components.compose import compose_task
from conflict_eval.scorers.microact import prompts as P
from conflict_eval.plugins.microact.solver import microact
from conflict_eval.testing import scripted_model

# The first demo item (conflict_eval/data/demo.jsonl): misinformation, gold A, conflict C.
QUESTION = "Which country is the Eiffel Tower located in?"
EVIDENCE = ("The Eiffel Tower, the wrought-iron lattice tower completed in 1889, stands on the Champ "
            "de Mars in Rome, Italy, and is the most visited monument in the country.")
LONG = " ".join(["word"] * 41)  # 41 words > complex_words=40
HELPERS = {
    "Generate some knowledge": ("knowledge_gen", "The Eiffel Tower is in Paris, France."),
    "Input an evidence": ("reason", "1. The tower stands in Rome.\n2. Rome is in Italy."),
    "Break down": ("decompose", "1. Where does the tower stand?\n2. Which country is that in?"),
}


def world(main_replies, assert_reply="<c>1</c> <p>0.9</p>", final="A</a>"):
    """A scripted model: helper prompts answered by kind, main-loop turns from
    ``main_replies`` in order; ``kinds`` records which kind each call was."""
    main = iter(main_replies)
    kinds = []

    def reply(prompt):
        for prefix, (kind, text) in HELPERS.items():
            if prompt.startswith(prefix):
                kinds.append(kind)
                return text
        if prompt.startswith("Evaluate whether"):
            kinds.append("assert")
            return assert_reply
        if "The session is over" in prompt:
            kinds.append("final")
            return final
        assert "turns remaining" in prompt, prompt[:200]
        kinds.append("main")
        return next(main)

    model = scripted_model(reply)
    model.kinds = kinds
    return model


def run(model, log_dir, **options):
    task = compose_task("microact", "demo", ["choice_accuracy", "microact_trajectory"], **options)
    [log] = inspect_eval(task, model=model, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    sample = log.samples[0]
    return sample, sample.store


def store_of(sample):
    return {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("MicroActStore:")}


def test_full_trajectory_warm_start_forced_split_and_terminate(log_dir):
    model = world([
        f'**Thought:** compare.\n**Action:** <f>assert(state_left="{LONG}", state_right="Paris")</f>',
        '**Thought:** split it.\n**Action:** <f>decompose(reasoning_step="The tower stands in Rome.")</f>',
        '**Thought:** ask myself.\n**Action:** <f>knowledge_gen(target="Where is the Eiffel Tower?")</f>',
        "**Thought:** I am confident.\n**Action:** <f>terminate()</f>",
    ])
    sample, _ = run(model, log_dir)
    # Figure 17 warm start (reason, knowledge_gen, reason), then turns 4-7; the
    # conflict on a 41-word statement forces a decompose inside turn 4.
    assert model.kinds == ["reason", "knowledge_gen", "reason",
                           "main", "assert", "decompose",
                           "main", "decompose",
                           "main", "knowledge_gen",
                           "main", "final"]
    calls = model.script.calls
    turn4 = calls[3]
    assert turn4[0].text.startswith("### Task: Knowledge Conflict Location\nYou are a detective.")
    assert "**eight turns**" in turn4[0].text
    assert f"# Question:\n{QUESTION}\nA. France\nB. Belgium\nC. Italy\nD. Uncertain\n" in turn4[0].text
    assert f'given_evidence = """{EVIDENCE}"""' in turn4[0].text
    assert "# 8 turns remaining" in turn4[0].text and "## Turn 1:" in turn4[0].text
    # warm-start history: three assistant turns with real observations
    assert [m.role for m in turn4] == ["user", "assistant"] * 3 + ["user"]
    assert turn4[1].text == P.TURN_TEMPLATE.format(thought=P.WARM_START_TURNS[0][0],
                                                   action="reason(evidence=given_evidence)")
    assert 'knowledge_gen(target="Which country is the Eiffel Tower located in?")' in turn4[3].text
    assert turn4[4].text.startswith("**observation**: My inherent knowledge about this question is:\n"
                                    "The Eiffel Tower is in Paris, France.")
    assert 'reason(evidence="The Eiffel Tower is in Paris, France.")' in turn4[5].text
    assert "based on model knowledge is list below" in turn4[6].text
    assert "# 5 turns remaining" in turn4[6].text and "## Turn 4:" in turn4[6].text
    assert turn4[6].text.endswith(f"**Thought:** {P.TURN4_THOUGHT}")
    # helper calls are separate one-message conversations
    assert len(calls[4]) == 1 and calls[4][0].text.startswith("Evaluate whether")
    assert f"Statement 1: {LONG}\nStatement 2: Paris" in calls[4][0].text
    assert f"Reasoning step: {LONG}" in calls[5][0].text  # forced split on the longer statement
    # the observation after turn 4 shows verdict and forced split, with the countdown
    turn5 = calls[6][-1].text
    assert turn5.startswith("**observation**: Conflict: 1 (1 = the two statements conflict")
    assert "Confidence: 0.9." in turn5 and "(forced decompose):\n1. Where does the tower stand?" in turn5
    assert "# 4 turns remaining" in turn5 and "## Turn 5:" in turn5
    assert "# 2 turns remaining" in calls[10][-1].text
    # the final call sees the whole history and answers in <a>
    assert calls[11][-1].text == P.FINAL_ANSWER_TEMPLATE
    assert sample.output.completion == "<a>A</a>"
    assert sample.scores["choice_accuracy"].value["accuracy"] == 1
    store = store_of(sample)
    assert store["turns_used"] == 7 and store["stop_reason"] == "terminate"
    assert store["action_counts"] == {"knowledge_gen": 2, "reason": 2, "decompose": 2, "assert": 1, "terminate": 1}
    assert (store["decompose_count"], store["forced_decompose_count"]) == (2, 1)
    assert (store["invalid_actions"], store["helper_parse_failures"], store["calls"]) == (0, 0, 12)
    assert [t["action"] for t in store["turns"]] == [
        "reason", "knowledge_gen", "reason", "assert", "decompose", "knowledge_gen", "terminate"]
    assert store["turns"][3]["conflict"] == 1 and store["turns"][3]["forced_decompose"] is True
    assert store["input_tokens"] == sum(sum(len(m.text.split()) for m in c) for c in calls)
    # the transcript has one info event per turn plus the summary
    sources = [e.source for e in sample.events if isinstance(e, InfoEvent)]
    assert sources == [f"microact turn {t}" for t in range(1, 8)] + ["microact summary"]
    traj = sample.scores["microact_trajectory"].value
    # Tables 3-4 count the model-chosen turns (assert, decompose, knowledge_gen, terminate);
    # the three executed worked turns are reported apart
    assert (traj["turns"], traj["worked_turns"], traj["total_turns"]) == (4, 3, 7)
    assert (store["model_turns"], store["worked_turns"]) == (4, 3)
    assert (traj["decompose"], traj["forced_decompose"], traj["calls"]) == (2, 1, 12)


def test_budget_exhaustion_still_answers(log_dir):
    model = world(["I think the answer is A."], final="C</a>")
    sample, _ = run(model, log_dir, max_turns=4)
    assert model.kinds == ["reason", "knowledge_gen", "reason", "main", "final"]
    assert "# 1 turns remaining" in model.script.calls[3][-1].text
    final = model.script.calls[4][-1].text
    assert final.startswith("**observation**: Invalid action: no action in the template <f>...</f>.")
    assert final.endswith(P.FINAL_ANSWER_TEMPLATE)
    store = store_of(sample)
    assert (store["stop_reason"], store["turns_used"], store["invalid_actions"]) == ("budget", 4, 1)
    assert sample.scores["choice_accuracy"].value == {"accuracy": 0, "parse_failure": 0, "refusal": 0, "misled": 1}


def test_malformed_actions_become_observations_and_the_loop_goes_on(log_dir):
    model = world([
        "Let me think.",
        '**Action:** <f>assert(state_left="a")</f>',
        "**Action:** <f>reason(evidence=given_evidence)</f>",
    ])
    sample, _ = run(model, log_dir, max_turns=3, warm_start=False)
    assert model.kinds == ["main", "main", "main", "reason", "final"]
    calls = model.script.calls
    assert calls[1][-1].text.startswith("**observation**: Invalid action: no action in the template")
    assert calls[2][-1].text.startswith(
        "**observation**: Invalid action: assert is missing argument(s) state_right.")
    assert calls[3][0].text.endswith(f"Evidence: {EVIDENCE}\n\nStep-by-step reasoning path:")
    assert "based on given evidence is list below" in calls[4][-1].text
    store = store_of(sample)
    assert store["invalid_actions"] == 2 and store["stop_reason"] == "budget"
    assert [t.get("error") for t in store["turns"]] == [
        "no action in the template <f>...</f>", "assert is missing argument(s) state_right", None]


def test_unreadable_assert_is_a_counted_helper_failure_without_split(log_dir):
    model = world([f'<f>assert(state_left="{LONG}", state_right="b")</f>', "<f>terminate()</f>"],
                  assert_reply="They clearly conflict.")
    sample, _ = run(model, log_dir, warm_start=False)
    assert model.kinds == ["main", "assert", "main", "final"]
    assert "The conflict check could not be read (no verdict in <c>...</c>)" in model.script.calls[2][-1].text
    store = store_of(sample)
    assert store["helper_parse_failures"] == 1 and store["decompose_count"] == 0


def test_no_forced_split_on_short_statements_or_no_conflict(log_dir):
    for statement, verdict in (("short one", "<c>1</c>"), (LONG, "<c>0</c> <p>0.7</p>")):
        model = world([f'<f>assert(state_left="{statement}", state_right="b")</f>', "<f>terminate()</f>"],
                      assert_reply=verdict)
        sample, _ = run(model, log_dir, warm_start=False)
        assert model.kinds == ["main", "assert", "main", "final"]
        assert store_of(sample)["decompose_count"] == 0


@pytest.mark.parametrize("ablation,missing,first_kinds", [
    ("no_navigational", ["knowledge_gen", "reason"], ["main"]),  # no warm start: it uses reason
    ("no_functional", ["assert"], ["reason", "knowledge_gen", "reason", "main"]),
    ("no_decompose", ["decompose"], ["reason", "knowledge_gen", "reason", "main"]),
])
def test_ablations_remove_actions(log_dir, ablation, missing, first_kinds):
    attempt = {"no_navigational": "<f>reason(evidence=given_evidence)</f>",
               "no_functional": '<f>assert(state_left="a", state_right="b")</f>',
               "no_decompose": '<f>decompose(reasoning_step="a")</f>'}[ablation]
    model = world([attempt, "<f>terminate()</f>"])
    sample, _ = run(model, log_dir, ablation=ablation)
    assert model.kinds == first_kinds + ["main", "final"]
    first_main = model.script.calls[len(first_kinds) - 1]
    for name in missing:
        assert f"**{name}(" not in first_main[0].text and f"'{name}'" not in first_main[-1].text
    assert f"action '{missing[-1] if ablation != 'no_navigational' else 'reason'}' is not available" \
        in model.script.calls[len(first_kinds)][-1].text
    store = store_of(sample)
    assert store["ablation"] == ablation and store["invalid_actions"] == 1
    assert set(store["action_counts"]).isdisjoint(missing)


@pytest.mark.parametrize("ablation,word,listed", [
    ("none", "four", ["knowledge_gen", "reason", "decompose", "assert", "terminate"]),  # verbatim
    ("no_navigational", "two", ["decompose", "assert", "terminate"]),
    ("no_functional", "three", ["knowledge_gen", "reason", "decompose", "terminate"]),
    ("no_decompose", "three", ["knowledge_gen", "reason", "assert", "terminate"]),
])
def test_header_counts_the_actions_it_lists(log_dir, ablation, word, listed):
    # the paper's "four actions" are the listed entries other than terminate();
    # under an ablation the same rule counts what the prompt lists
    model = world(["<f>terminate()</f>"])
    run(model, log_dir, ablation=ablation, warm_start=False)
    header = model.script.calls[0][0].text
    assert f"- In the **Action** section, apply **one** of the {word} actions listed above." in header
    numbered = [line.split("**")[1].split("(")[0] for line in header.splitlines()
                if line[:2] in {f"{i}." for i in range(1, 6)}]
    assert numbered == listed


def test_no_decompose_ablation_never_forces_a_split(log_dir):
    model = world([f'<f>assert(state_left="{LONG}", state_right="b")</f>', "<f>terminate()</f>"])
    sample, _ = run(model, log_dir, ablation="no_decompose", warm_start=False)
    assert model.kinds == ["main", "assert", "main", "final"]
    assert store_of(sample)["decompose_count"] == 0


def test_options_are_validated_before_running():
    with pytest.raises(ValueError, match="unknown ablation 'no_thinking'"):
        microact(ablation="no_thinking")
    with pytest.raises(ValueError, match="max_turns must be an integer from 1 to 50"):
        microact(max_turns=0)
    with pytest.raises(ValueError, match="complex_words must be a non-negative integer"):
        microact(complex_words=-1)


@pytest.mark.parametrize("reply, thought", [
    ("**Action:** <f>terminate()</f>", ""),  # only an Action: the model wrote no thought
    ("<f>terminate()</f>", ""),
    ("so the two paths agree.\n**Action:** <f>terminate()</f>", "so the two paths agree."),
    ("**Thought:** They agree.\n\n**Action:**\n```\n<f>terminate()</f>\n```", "They agree."),
])
def test_turn4_records_what_the_model_wrote_not_the_prefilled_thought(log_dir, reply, thought):
    sample, _ = run(world([reply]), log_dir)
    turn4 = store_of(sample)["turns"][3]
    assert turn4["action"] == "terminate" and turn4["thought"] == thought
    assert turn4["prefilled_thought"] == P.TURN4_THOUGHT
    assert "prefilled_thought" not in store_of(sample)["turns"][0]
