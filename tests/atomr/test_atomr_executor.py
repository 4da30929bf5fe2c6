"""Algorithm 1 with scripted models: every operator, every fallback, the overlap filter.

The knowledge sources here are test doubles returning fixed passages, so the
retrieved text (and the overlap arithmetic) is known exactly; the real
sources are tested on real records in test_atomr_sources.py.
"""

import json

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import GenerateConfig, get_model

from conflict_eval.plugins.atomr.executor import Executor, filter_overlap, overlap_coefficient
from conflict_eval.plugins.atomr.parse import parse_tree
from conflict_eval.retrieval import Hit
from conflict_eval.testing import scripted_model, scripted_output


def ans(*items, para=None):
    para = ", ".join(items) if para is None else para
    return f"So the answer is: (1) Paraphrase Answer: {para}; (2) Answer List: {json.dumps(list(items))}"


UNKNOWN = "So the answer is: (1) Paraphrase Answer: Unknown; (2) Answer List: []"


class FixedSource:
    """Returns the passages whose key occurs in the query (all of them for key '*')."""

    def __init__(self, name, label, passages):
        self.name, self.label, self.passages, self.queries = name, label, passages, []

    def search(self, query, k=3):
        self.queries.append(query)
        texts = [t for key, t in self.passages.items() if key == "*" or key.lower() in query.lower()]
        return [Hit(id=f"{self.name}{i}", text=t, title=None, score=1.0, rank=i + 1)
                for i, t in enumerate(texts[:k])]


def prompts_of(model):
    return [call[-1].text for call in model.script.calls]


def own_part(prompt):
    """The prompt after its few-shot examples."""
    return prompt.split("Your Question.")[-1]


async def test_search_leaf_single_source_no_selection_call():
    text = FixedSource("text", "Wikipedia Passages", {"Shakira": "Shakira is a Colombian singer."})
    model = scripted_model([ans("Shakira (Colombian singer)")])
    ex = Executor(model, {"text": text})
    answer = await ex.run(parse_tree('{"Who is Shakira?": "Search(\\"Shakira\\", \\"musician\\")"}'))
    assert answer.answers == ["Shakira (Colombian singer)"]
    assert text.queries == ["Shakira musician"]
    [prompt] = prompts_of(model)
    assert "entity disambiguation question \"Who is Shakira?\"" in prompt  # Figure 8
    assert "Wikipedia Passages: [1] Shakira is a Colombian singer." in prompt
    assert dict(ex.llm_calls) == {"search": 1} and dict(ex.retriever_calls) == {"text": 1}
    assert ex.records[0]["operator"] == 'Search("Shakira", "musician")'


async def test_relate_with_reference_then_child_answer_reasoning():
    tree = parse_tree(json.dumps({"Where was the director of Solaris born?": [
        {"1. Who directed Solaris?": 'Relate("Solaris", "director")'},
        {"2. Where was [1] born?": 'Relate([1], "place of birth")'}]}))
    text = FixedSource("text", "Wikipedia Passages", {"*": "Solaris was directed by Andrei Tarkovsky."})
    model = scripted_model([ans("Andrei Tarkovsky"), ans("Zavrazhye"), ans("Zavrazhye", para="Born in Zavrazhye")])
    ex = Executor(model, {"text": text})
    answer = await ex.run(tree)
    assert answer.text == "Zavrazhye"
    assert text.queries == ["Solaris director", "Andrei Tarkovsky place of birth"]
    p = prompts_of(model)
    assert p[1].startswith('Please answer the question "Where was Andrei Tarkovsky born?"')  # Figure 9
    assert p[2].startswith('The complex question "Where was the director of Solaris born?"')  # Figure 11
    assert 'Q: 1. Who directed Solaris? A: ["Andrei Tarkovsky"]' in p[2]
    assert 'Q: 2. Where was [1] born? A: ["Zavrazhye"]' in p[2]
    assert dict(ex.llm_calls) == {"relate": 2, "child_reasoning": 1}
    assert [r["index"] for r in ex.records] == [1, 2, 0]


def test_overlap_coefficient_by_hand():
    # q = {bill, gates, born, in, 1955} (5 tokens); p = {bill, gates, was, born, on, october, 28, 1955}
    # (8 tokens); q ∩ p = {bill, gates, born, 1955} = 4 -> 4 / min(5, 8) = 0.8
    assert overlap_coefficient("Bill Gates born in 1955", "Bill Gates was born on October 28, 1955.") == 0.8
    # q = {lionel, messi, born, in, 1955}; p = {lionel, messi, is, argentine, footballer}: 2 / 5 = 0.4
    assert overlap_coefficient("Lionel Messi born in 1955", "Lionel Messi is an Argentine footballer.") == 0.4
    assert overlap_coefficient("x", "") == 0.0


