"""conflict_eval/run -T method=madam_rag -T dataset=ramdocs on the shared sample
with a scripted model: the calls of each sample follow the loop's rules exactly
(N agents per round, one aggregation per round that did not stop early)."""

import json
import re
from collections import defaultdict

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.report.accounting import sample_cost
from conflict_eval.plugins.madam_rag.solver import MadamRagStore
from conflict_eval.testing import scripted_model

# Agent answers by round; the loop stops early at round t when every agent's
# answer of round t equals (contains / is contained in) its answer of round t-1.
PATTERNS = {
    "stop_at_2": ["alpha", "alpha"],  # round 2 unchanged -> no 2nd aggregation, 2 rounds
    "stop_at_3": ["alpha", "beta", "beta"],  # 3 rounds, 2 aggregations
    "no_stop": ["alpha", "beta", "gamma"],  # 3 rounds, 3 aggregations
}
EXPECTED = {  # (rounds run, aggregations) -> calls = N * rounds + aggregations
    "stop_at_2": (2, 1), "stop_at_3": (3, 2), "no_stop": (3, 3),
}
LIMIT = 9


def _rows(shared_data):
    path = shared_data / "ramdocs" / "sample.jsonl"
    return path, [json.loads(line) for line in path.read_text().splitlines()[:LIMIT]]


def debate_script(rows, broken=()):
    """Agents answer by (question, document) call count = round; the
    aggregator lists the gold answers (or writes no list for ``broken``)."""
    pattern_of = {r["question"]: list(PATTERNS)[i % 3] for i, r in enumerate(rows)}
    gold_of = {r["question"]: r["gold_answers"] for r in rows}
    n_docs = {r["question"]: len(r["documents"]) for r in rows}
    seen = defaultdict(int)
    prompts = []

    def reply(prompt):
        prompts.append(prompt)
        question = prompt.split("Question: ", 1)[1].split("\n", 1)[0]
        if prompt.startswith("You are an aggregator"):
            question = prompt.rsplit("Question: ", 1)[1].split("\n", 1)[0]
            if question in broken:
                return "The agents agree on several answers."
            return f"All Correct Answers: {json.dumps(gold_of[question])}. Explanation: scripted."
        words = PATTERNS[pattern_of[question]]
        if "The following reponses" in prompt:  # round t > 1: the history holds round t-1's answers
            previous = prompt.split("additional information.\nAgent ", 1)[1].split("Answer: ", 1)[1].split(".", 1)[0]
            round_ = words.index(previous) + 2
        else:  # round 1; a lone agent gets the same prompt every round (no one else to hear)
            seen[prompt] += 1
            round_ = seen[prompt] if n_docs[question] == 1 else 1
        word = words[round_ - 1]
        return f"Answer: {word}. Explanation: round {round_} of the scripted debate."

    reply.prompts = prompts
    return reply, pattern_of


def test_calls_follow_the_loop_rules_on_the_shared_sample(shared_data, log_dir):
    path, rows = _rows(shared_data)
    broken = {rows[4]["question"]}
    script, pattern_of = debate_script(rows, broken)
    model = scripted_model(script)
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "madam_rag", "dataset": "ramdocs", "path": str(path)},
                         model=model, limit=LIMIT, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    # no -T scorer=: RAMDocs declares strict_em
    assert log.eval.metadata["scorers"] == ["strict_em"] and log.eval.metadata["scorer_source"] == "declared"
    by_question = {r["question"]: r for r in rows}
    assert len(log.samples) == LIMIT
    for sample in log.samples:
        row = by_question[sample.metadata["question"]]
        n = len(row["documents"])
        rounds, aggregations = EXPECTED[pattern_of[row["question"]]]
        expected_calls = n * rounds + aggregations
        store = _store(sample)
        assert sample_cost(sample).calls == expected_calls, (pattern_of[row["question"]], n)
        assert store["calls"] == expected_calls
        assert (store["agent_calls"], store["aggregator_calls"]) == (n * rounds, aggregations)
        assert store["rounds_run"] == rounds and store["n_agents"] == n
        assert store["stop_reason"] == ("max_rounds" if pattern_of[row["question"]] == "no_stop" else "early_stop")
        assert store["final_round"] == aggregations  # the last aggregation is the answer
        assert store["input_tokens"] > 0 and store["output_tokens"] > 0
        score = sample.scores["ramdocs_strict_em"]
        if row["question"] in broken:  # counted, never scored as an answer
            assert store["aggregation_parse_failure"] and score.value["parse_failure"] == 1
            assert score.value["strict_em"] == 0
        else:
            assert store["final_answers"] == [a.strip() for a in row["gold_answers"]]
            assert (score.value["strict_em"], score.value["parse_failure"]) == (1, 0)
            assert score.answer == " | ".join(store["final_answers"])
    metrics = {name: m.value for name, m in log.results.scores[0].metrics.items()}
    assert metrics["parse_failure"] == pytest.approx(1 / LIMIT)
    assert metrics["strict_em"] == pytest.approx((LIMIT - 1) / LIMIT)


