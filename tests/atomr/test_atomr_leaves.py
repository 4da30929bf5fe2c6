"""Scripted runs of every leaf form of the authors' tree format, per-node
degradation, the three review bugs, ``plans=FILE`` replay of released trees
with real BM25 retrieval, and ``conflict-eval atomr check-trees``."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.cli import main as cli_main
from conflict_eval.plugins.atomr.executor import Executor
from conflict_eval.plugins.atomr.parse import parse_tree
from conflict_eval.plugins.atomr.solver import load_plans
from conflict_eval.testing import scripted_model

from .test_atomr_executor import UNKNOWN, FixedSource, ans, budget_model, own_part, prompts_of


def question_of(prompt):
    """The question an operator / child prompt is about (its own part)."""
    return own_part(prompt).split("Question: ")[-1].split("\nAnswer:")[0]


async def test_end_leaf_reasons_over_the_referenced_siblings():
    tree = parse_tree(json.dumps({
        "Which film came out first, A or B?": ["1. When did A come out?", "2. When did B come out?",
                                               "3. Given answers of [1] and [2], which came out first?"],
        "1. When did A come out?": 'Relate("A", "release date")',
        "2. When did B come out?": 'Relate("B", "release date")',
        "3. Given answers of [1] and [2], which came out first?": "[END]"}))
    model = scripted_model([ans("1990"), ans("1985"), ans("B"), ans("B")])
    ex = Executor(model, {"text": FixedSource("text", "Wikipedia Passages", {"*": "x"})})
    answer = await ex.run(tree)
    p = prompts_of(model)
    assert 'Q: 1. When did A come out? A: ["1990"]' in own_part(p[2])
    assert 'Q: 2. When did B come out? A: ["1985"]' in own_part(p[2])
    assert question_of(p[2]) == "Given answers of 1990 and 1985, which came out first?"
    assert dict(ex.llm_calls) == {"relate": 2, "sibling_reasoning": 1, "child_reasoning": 1}
    assert answer.answers == ["B"] and not ex.degraded


async def test_free_text_sibling_leaf_over_non_sibling_references():
    # hotpotqa released tree 88: the leaf text itself says which answers to use
    tree = parse_tree(json.dumps({
        "Q?": ["1. How big was X?", "2. How big was Y?", "3. Which was bigger?"],
        "1. How big was X?": ["4. What is X?", "5. How big was [4]?"],
        "4. What is X?": 'Search("X")', "5. How big was [4]?": 'Relate([4], "size")',
        "2. How big was Y?": ["6. What is Y?", "7. How big was [6]?"],
        "6. What is Y?": 'Search("Y")', "7. How big was [6]?": 'Relate([6], "size")',
        "3. Which was bigger?": "Given answers of [5] and [7], compare their size to determine which is bigger."}))
    assert tree.nodes[3].sibling
    replies = {"What is X?": ans("X1"), "What is Y?": ans("Y1"), "How big was X1?": ans("10"),
               "How big was Y1?": ans("20")}
    model = scripted_model(lambda p: replies.get(question_of(p), ans("Y")))
    ex = Executor(model, {"text": FixedSource("text", "Wikipedia Passages", {"*": "x"})})
    await ex.run(tree)
    [sib] = [r for r in ex.records if r.get("kind") == "sibling_reasoning"]
    assert sib["qa_pairs"] == ['Q: 5. How big was [4]? A: ["10"]', 'Q: 7. How big was [6]? A: ["20"]']
    assert not ex.degraded


async def test_nested_call_runs_inner_first_as_a_child():
    # hotpotqa released tree 345: Relate(Search("My Darkest Days", "band"), "members")
    tree = parse_tree(json.dumps({"Who are the members of My Darkest Days?":
                                  'Relate(Search("My Darkest Days", "band"), "members")'}))
    text = FixedSource("text", "Wikipedia Passages", {"*": "My Darkest Days is a band; members Matt Walst."})
    model = scripted_model([ans("My Darkest Days (band)"), ans("Matt Walst", "Sal Costa")])
    ex = Executor(model, {"text": text})
    answer = await ex.run(tree)
    assert text.queries == ["My Darkest Days band", "My Darkest Days (band) members"]
    assert dict(ex.llm_calls) == {"search": 1, "relate": 1}
    assert [r["kind"] for r in ex.records] == ["operator", "operator"] and ex.records[0]["synthetic"]
    assert answer.answers == ["Matt Walst", "Sal Costa"]


async def test_unreadable_leaf_degrades_that_node_only():
    tree = parse_tree(json.dumps({
        "Where was the director of Solaris born?": ["1. Who directed Solaris?", "2. Where was [1] born?"],
        "1. Who directed Solaris?": 'Relate("Solaris", "director")',
        "2. Where was [1] born?": 'Relate([1], "result:", "loss", relate([1]))'}))
    text = FixedSource("text", "Wikipedia Passages", {"*": "Tarkovsky was born in Zavrazhye."})
    model = scripted_model([ans("Andrei Tarkovsky"), ans("Zavrazhye"), ans("Zavrazhye")])
    ex = Executor(model, {"text": text})
    answer = await ex.run(tree)
    assert answer.answers == ["Zavrazhye"]
    assert text.queries == ["Solaris director", "Where was Andrei Tarkovsky born?"]  # node 2: Direct RAG
    assert dict(ex.llm_calls) == {"relate": 1, "direct_rag": 1, "child_reasoning": 1}
    [d] = ex.degraded
    assert d["label"] == "2" and "takes 2 arguments" in d["reason"]
    assert ex.records[1]["kind"] == "degraded" and ex.records[2]["kind"] == "child_reasoning"


async def test_filter_over_an_unknown_answer_fails_and_rebuilds_the_question():
    # review bug: question.replace("", entity) interleaved the entity with every character
    tree = parse_tree(json.dumps({
        "Which albums were released in 2005?": ["1. What albums did Z release?", "2. Among [1], which were released in 2005?"],
        "1. What albums did Z release?": 'Relate("Z", "albums")',
        "2. Among [1], which were released in 2005?": 'Filter([1], "released in 2005")'}))
    text = FixedSource("text", "Wikipedia Passages", {"*": "Unknown released in 2005"})
    # node 1's Direct-RAG fallback repeats its Relate prompt byte for byte: reused, not sent
    model = scripted_model([UNKNOWN, ans("Fijación Oral"), ans("Fijación Oral")])
    ex = Executor(model, {"text": text})
    await ex.run(tree)
    assert dict(ex.reused_replies) == {"direct_rag": 1}
    rec = ex.records[1]
    assert rec["kind"] == "operator" and "Filter input is empty" in rec["failure"]
    assert "entities" not in rec  # no retrieval per entity, so "Unknown" never passes the overlap filter
    rag_q = question_of(prompts_of(model)[1])
    assert rag_q == "Among (What albums did Z release?), which were released in 2005?"


async def test_retrieval_error_inside_a_parents_direct_rag_fallback_fails_the_sample():
    from conflict_eval.plugins.atomr.executor import RetrievalError

    class Flaky(FixedSource):
        def search(self, query, k=3):
            if len(self.queries) >= 1:
                self.queries.append(query)
                raise OSError("index unavailable")
            return super().search(query, k)

    tree = parse_tree(json.dumps({"Q root?": ["1. a?"], "1. a?": 'Search("a")'}))
    model = scripted_model([ans("A"), UNKNOWN, ans("from memory")])
    ex = Executor(model, {"text": Flaky("text", "Wikipedia Passages", {"*": "x"})})
    with pytest.raises(RetrievalError, match=r"knowledge source 'text' \(Flaky\) failed on query 'Q root\?': "
                                             r"OSError: index unavailable"):
        await ex.run(tree)
    assert ex.retrieval_errors == 1
    assert len(model.script.calls) == 2  # no Direct-RAG answer without the knowledge


def test_max_tokens_caps_every_call(shared_data, log_dir):
    tree = json.dumps({"Q?": ["1. a?"], "1. a?": 'Search("Animorphs", "book series")'})
    # --max-tokens 200 on the command line: Inspect puts it in the model's config
    model, seen = budget_model([tree, "!cut", ans("Animorphs"), ans("Animorphs")], max_tokens=200)
    [log] = inspect_eval("conflict_eval/atomr", task_args={
        "dataset": "hotpotqa", "path": str(shared_data / "hotpotqa_ircot" / "sample.jsonl")},
        model=model, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    # planner 512 -> 200; operator 256 -> 200 and its retry (512 -> 200) is skipped: not larger;
    # the truncated operator reply fails, so Direct RAG (256 -> 200), then child reasoning (256 -> 200)
    assert [m for m, _ in seen] == [200, 200, 200, 200]
    calls = log.samples[0].store["AtomRStore:llm_calls"]
    assert calls == {"planning": 1, "search": 1, "direct_rag": 1, "child_reasoning": 1}


# --------------------------------------------------------------------------
# plans=FILE: replay the authors' released trees with real BM25 retrieval


def test_load_plans_formats_and_errors(tmp_path):
    jl = tmp_path / "p.jsonl"
    jl.write_text(json.dumps({"index": 0, "question": " Who?  ", "gold": [], "reasoning_tree": {"Who?": 'Search("x")'}}) + "\n")
    assert list(load_plans(str(jl))) == ["who?"]
    js = tmp_path / "p.json"
    js.write_text(json.dumps({"Who?": {"Who?": 'Search("x")'}}))
    assert load_plans(str(js)) == {"who?": {"Who?": 'Search("x")'}}
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q"}\n')
    with pytest.raises(ValueError, match="missing field 'reasoning_tree'"):
        load_plans(str(bad))
    with pytest.raises(ValueError, match="no such file"):
        load_plans(str(tmp_path / "none.jsonl"))


def test_replay_released_trees_end_to_end_with_bm25(shared_data, log_dir, tmp_path):
    released = shared_data / "atomr_released_trees" / "hotpotqa_trees.jsonl"
    trees = {json.loads(line)["question"].strip(): line for line in released.read_text().splitlines()}
    sample = [json.loads(line) for line in (shared_data / "hotpotqa_ircot" / "sample.jsonl").read_text().splitlines()]
    with_plan = [r for r in sample if r["question_text"].strip() in trees][:4]
    without = next(r for r in sample if r["question_text"].strip() not in trees)
    assert len(with_plan) == 4
    data = tmp_path / "hotpotqa.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in with_plan + [without]))
    plans = tmp_path / "plans.jsonl"  # the released file's own lines, unchanged
    plans.write_text("".join(trees[r["question_text"].strip()] + "\n" for r in with_plan))

    planner_tree = json.dumps({without["question_text"]: 'Search("x")'})

    def reply(prompt):
        if prompt.startswith("You are given 3 atomic functions"):
            return planner_tree
        return ans("Some Answer")

    model = scripted_model(reply)
    [log] = inspect_eval("conflict_eval/atomr", task_args={"dataset": "hotpotqa", "path": str(data),
                                                          "plans": str(plans)},
                         model=model, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    planner_calls = [c for c in model.script.calls if c[-1].text.startswith("You are given 3 atomic functions")]
    assert len(planner_calls) == 1  # only the sample without a plan
    by_q = {s.metadata["question"]: s for s in log.samples}
    for r in with_plan:
        store = by_q[r["question_text"]].store
        assert store["AtomRStore:plan_source"] == "replayed"
        assert store["AtomRStore:planner_fallback"] is False and store["AtomRStore:plan_error"] is None
        assert store["AtomRStore:tree_format"] == "flat"
        assert "planning" not in store["AtomRStore:llm_calls"]
        nodes = store["AtomRStore:tree"]
        assert nodes[-1]["index"] == 0 and nodes[-1]["kind"] != "direct_rag_root"
        assert "fallback" not in nodes[-1]  # no root-level fallback
        ops = [n for n in nodes if n.get("kind") == "operator"]
        assert ops and all(n["passages"]["text"] for n in ops if "passages" in n)  # real BM25 hits
        assert store["AtomRStore:retriever_calls"]["text"] >= len(ops)
        assert len(nodes) == len(json.loads(trees[r["question_text"].strip()])["reasoning_tree"])
    planned = by_q[without["question_text"]].store
    assert planned["AtomRStore:plan_source"] == "planned" and planned["AtomRStore:llm_calls"]["planning"] == 1


# --------------------------------------------------------------------------
# conflict-eval atomr check-trees


def test_check_trees_cli_on_the_released_files(shared_data, capsys):
    files = sorted(str(p) for p in (shared_data / "atomr_released_trees").glob("*_trees.jsonl"))
    assert cli_main(["atomr", "check-trees", *files]) == 0
    out = capsys.readouterr().out
    assert "2wiki_trees.jsonl: 500 trees, parsed 500 (100.0%), rejected 0" in out
    assert "hotpotqa_trees.jsonl: 500 trees, parsed 499 (99.8%), rejected 1" in out
    assert cli_main(["atomr", "check-trees", *files, "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["parsed"] == 999 and got["rejected"] == 1 and sum(got["reasons"].values()) == 1


def test_check_trees_cli_on_planner_replies_and_bad_files(tmp_path, capsys):
    f = tmp_path / "replies.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in [
        '```json\n{"Q?": "Search(\\"x\\")"}\n```',        # a reply as text
        {"Q?": ["1. a?"], "1. a?": "[END]"},               # a bare tree (sibling leaf with nothing to reason over)
        "I cannot decompose this.",
        {"question": "Q?", "reasoning_tree": "TREE_PARSING_ERROR"}]) + "\n")
    assert cli_main(["atomr", "check-trees", str(f), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["parsed"] == 1 and got["rejected"] == 3
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert cli_main(["atomr", "check-trees", str(empty)]) == 2
    assert "empty" in capsys.readouterr().err