async def test_filter_drops_entities_below_threshold_before_the_llm():
    tree = parse_tree(json.dumps({"Who among them was born in 1955?": [
        {"1. Who are they?": 'Search("famous people")'},
        {"2. Among [1], who was born in 1955?": 'Filter([1], "born in 1955")'}]}))
    text = FixedSource("text", "Wikipedia Passages", {
        "famous": "A list of famous people.",
        "Bill Gates": "Bill Gates was born on October 28, 1955.",      # overlap 0.8 (see above)
        "Lionel Messi": "Lionel Messi is an Argentine footballer."})  # overlap 0.4 < 0.5
    model = scripted_model([ans("Lionel Messi", "Bill Gates"), ans("Bill Gates"),
                            ans("Bill Gates")])
    ex = Executor(model, {"text": text}, threshold=0.5)
    answer = await ex.run(tree)
    assert answer.answers == ["Bill Gates"]
    assert text.queries[1:] == ["Lionel Messi born in 1955", "Bill Gates born in 1955"]
    rec = ex.records[1]
    assert rec["overlap"] == {"Lionel Messi": 0.4, "Bill Gates": 0.8} and rec["kept"] == ["Bill Gates"]
    filter_prompt = prompts_of(model)[1]
    assert filter_prompt.startswith('Using the retrieved knowledge from Wikipedia, Google, or Wikidata, '
                                    'please answer the following filter question "Among Bill Gates, who')
    assert "Argentine" not in filter_prompt and "October 28, 1955" in filter_prompt
    assert dict(ex.retriever_calls) == {"text": 3}
    # with t = 0.4 both entities pass (0.4 >= 0.4)
    ex2 = Executor(scripted_model([ans("Lionel Messi", "Bill Gates"), ans("Bill Gates"), ans("Bill Gates")]),
                   {"text": text}, threshold=0.4)
    await ex2.run(tree)
    assert ex2.records[1]["kept"] == ["Lionel Messi", "Bill Gates"]


def test_filter_overlap_by_hand():
    # passages at least as long as the query: the paper's coefficient (min(|q|, |p|) = |q|)
    assert filter_overlap("Bill Gates born in 1955", "Bill Gates was born on October 28, 1955.") == 0.8
    assert filter_overlap("Lionel Messi born in 1955", "Lionel Messi is an Argentine footballer.") == 0.4
    # a title-only hit: q = {lionel, messi, born, in, 1955}, p = {lionel, messi} is inside q;
    # the paper's min(|q|, |p|) = 2 gives 2 / 2 = 1.0, the share of the query found is 2 / 5 = 0.4
    assert overlap_coefficient("Lionel Messi born in 1955", "Lionel Messi") == 1.0
    assert filter_overlap("Lionel Messi born in 1955", "Lionel Messi") == 0.4
    assert filter_overlap("x", "") == 0.0 and filter_overlap("", "x") == 0.0


async def test_filter_with_full_overlap_from_a_title_only_hit_still_filters():
    text = FixedSource("text", "Wikipedia Passages", {
        "Lionel Messi": "Lionel Messi",                  # title only: 1.0 by the paper's min, 0.4 here
        "Bill Gates": "Bill Gates was born in 1955."})   # q inside p: 5 / 5 = 1.0
    model = scripted_model([ans("Bill Gates")])
    ex = Executor(model, {"text": text}, threshold=0.5)
    tree = parse_tree('{"Who was born in 1955?": "Filter([\"Lionel Messi\", \"Bill Gates\"], \"born in 1955\")"}')
    answer = await ex.run(tree)
    assert answer.answers == ["Bill Gates"]
    rec = ex.records[0]
    assert rec["overlap"] == {"Lionel Messi": 0.4, "Bill Gates": 1.0} and rec["kept"] == ["Bill Gates"]
    assert dict(ex.llm_calls) == {"filter": 1}
    assert "Lionel Messi" not in own_part(prompts_of(model)[0]).split("Question:")[0]
    # every entity a title-only hit: nothing is kept, the operator fails to Direct RAG
    stubs = FixedSource("text", "Wikipedia Passages", {"Lionel Messi": "Lionel Messi", "Bill Gates": "Bill Gates"})
    ex2 = Executor(scripted_model([ans("Nobody")]), {"text": stubs}, threshold=0.5)
    await ex2.run(tree)
    assert ex2.records[0]["overlap"] == {"Lionel Messi": 0.4, "Bill Gates": 0.4}
    assert ex2.records[0]["kept"] == [] and dict(ex2.llm_calls) == {"direct_rag": 1}