def test_each_agent_sees_the_other_agents_previous_responses(shared_data, log_dir):
    path, rows = _rows(shared_data)
    row = next(r for r in rows if len(r["documents"]) >= 3)
    script, _ = debate_script([row])  # one sample: pattern stop_at_2
    model = scripted_model(script)
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "madam_rag", "dataset": "ramdocs", "path": str(path),
                                    "scorer": "strict_em", "rounds": 2},
                         model=model, sample_id=_sample_id(path, row), log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    docs = [d["text"] for d in row["documents"]]
    n = len(docs)
    round1 = [p for p in script.prompts if "The following reponses" not in p and p.startswith("You are an agent")]
    round2 = [p for p in script.prompts if "The following reponses" in p]
    assert len(round1) == len(round2) == n
    for i, doc in enumerate(docs):
        [p] = [p for p in round2 if f"Document: {doc}\n" in p]
        history = p.split("additional information.\n", 1)[1].split("\nAnswer the question based", 1)[0]
        lines = history.split("\n")
        others = [j + 1 for j in range(n) if j != i]
        assert [int(line.split(":")[0].split()[1]) for line in lines] == others
        assert all(line.endswith("Explanation: round 1 of the scripted debate.") for line in lines)
    [agg] = [p for p in script.prompts if p.startswith("You are an aggregator")]
    assert agg.endswith("\n".join(f"Agent {i + 1}: Answer: alpha. Explanation: round 1 of the scripted debate."
                                  for i in range(n)) + "\n")


def _store(sample):
    """The sample's MadamRagStore fields, as logged."""
    prefix = f"{MadamRagStore.__name__}:"
    return {k[len(prefix):]: v for k, v in sample.store.items() if k.startswith(prefix)}


def _sample_id(path, row):
    from conflict_eval.plugins.ramdocs.dataset import load_ramdocs

    return next(r.id for r in load_ramdocs(path) if r.question == row["question"])


def test_a_sample_without_documents_is_a_clear_error(log_dir):
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset

    from conflict_eval.plugins.madam_rag.solver import madam_rag
    from conflict_eval.records import ConflictQA, to_sample

    record = ConflictQA(id="q1", dataset="closed_book", question="Who wrote Hamlet?", answers=["Shakespeare"])
    task = Task(dataset=MemoryDataset([to_sample(record)]), solver=madam_rag())
    model = scripted_model(["Answer: x."])
    [log] = inspect_eval(task, model=model, log_dir=log_dir, display="none")
    assert log.status == "error"
    assert "madam_rag: sample 'q1' (dataset 'closed_book') has no documents" in log.error.message
    assert model.script.calls == []


def test_bad_options_fail_before_any_sample():
    from conflict_eval.plugins.madam_rag.solver import madam_rag

    with pytest.raises(ValueError, match="rounds"):
        madam_rag(rounds=0)
    with pytest.raises(ValueError, match="max_tokens"):
        madam_rag(max_tokens=0)


def test_agent_calls_of_a_round_run_concurrently(shared_data, log_dir):
    import asyncio

    from inspect_ai.model import GenerateConfig, ModelAPI, get_model, modelapi

    from conflict_eval.testing import scripted_output

    probe = {"in_flight": 0, "max": 0}

    @modelapi(name="madam_concurrency_probe")
    class Probe(ModelAPI):
        def __init__(self, model_name, base_url=None, api_key=None, config=None, **kwargs):
            super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

        async def generate(self, input, tools, tool_choice, config):
            probe["in_flight"] += 1
            probe["max"] = max(probe["max"], probe["in_flight"])
            await asyncio.sleep(0.05)
            probe["in_flight"] -= 1
            if input[-1].text.startswith("You are an aggregator"):
                return scripted_output('All Correct Answers: ["x"]. Explanation: -')
            return scripted_output("Answer: alpha. Explanation: -")

        def max_connections(self) -> int:
            return 16

    path, rows = _rows(shared_data)
    row = next(r for r in rows if len(r["documents"]) >= 4)
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"method": "madam_rag", "dataset": "ramdocs", "path": str(path),
                                    "scorer": "strict_em"},
                         model=get_model("madam_concurrency_probe/m"), sample_id=_sample_id(path, row),
                         log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert probe["max"] == len(row["documents"])  # all agents of a round at once, aggregator alone