@pytest.mark.parametrize("condition", ["the", "?"])
async def test_filter_condition_with_no_word_fails(condition):
    text = FixedSource("text", "Wikipedia Passages", {"Bill Gates": "Bill Gates"})
    ex = Executor(scripted_model([ans("Bill Gates")]), {"text": text})
    await ex.run(parse_tree(json.dumps({"Who?": f'Filter(["Bill Gates"], "{condition}")'})))
    assert "condition is empty" in ex.records[0]["failure"] and "entities" not in ex.records[0]


async def test_filter_with_no_entity_left_falls_back_to_direct_rag():
    text = FixedSource("text", "Wikipedia Passages", {"Messi": "Lionel Messi is an Argentine footballer."})
    model = scripted_model([ans("Nobody")])
    ex = Executor(model, {"text": text})
    answer = await ex.run(parse_tree('{"Who was born in 1955?": "Filter([\\"Lionel Messi\\"], \\"born in 1955\\")"}'))
    assert answer.answers == ["Nobody"]
    assert dict(ex.llm_calls) == {"direct_rag": 1}  # no Filter call, no new retrieval
    assert dict(ex.retriever_calls) == {"text": 1}
    assert ex.records[0]["fallback"] == "direct_rag" and "overlap" in ex.records[0]["failure"]


@pytest.mark.parametrize("bad_reply", ["I am not sure.", UNKNOWN])
async def test_operator_failure_falls_back_to_direct_rag_with_the_same_knowledge(bad_reply):
    text = FixedSource("text", "Wikipedia Passages", {"*": "Prague is the capital."})
    model = scripted_model([bad_reply, ans("Prague")])
    ex = Executor(model, {"text": text})
    answer = await ex.run(parse_tree('{"Where was Pudil born?": "Search(\\"Daniel Pudil\\", \\"footballer\\")"}'))
    assert answer.answers == ["Prague"]
    assert dict(ex.llm_calls) == {"search": 1, "direct_rag": 1}
    assert dict(ex.retriever_calls) == {"text": 1}
    p = prompts_of(model)
    assert "Prague is the capital." in p[1] and p[1].startswith('Please answer the question "Where was Pudil born?"')
    assert ex.parse_failures.get("search", 0) == (1 if bad_reply.startswith("I am") else 0)
    assert not ex.reused_replies


@pytest.mark.parametrize("bad_reply", ["I am not sure.", UNKNOWN])
async def test_relate_failure_reuses_its_reply_instead_of_resending_the_identical_fallback_prompt(bad_reply):
    """Direct RAG uses the Relate prompt (Figure 9) with the same question and
    knowledge: the fallback prompt is byte-identical, so it is not sent again."""
    text = FixedSource("text", "Wikipedia Passages", {"*": "Prague is the capital."})
    model = scripted_model([bad_reply])
    ex = Executor(model, {"text": text})
    answer = await ex.run(parse_tree('{"Where was Pudil born?": "Relate(\\"Daniel Pudil\\", \\"place of birth\\")"}'))
    assert answer.answers == []  # what the identical call would answer again at temperature 0
    assert dict(ex.llm_calls) == {"relate": 1} and len(model.script.calls) == 1
    assert dict(ex.reused_replies) == {"direct_rag": 1}
    rec = ex.records[0]
    assert rec["fallback"] == "direct_rag" and "reused" in rec["direct_rag"]["reused_reply"]
    assert rec["direct_rag"]["reply"] == bad_reply
    assert ex.parse_failures.get("relate", 0) == (1 if bad_reply.startswith("I am") else 0)
    assert "direct_rag" not in ex.parse_failures  # the one bad reply is counted once


async def test_unknown_parent_answer_triggers_selection_retrieval_and_direct_rag():
    tree = parse_tree(json.dumps({"Q root?": [
        {"1. A?": 'Relate("x", "r")'}, {"2. B [1]?": "[SIB]"}]}))
    text = FixedSource("text", "Wikipedia Passages", {"*": "text passage"})
    kg = FixedSource("kg", "Wikidata", {"*": "x | r | y"})
    replies = ["[Wikidata]", ans("y"),           # node 1: selection, relate
               ans("z"),                        # node 2: sibling reasoning
               UNKNOWN,                         # root: child reasoning -> Unknown
               "[Wikipedia, Wikidata]", ans("final")]  # root: direct RAG
    model = scripted_model(replies)
    ex = Executor(model, {"text": text, "kg": kg})
    answer = await ex.run(tree)
    assert answer.answers == ["final"]
    assert dict(ex.llm_calls) == {"source_selection": 2, "relate": 1, "sibling_reasoning": 1,
                                  "child_reasoning": 1, "direct_rag": 1}
    assert text.queries == ["Q root?"] and kg.queries == ["x r", "Q root?"]
    assert 'Q: 1. A? A: ["y"]' in prompts_of(model)[2]
    assert ex.records[-1]["fallback"] == "direct_rag"