def test_a_lone_agent_gets_the_round_one_prompt_again(log_dir):
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset

    from conflict_eval.plugins.madam_rag.solver import madam_rag
    from conflict_eval.records import ConflictQA, Passage, to_sample

    record = ConflictQA(id="q1", dataset="one_doc", question="Who wrote Hamlet?", answers=["Shakespeare"],
                        evidence=[Passage(text="Hamlet is a tragedy by William Shakespeare.")])
    replies = ["Answer: Shakespeare. Explanation: the document.",  # round 1 agent
               'All Correct Answers: ["Shakespeare"]. Explanation: agent 1.',  # round 1 aggregator
               "Answer: Marlowe. Explanation: changed.",  # round 2 agent: changed -> aggregate
               'All Correct Answers: ["Marlowe"]. Explanation: agent 1.',
               "Answer: Marlowe. Explanation: same."]  # round 3 agent: unchanged -> stop
    model = scripted_model(replies)
    [log] = inspect_eval(Task(dataset=MemoryDataset([to_sample(record)]), solver=madam_rag()),
                         model=model, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    prompts = [call[-1].text for call in model.script.calls]
    assert len(prompts) == 5  # 1 agent x 3 rounds + 2 aggregations
    assert prompts[0] == prompts[2] == prompts[4]  # no other agent to hear: no history
    store = _store(log.samples[0])
    assert store["stop_reason"] == "early_stop" and store["final_round"] == 2
    assert store["final_answers"] == ["Marlowe"]


def test_an_empty_agent_reply_is_an_error_retried_not_a_blank_turn(log_dir):
    """Issue 42: an empty agent reply is a failed call (a sample error that
    ``--retry-on-error`` runs again), never a blank line the other agents see."""
    from inspect_ai import Task
    from inspect_ai.dataset import MemoryDataset

    from conflict_eval.plugins.madam_rag.solver import madam_rag
    from conflict_eval.records import ConflictQA, Passage, to_sample

    record = ConflictQA(id="q1", dataset="two_docs", question="Who wrote Hamlet?", answers=["Shakespeare"],
                        evidence=[Passage(text="Hamlet is by Shakespeare."), Passage(text="Hamlet is by Marlowe.")])
    task = Task(dataset=MemoryDataset([to_sample(record)]), solver=madam_rag())
    [log] = inspect_eval(task, model=scripted_model(["Answer: Shakespeare. Explanation: doc.", "  \n"]),
                         log_dir=log_dir, display="none")
    assert log.status == "error" and "MADAM-RAG agent 2" in log.error.message and "empty reply" in log.error.message

    replies = iter(["Answer: Shakespeare. Explanation: doc.", "",  # first try: agent 2 empty -> error
                    "Answer: Shakespeare. Explanation: doc.", "Answer: Marlowe. Explanation: doc.",  # retry
                    'All Correct Answers: ["Shakespeare", "Marlowe"]. Explanation: both.',
                    "Answer: Shakespeare. Explanation: same.", "Answer: Marlowe. Explanation: same."])
    model = scripted_model(lambda prompt: next(replies))
    [log] = inspect_eval(task, model=model, log_dir=log_dir, display="none", retry_on_error=1)
    assert log.status == "success", log.error
    assert len(model.script.calls) == 7  # 2 of the failed try, then 2 agents + 1 aggregation + 2 agents (early stop)
    store = _store(log.samples[0])
    assert all(r.strip() for entry in store["rounds"] for r in entry["responses"])
    # no prompt (aggregator or round-2 agent) shows an agent turn without text
    shown = [line for call in model.script.calls[2:] for line in call[-1].text.splitlines()
             if re.match(r"Agent \d+:", line)]
    assert len(shown) >= 2 + 2 and all(line.split(":", 1)[1].strip() for line in shown)