async def test_unparseable_source_selection_is_counted_and_searches_all():
    text = FixedSource("text", "Wikipedia Passages", {"*": "t"})
    web = FixedSource("web", "Google Results", {"*": "w"})
    model = scripted_model(["I cannot decide", ans("a")])
    ex = Executor(model, {"text": text, "web": web})
    await ex.run(parse_tree('{"Q?": "Search(\\"x\\")"}'))
    assert ex.parse_failures["source_selection"] == 1
    assert dict(ex.retriever_calls) == {"text": 1, "web": 1}
    assert "Wikipedia Passages: [1] t\nGoogle Results: [1] w" in prompts_of(model)[1]


async def test_sibling_reasoning_uses_only_referenced_siblings():
    tree = parse_tree(json.dumps({"Who is older?": [
        {"1. When was A born?": 'Relate("A", "birth")'},
        {"2. When was B born?": 'Relate("B", "birth")'},
        {"3. Is [2] a leap year?": "[SIB]"}, {"4. Compare [1] and [2]": "[SIB]"}]}))
    text = FixedSource("text", "Wikipedia Passages", {"*": "x"})
    model = scripted_model([ans("1900"), ans("1904"), ans("Yes"), ans("A"), ans("A")])
    ex = Executor(model, {"text": text})
    await ex.run(tree)
    p = prompts_of(model)
    assert "Q: 2. When was B born?" in own_part(p[2]) and "Q: 1." not in own_part(p[2])
    assert "Q: 1. When was A born?" in p[3] and "Q: 2. When was B born?" in p[3] and "Q: 3." not in p[3]


# --------------------------------------------------------------------------
# the solver: planning, truncation retry, planner fallback (through Inspect)


def budget_model(replies, **config):
    """mockllm whose outputs are truncated (stop_reason max_tokens) when the reply
    starts with '!'; records the max_tokens of each call. ``config`` is the
    model's GenerateConfig (where Inspect puts ``--max-tokens``)."""
    seen = []
    it = iter(replies)

    def outputs(input, tools, tool_choice, config):
        seen.append((config.max_tokens, input[-1].text))
        text = next(it)
        return scripted_output(text.lstrip("!"), stop_reason="max_tokens" if text.startswith("!") else "stop")

    model = get_model("mockllm/model", custom_outputs=outputs, memoize=False,
                      config=GenerateConfig(**config))
    return model, seen


def run_task(model, shared_data, log_dir, **args):
    [log] = inspect_eval("conflict_eval/atomr", task_args={
        "dataset": "hotpotqa", "path": str(shared_data / "hotpotqa_ircot" / "sample.jsonl"), **args},
        model=model, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    return log


def test_planner_truncation_retry_then_fallback_to_direct_rag(shared_data, log_dir):
    model, seen = budget_model(['!{"Q?": [{"1. a?": ', '{"Q?": [{"1. a?": "Search(', ans("Animorphs")])
    log = run_task(model, shared_data, log_dir)
    assert [m for m, _ in seen] == [512, 768, 256]
    assert "Decomposition Tree:" in seen[0][1] and seen[2][1].startswith('Please answer the question "What science')
    sample = log.samples[0]
    store = sample.store
    assert store["AtomRStore:planner_fallback"] is True
    assert "cut off" in store["AtomRStore:plan_error"]
    assert store["AtomRStore:llm_calls"] == {"planning": 2, "direct_rag": 1}
    assert store["AtomRStore:retriever_calls"] == {"text": 1}
    assert sample.output.completion == "Animorphs"
    assert sample.scores["atomr_qa"].value == {"f1": 1.0, "em": 1.0, "cover_em": 1.0, "f1_authors": 1.0}


def test_operator_truncation_retry_uses_512(shared_data, log_dir):
    tree = json.dumps({"Q?": 'Search("Animorphs", "book series")'})
    model, seen = budget_model([tree, "!cut", ans("Animorphs")])
    log = run_task(model, shared_data, log_dir)
    assert [m for m, _ in seen] == [512, 256, 512]
    store = log.samples[0].store
    assert store["AtomRStore:llm_calls"] == {"planning": 1, "search": 2}
    [node] = store["AtomRStore:tree"]
    assert node["query"] == "Animorphs book series" and len(node["passages"]["text"]) == 3
    # the retry is marked on the node and counted
    assert node["truncation_retry"] == {"budget": 256, "retry_budget": 512, "still_truncated": False}
    assert store["AtomRStore:truncation_retries"] == {"search": 1}
    assert any("Animorphs" in p["text"] for p in node["passages"]["text"])
