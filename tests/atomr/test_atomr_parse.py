"""Tree, operator, answer and source-selection parsing: both tree formats,
every leaf form, real reply shapes, what is rejected and why, and the
totality / linear-time properties (hypothesis)."""

import json
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conflict_eval.plugins.atomr.parse import (
    MAX_TREE_CHARS, OperatorCall, Ref, TreeError, extract_json_object, parse_answer, parse_operator,
    parse_sources, parse_tree, split_label, try_parse_tree,
)
from conflict_eval.plugins.atomr.solver import parse_closed_book
from conflict_eval.plugins.atomr.tree_examples import BY_DATASET

ROOT = "How many studio albums has Shakira released between 2000 and 2010?"
NESTED = {ROOT: [
    {"1. What studio albums has Shakira released?": [
        {"4. Who is Shakira?": 'Search("Shakira", "musician")'},
        {"5. What studio albums has [4] released?": 'Relate([4], "studio albums")'}]},
    {"2. Among [1], which studio albums were released between 2000 and 2010?":
        'Filter([1], "released between 2000 and 2010")'},
    {"3. How many albums are in [2]?": "[SIB]"}]}

# the authors' flat format (as in their released trees and few-shot examples)
FLAT = {ROOT: ["1. What studio albums has Shakira released?",
               "2. Among [1], which studio albums were released between 2000 and 2010?",
               "3. How many albums are in [2]?"],
        "1. What studio albums has Shakira released?": ["4. Who is Shakira?", "5. What studio albums has [4] released?"],
        "4. Who is Shakira?": 'Search("Shakira", "musician")',
        "5. What studio albums has [4] released?": 'Relate([4], "studio albums")',
        "2. Among [1], which studio albums were released between 2000 and 2010?":
            'Filter([1], "released between 2000 and 2010")',
        "3. How many albums are in [2]?": "[END]"}


def shape(tree):
    return [(n.label, n.question[:20], n.operator.text() if n.operator else ("SIB" if n.sibling else None),
             n.problem is not None) for n in tree.post_order()]


def test_nested_and_flat_formats_give_the_same_tree():
    nested = parse_tree("Decomposition Tree:\n" + json.dumps(NESTED) + "\nDone.")
    flat = parse_tree(json.dumps(FLAT))
    assert nested.format == "nested" and flat.format == "flat"
    assert shape(nested) == shape(flat)
    assert [n.label for n in flat.post_order()] == ["4", "5", "1", "2", "3", "0"]
    assert flat.nodes[4].operator == OperatorCall("Search", ("Shakira", "musician"))
    assert flat.nodes[5].operator == OperatorCall("Relate", (Ref("4"), "studio albums"))
    assert flat.nodes[2].refs() == ["1"] and flat.nodes[3].sibling
    assert flat.nodes[4].parent == 1 and flat.nodes[1].parent == 0
    assert not flat.degraded() and not flat.warnings


def test_object_children_dr_mark_and_single_operator_root():
    tree = parse_tree(json.dumps({"Who is older, A or B?": {
        "1. When was A born?": 'Relate("A", "date of birth")',
        "2. When was B born?": "Relate('B', 'date of birth')",
        "3. Who is older, [1] or [2]?": "[DR]"}}))
    assert [n.index for n in tree.post_order()] == [1, 2, 3, 0]
    assert tree.nodes[3].sibling and tree.nodes[3].refs() == ["1", "2"]
    leaf = parse_tree('{"Who is Shakira?": "Search(\\"Shakira\\")"}')
    assert leaf.format == "single" and leaf.root.operator == OperatorCall("Search", ("Shakira",))


@pytest.mark.parametrize("leaf", ["[END]", "[SIB]", "[DR]", "[end]", " [END] ",
                                  "Given answers of [1] and [2], which is older?",
                                  "Given answers of [1] and [2], which number is higher? [END]"])
def test_every_sibling_leaf_form(leaf):
    tree = parse_tree(json.dumps({"Q?": ["1. a?", "2. b?", "3. Given answers of [1] and [2], c?"],
                                  "1. a?": 'Search("a")', "2. b?": 'Search("b")',
                                  "3. Given answers of [1] and [2], c?": leaf}))
    node = tree.nodes[3]
    assert node.sibling and node.problem is None and node.refs() == ["1", "2"]


def test_multi_level_numbering_and_references():
    # hotpotqa released tree 196 writes "2.1 What ..." without a final period
    tree = parse_tree(json.dumps({
        "Q?": ["1. Who sang X?", "2. Who wrote Y?", "3. Is [1] the same as [2]?"],
        "1. Who sang X?": 'Search("X")',
        "2. Who wrote Y?": ["2.1 What is the song Y?", "2.2. Who wrote [2.1]?"],
        "2.1 What is the song Y?": 'Search("Y", "song")', "2.2. Who wrote [2.1]?": 'Relate([2.1], "songwriter")',
        "3. Is [1] the same as [2]?": "[END]"}))
    assert [n.label for n in tree.post_order()] == ["1", "2.1", "2.2", "2", "3", "0"]
    w = next(n for n in tree.nodes.values() if n.label == "2.2")
    assert w.operator.args[0] == Ref("2.1") and w.problem is None
    assert split_label("3.1. Who?") == ("3.1", "Who?") and split_label("Who?") == ("", "Who?")


def test_nested_calls_become_children_executed_first():
    tree = parse_tree(json.dumps({"Q?": ["1. Who are the actors of [2]?", "2. What is Z?"],
                                  "1. Who are the actors of [2]?": 'Search("Z")',
                                  "2. What is Z?": 'Filter(Relate(Search("Y", "band"), "members"), "English")'}))
    node = tree.nodes[2]
    assert node.operator.name == "Filter" and isinstance(node.operator.args[0], Ref)
    order = [(n.synthetic, n.operator.name if n.operator else None) for n in tree.post_order()]
    # inner-first: Search, then Relate over it, then the Filter leaf itself
    assert order[1:4] == [(True, "Search"), (True, "Relate"), (False, "Filter")]
    relate = tree.post_order()[2]
    assert relate.question == "What is the members of [Y]?".replace("[Y]", relate.operator.args[0].label) or \
        relate.operator.args[1] == "members"
    assert not tree.degraded()


def test_child_lookup_tolerates_the_authors_mismatches():
    # child text differs from its key (case, number, or text) as in the authors' examples
    tree = parse_tree(json.dumps({
        "Q?": ["1. How bright is the star Sirius?", "2. When did Next Friday release?", "After whom was [1] named?"],
        "1. How bright is the star sirius?": 'Relate("Sirius", "brightness")',
        "5. When did Next Friday release?": 'Relate("Next Friday", "release date")',
        "After whom was [1] named?": 'Relate([1], "named after")'}))
    assert not tree.degraded() and tree.nodes[3].label == ""


def test_python_literal_unescaped_quotes_fences_preamble_and_truncation():
    # single quotes (as the authors' 2Wiki example 9)
    t1 = parse_tree("{'Q?': ['1. a?'], '1. a?': 'Search(\"x\")'}")
    assert t1.nodes[1].operator.args == ("x",)
    # unescaped inner quotes: what the authors' examples show the planner
    t2 = parse_tree('Here is the tree:\n```json\n{"Q?": ["1. What is \"Coke Kahani\"?", "2. Who wrote [1]?"], '
                    '"1. What is \"Coke Kahani\"?": "Search("Coke Kahani", "sitcom")", '
                    '"2. Who wrote [1]?": "Relate([1], "writers")"}\n```\nHope this helps!')
    assert t2.nodes[1].question == 'What is "Coke Kahani"?' and t2.nodes[1].operator.args == ("Coke Kahani", "sitcom")
    assert not t2.degraded()
    # truncated at the token limit: read as far as it goes; the cut node degrades
    t3 = parse_tree('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": "Relate([1], \\"r')
    assert t3.repaired and "cut off" in t3.repaired
    assert t3.nodes[1].problem is None and t3.nodes[2].problem
    t4 = parse_tree('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b')
    assert t4.nodes[1].problem is None and "not found" in t4.nodes[2].problem


@pytest.mark.parametrize("reply, degraded_reason", [
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": "just text"}', "neither an operator"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": "Lookup(\\"x\\")"}', "neither an operator"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": "Relate(\\"x\\")"}', "takes 2 arguments"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": "Relate([7], \\"r\\")"}', "[7]"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Relate([2], \\"r\\")", "2. b?": "Search(\\"y\\")"}', "[2]"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")"}', "not found"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": []}', "empty child list"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": 3}', "maps to int"),
    ('{"Q?": ["1. a?", "2. b?"], "1. a?": "Search(\\"x\\")", "2. b?": ""}', "empty leaf"),
])
def test_unreadable_nodes_degrade_without_rejecting_the_tree(reply, degraded_reason):
    tree = parse_tree(reply)
    bad = tree.degraded()
    assert len(bad) == 1 and degraded_reason in bad[0].problem
    assert tree.nodes[1].problem is None or "[2]" in degraded_reason


@pytest.mark.parametrize("reply, reason", [
    ("no tree here", "no JSON object"),
    ("TREE_PARSING_ERROR", "TREE_PARSING_ERROR"),
    ("Sorry, I cannot help with that.", "no JSON object"),
    ('{"Q?": [{"1. a?": }]}', "invalid JSON"),
    ("{}", "empty object"),
    ("[1, 2]", "no JSON object"),
    ('{"answer": "Paris"}', "none of the 1 leaves"),
    ('{"Q?": ["1. a?", "2. b?"]}', "none of the 2 leaves"),
    ('{"Q?": "Search("', "none of the 1 leaves"),
    ("{" * 5000, "deeper than 64"),
    ("x" * (MAX_TREE_CHARS + 1), "longer than"),
])
def test_what_is_not_a_tree_is_rejected_with_the_reason(reply, reason):
    tree, error = try_parse_tree(reply)
    assert tree is None and reason in error
    with pytest.raises(TreeError):
        parse_tree(reply)


@pytest.mark.parametrize("dataset", sorted(BY_DATASET))
def test_every_authors_example_tree_parses(dataset):
    for q, t in BY_DATASET[dataset]:
        tree, error = try_parse_tree(t)
        assert tree is not None, (q, error)
        assert len(tree.nodes) == 1 or tree.format == "flat"


def test_released_trees_parse_rate_and_rejections_are_exactly_the_non_trees(shared_data):
    folder = shared_data / "atomr_released_trees"
    files = sorted(folder.glob("*_trees.jsonl"))
    assert len(files) == 2
    for f in files:
        rows = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
        parsed, rejected = [], []
        for r in rows:
            tree, error = try_parse_tree(r["reasoning_tree"])
            (parsed if tree is not None else rejected).append(r)
            if tree is not None:  # the root is the question and every node has a question
                assert tree.root.question.strip() == r["question"].strip() or tree.root.question
                assert len(tree.degraded()) <= 3
        assert len(parsed) / len(rows) >= 0.98, f.name
        non_trees = [r for r in rows if not isinstance(r["reasoning_tree"], dict)]
        assert [r["index"] for r in rejected] == [r["index"] for r in non_trees], f.name


# --------------------------------------------------------------------------
# operator calls


@pytest.mark.parametrize("text, expected", [
    ('Relate([4], "studio albums")', ("Relate", (Ref("4"), "studio albums"))),
    ('Relate("Malia Obama", "Barack Obama")', ("Relate", ("Malia Obama", "Barack Obama"))),
    ('Filter(["Lionel Messi", "Bill Gates"], "born in 1955")', ("Filter", (["Lionel Messi", "Bill Gates"], "born in 1955"))),
    ("Search(“Michael Jordan”, “scientist”)", ("Search", ("Michael Jordan", "scientist"))),
    ("search('Shakira')", ("Search", ("Shakira",))),
    ('Search([2], "film director")', ("Search", (Ref("2"), "film director"))),
    ('Search("first African American student", [1])', ("Search", ("first African American student", Ref("1")))),
    ('Relate([1], "was head coach of [3] in city")', ("Relate", (Ref("1"), "was head coach of [3] in city"))),
    ("Relate([1], nationality)", ("Relate", (Ref("1"), "nationality"))),
    ('Relate(name="X", relation="r")', ("Relate", ("X", "r"))),
    ('Relate("India", "capital in " + [1])', ("Relate", ("India", "capital in [1]"))),
    ('Search("person", "said the term "intellectual property\' operates as a catch-all")',
     ("Search", ("person", "said the term \"intellectual property' operates as a catch-all"))),
    ('`Relate([3.1], "r")` [END]', ("Relate", (Ref("3.1"), "r"))),
    ('Filter([[1]], "x")', ("Filter", (Ref("1"), "x"))),
])
def test_operator_shapes(text, expected):
    op = parse_operator(text)
    assert (op.name, op.args) == expected


@pytest.mark.parametrize("text, reason", [
    ('Lookup("x")', "not of the form"),
    ('Relate("x")', "takes 2 arguments"),
    ('Relate([1], "a", "b")', "takes 2 arguments"),
    ('Search("x"', "not closed"),
    ('Search("x', "not closed"),
    ('Filter([[["x"]]], "y")', "lists inside lists"),
    ("Search(" * 10 + ")" * 10, "nested deeper"),
    ("Search(" + "x" * 5000 + ")", "longer than"),
])
def test_operator_failures_name_the_reason(text, reason):
    with pytest.raises(TreeError) as exc:
        parse_operator(text)
    assert reason in str(exc.value)


# --------------------------------------------------------------------------
# answers (Figures 8-11) and the other parsers

FINAL = 'So the answer is: (1) Paraphrase Answer: They are A and B; (2) Answer List: ["A", "B"]'


@pytest.mark.parametrize("reply, answers, paraphrase", [
    (FINAL, ["A", "B"], "They are A and B"),
    ("Reasoning first.\n" + FINAL + "\nLet me know if you need more.", ["A", "B"], "They are A and B"),
    ("**So the answer is:** (1) **Paraphrase Answer:** Bob won; (2) **Answer List:** [\"Bob\"]", ["Bob"], "Bob won"),
    ("so the answer is: (1) paraphrase answer: bob won; (2) answer list: ['bob']", ["bob"], "bob won"),
    ("So the answer is: (1) Paraphrase Answer: Bob; (2) Answer List: [“Bob Dylan”, ‘Joan Baez’]",
     ["Bob Dylan", "Joan Baez"], "Bob"),
    ("So the answer is: (1) Paraphrase Answer: x; (2) Answer List: [\"Washington, D.C.\"]", ["Washington, D.C."], "x"),
    ("So the answer is: (1) Paraphrase Answer: Prague; (2) Answer List: [Prague]", ["Prague"], "Prague"),
    ("So the answer is: (1) Paraphrase Answer: Prague; (2) Answer List: [Prague", ["Prague"], "Prague"),
    ('So the answer is: (1) Paraphrase Answer: A and B; (2) Answer List: ["A", "B', ["A"], "A and B"),
    ("So the answer is: (1) Paraphrase Answer: 1955; (2) Answer List: [1955]", ["1955"], "1955"),
    ("```\nSo the answer is: (1) Paraphrase Answer: Oslo; (2) Answer List: [\"Oslo\"]\n```", ["Oslo"], "Oslo"),
    ("Paraphrase Answer: Bob won\nmore text", ["Bob won"], "Bob won"),
    ("So the answer is: (1) Paraphrase Answer: Bob won; (2) Answer List: []", ["Bob won"], "Bob won"),
    ("Answer List: [{{1}: 2}]", ["{{1}: 2}"], ""),
    # a list printed one item a line (issue 42 rewrites): was ["A"] (the quote closed only before "," or "]")
    ('So the answer is: (1) Paraphrase Answer: A and B; (2) Answer List: [\n  "A",\n  "B"\n]', ["A", "B"], "A and B"),
    ('So the answer is: (1) Paraphrase Answer: It is Bob; (2) Answer List: [\r\n\t"Bob"\r\n]', ["Bob"], "It is Bob"),
])
def test_answer_shapes(reply, answers, paraphrase):
    a = parse_answer(reply)
    assert a.error is None and a.answers == answers and a.paraphrase == paraphrase


PRAGUE = 'So the answer is: (1) Paraphrase Answer: Daniel Pudil was born in Prague; (2) Answer List: ["Prague"]'
OSLO = 'So the answer is: (1) Paraphrase Answer: Bob lives in Oslo; (2) Answer List: ["Oslo"]'


@pytest.mark.parametrize("reply, answers", [
    # an echo of a Figure 8-11 example's answer line before the model's own: the own one
    (PRAGUE + "\n" + OSLO, ["Oslo"]),
    ("**so the answer is:** (1) paraphrase answer: daniel pudil was born in prague; (2) answer list: "
     "[`prague`]\n" + OSLO, ["Oslo"]),
    ('So the answer is: (1) Paraphrase Answer: Damn won the Pulitzer Prize; (2) Answer List: ["Damn"]\n' + OSLO,
     ["Oslo"]),
    # the instruction's format line echoed
    ("So the answer is: (1) Paraphrase Answer: {paraphrase_answer}; (2) Answer List: [answer_list]\n" + OSLO,
     ["Oslo"]),
    # the same answer twice (markdown, case, punctuation) is no ambiguity
    (OSLO + "\n**So the answer is: (1) Paraphrase Answer: Bob lives in Oslo; (2) Answer List: ['oslo.']**",
     ["oslo."]),
    ('Answer List: ["A", "B"]. ' + 'So the answer is: (1) Paraphrase Answer: both; (2) Answer List: ["b", "a"]',
     ["b", "a"]),
    # a document-quoted answer and the model's own: the own one
    ('Paragraph 2 gives the Answer List: ["Alice"]. ' + OSLO, ["Oslo"]),
    (OSLO + '\n> So the answer is: (1) Paraphrase Answer: x; (2) Answer List: ["Alice"]', ["Oslo"]),
    # the last line of all is the model's own even when it equals an example's
    (OSLO + "\n" + PRAGUE, None),
])
def test_answer_lines_echoes_and_restatements(reply, answers):
    a = parse_answer(reply)
    if answers is None:
        assert a.error and a.error.startswith("ambiguous"), a
    else:
        assert a.error is None and a.answers == answers, a


@pytest.mark.parametrize("reply", [
    'So the answer is: (1) Paraphrase Answer: x; (2) Answer List: ["x"] '
    'So the answer is: (1) Paraphrase Answer: y; (2) Answer List: ["y"]',
    OSLO + "\n__so the answer is: (1) paraphrase answer: bergen; (2) answer list: [bergen]__",
    # "no" inside the later line's own paraphrase is no revision between the lines
    OSLO + ' So the answer is: (1) Paraphrase Answer: No, Bergen; (2) Answer List: ["Bergen"]',
    'So the answer is: (1) Paraphrase Answer: Oslo; (2) Answer List: ["Oslo", "Bergen"] ' + OSLO,
])
def test_two_different_own_answers_are_ambiguous(reply):
    a = parse_answer(reply)
    assert a.error and a.error.startswith("ambiguous: two different answers"), a
    assert a.answers == [] and not a.unknown


BERGEN = 'So the answer is: (1) Paraphrase Answer: Bob lives in Bergen; (2) Answer List: ["Bergen"]'


@pytest.mark.parametrize("reply, answers", [
    # the reader contract (docs/metrics-and-parsing.md, rule 2): a revision between two different answer
    # lines makes the later one final (these were "ambiguous" parse failures)
    (OSLO + "\n\nActually, on second thought, the paragraph says he moved.\n\n" + BERGEN, ["Bergen"]),
    (OSLO + "\nWait, I misread Paragraph 2. " + BERGEN, ["Bergen"]),
    (OSLO + "\nI revise my answer. " + BERGEN, ["Bergen"]),
    (OSLO + "\n\nFinal: " + BERGEN, ["Bergen"]),
    ('Answer List: ["Oslo"]\nOn second thought: (1) Paraphrase Answer: Unknown; (2) Answer List: []', []),
    # the last revision wins; a restatement after it keeps it
    (OSLO + "\nActually: " + BERGEN + "\nNo, on reflection: " + OSLO, ["Oslo"]),
    (OSLO + "\nActually: " + BERGEN + "\nTo restate: " + BERGEN, ["Bergen"]),
])
def test_a_revision_before_a_later_answer_line_decides(reply, answers):
    a = parse_answer(reply)
    assert a.error is None and a.answers == answers, a


def test_a_revision_decides_only_between_the_lines_it_stands_between():
    # revised from Oslo to Bergen, then a third answer with no revision before it: ambiguous
    a = parse_answer(OSLO + "\nActually: " + BERGEN + "\n" + PRAGUE.replace("Prague", "Paris"))
    assert a.error and a.error.startswith("ambiguous: two different answers of its own, ['Bergen']"), a


def test_answer_unknown_and_failure():
    u = parse_answer("So the answer is: (1) Paraphrase Answer: Unknown; (2) Answer List: []")
    assert u.unknown and u.text == ""
    for bad in ("I do not know.", "", "So the answer is", "\ud800", None):
        a = parse_answer(bad)
        assert a.error and a.answers == [] and not a.unknown


def test_answer_regex_no_longer_backtracks():
    # 600 characters of whitespace after "Paraphrase Answer:" took 25 s with the old regex
    for reply in ("So the answer is: (1) Paraphrase Answer:" + " " * 100_000 + "x",
                  "So the answer is: (1) Paraphrase Answer:" + " \n" * 50_000,
                  "Paraphrase Answer: " * 5_000 + "(2) Answer List: [" * 5_000):
        t = time.thread_time()
        parse_answer(reply)
        assert time.thread_time() - t < 0.5


def test_parse_sources():
    assert parse_sources("[Wikidata]", ["text", "kg", "web"]) == ["kg"]
    assert parse_sources("Google and Wikipedia", ["text", "web"]) == ["text", "web"]
    assert parse_sources("A: Wikipedia, Google, Wikidata", ["text", "kg", "web"]) == ["text", "kg", "web"]
    assert parse_sources("Google", ["text", "kg"]) is None  # not enabled
    assert parse_sources("none of them", ["text", "kg"]) is None


def test_closed_book_shapes():
    assert parse_closed_book("He was born in 1791. So the answer is: Charles Babbage.", "cot") == "Charles Babbage"
    assert parse_closed_book("**So the answer is:** Oslo.\nExtra", "cot") == "Oslo"
    assert parse_closed_book("so the answer is: dr. who.", "cot") == "dr. who"
    assert parse_closed_book("\n\n  Andrei Tarkovsky  \nQuestion:", "standard") == "Andrei Tarkovsky"
    assert parse_closed_book("I think it is Bob", "cot") is None
    assert parse_closed_book("   \n ", "standard") is None


# --------------------------------------------------------------------------
# totality and linear time on arbitrary text (issue 11)

PIECES = ['{', '}', '[', ']', '"', "'", "“", "(", ")", ",", ":", "[1]", "[END]", "Search(", "Relate(",
          "Filter(", "1. ", "3.1. ", "\\", "\ud800", " ", "\n", "Paraphrase Answer:", "Answer List:",
          "So the answer is:", "(2)", "x", "é", "TREE_PARSING_ERROR"]
texts = st.one_of(st.text(max_size=300), st.lists(st.sampled_from(PIECES), max_size=200).map("".join))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_parsers_are_total(text):
    tree, error = try_parse_tree(text)
    assert (tree is None) != (error is None)
    try:
        parse_operator(text)
    except TreeError:
        pass
    a = parse_answer(text)
    assert isinstance(a.answers, list)
    parse_sources(text, ["text", "kg", "web"])
    parse_closed_book(text, "cot")
    parse_closed_book(text, "standard")
    try:
        extract_json_object(text)
    except TreeError:
        pass


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=8).map("".join), st.sampled_from([10_000, 100_000]))
def test_parsers_are_fast_on_long_adversarial_text(unit, size):
    # CPU time of this thread (time.thread_time: other threads of the process, e.g. a model's left by an earlier test, do not count), so a loaded machine does not fail it
    text = (unit * (size // len(unit) + 1))[:size]
    limit = 0.1 if size == 10_000 else 1.0
    for fn in (try_parse_tree, parse_answer, lambda s: parse_sources(s, ["text"]),
               lambda s: parse_closed_book(s, "cot")):
        t = time.thread_time()
        fn(text)
        assert time.thread_time() - t < limit, (fn, unit[:40], size)
    t = time.thread_time()
    try:
        parse_operator(text)
    except TreeError:
        pass
    assert time.thread_time() - t < limit


# Hand-written trees in the shapes of the authors' other released sets (MuSiQue,
# CRAG, BlendQA: not in this repository), as read from samples of those files.
OTHER_SHAPES = {
    "musique_unbalanced_inner_quote": {
        "What is a notable work from the person who said the term 'intellectual property' operates as a catch-all":
            ["1. Who said the term 'intellectual property' operates as a catch-all?", "2. What is a notable work from [1]?"],
        "1. Who said the term 'intellectual property' operates as a catch-all?":
            'Search("person", "said the term "intellectual property\' operates as a catch-all")',
        "2. What is a notable work from [1]?": 'Relate([1], "notable work")'},
    "musique_reference_as_descriptor": {
        "Who was the first African American student at the university Robert Khayat was educated at?":
            ["1. Where was Robert Khayat educated?", "2. Who was the first African American student at [1]?"],
        "1. Where was Robert Khayat educated?": ["3. Who is Robert Khayat?", "4. Where was [3] educated?"],
        "3. Who is Robert Khayat?": 'Search("Robert Khayat")', "4. Where was [3] educated?": 'Relate([3], "educated at")',
        "2. Who was the first African American student at [1]?": 'Search("first African American student", [1])'},
    "blendqa_cross_branch_end": {
        "With respect to conductive, lustrous, malleable elements, are pure forms of them made of atoms or ions?":
            ["1. What are conductive, lustrous, malleable elements?", "2. Are pure forms of [1] made of atoms or ions?"],
        "1. What are conductive, lustrous, malleable elements?":
            ["3. What elements are conductive?", "4. What elements are lustrous?", "5. What elements are malleable?",
             "6. What elements are all of [3], [4], and [5]?"],
        "3. What elements are conductive?": 'Search("Conductive elements")',
        "4. What elements are lustrous?": 'Search("Lustrous elements")',
        "5. What elements are malleable?": 'Search("Malleable elements")',
        "6. What elements are all of [3], [4], and [5]?": "[END]",
        "2. Are pure forms of [1] made of atoms or ions?":
            ["7. What is the composition of pure forms of metals?",
             "8. Given answers of [6] and [7], are pure forms of them made of atoms or ions?"],
        "7. What is the composition of pure forms of metals?": 'Search("Composition of pure metal forms")',
        "8. Given answers of [6] and [7], are pure forms of them made of atoms or ions?": "[END]"},
    "blendqa_single_child": {
        "When was the constitutional republic with nickname Confederacy formed?":
            ["1. What is the constitutional republic with the nickname Confederacy?", "2. When was [1] formed?"],
        "1. What is the constitutional republic with the nickname Confederacy?":
            ["3. Search for the entity described as the constitutional republic with nickname Confederacy."],
        "3. Search for the entity described as the constitutional republic with nickname Confederacy.":
            'Search("constitutional republic with nickname Confederacy")',
        "2. When was [1] formed?": 'Relate([1], "formation date")'},
    "crag_filter_siblings": {
        "is dreamworks animation owned by time warner or universal pictures?":
            ["1. Who owns DreamWorks Animation?", "2. Is DreamWorks Animation owned by Time Warner?",
             "3. Is DreamWorks Animation owned by Universal Pictures?"],
        "1. Who owns DreamWorks Animation?": 'Relate("DreamWorks Animation", "owner")',
        "2. Is DreamWorks Animation owned by Time Warner?": 'Filter([1], "owned by Time Warner")',
        "3. Is DreamWorks Animation owned by Universal Pictures?": 'Filter([1], "owned by Universal Pictures")'},
    "crag_single_node": {"who was the 2019 nfl mvp?": 'Search("2019 NFL MVP")'},
}


@pytest.mark.parametrize("name", sorted(OTHER_SHAPES))
def test_shapes_of_the_other_released_sets(name):
    tree = parse_tree(OTHER_SHAPES[name])
    assert not tree.degraded(), [(n.label, n.problem) for n in tree.degraded()]
    assert len(tree.nodes) == len(OTHER_SHAPES[name])
    if name == "blendqa_cross_branch_end":
        eight = next(n for n in tree.nodes.values() if n.label == "8")
        assert [tree.resolve(r, eight).label for r in eight.refs()] == ["6", "7"]


# --------------------------------------------------------------------------
# released trees with a leaf written in a child list (real records, tests/fixtures/atomr_released)

RELEASED_SLIPS = Path(__file__).resolve().parents[1] / "fixtures" / "atomr_released" / "leaf_in_child_list.jsonl"


def released(index):
    for line in RELEASED_SLIPS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["index"] == index:
            return record["reasoning_tree"]
    raise KeyError(index)


def test_crag_173_four_relate_calls_as_a_child_list_become_children():
    tree = parse_tree(released(173))
    assert not tree.degraded()
    node2 = next(n for n in tree.nodes.values() if n.label == "2")
    assert [c.operator.text() for c in node2.children] == [
        'Relate("Chad Kroeger", "birth date")', 'Relate("Ryan Peake", "birth date")',
        'Relate("Mike Kroeger", "birth date")', 'Relate("Daniel Adair", "birth date")']
    assert all(c.synthetic for c in node2.children)
    assert node2.children[1].question == "What is the birth date of Ryan Peake?"
    assert sum("written directly in its child list" in w for w in tree.warnings) == 4


@pytest.mark.parametrize("index, label, leaf", [
    (146, "2", "Given the series from [1], determine which team has the most games played in that series. [END]"),
    (218, "3", 'Relate("[2]", "person who went during gold rush")'),
    (330, "1", 'Search("AL East Champion", "2017")'),
    (330, "2", 'Search("MLB MVP award", "series of games")'),
])
def test_musique_one_item_child_list_is_the_nodes_own_leaf(index, label, leaf):
    tree = parse_tree(released(index))
    assert not tree.degraded()
    node = next(n for n in tree.nodes.values() if n.label == label)
    assert node.children == [] and node.leaf_text == leaf
    assert (node.operator is not None) != node.sibling
    assert any(f"node {label}: its leaf was written as a one-item child list" in w for w in tree.warnings)


def assert_musique_384(tree):
    """The intended tree: questions 3 and 5 are real numbered children whose [END] leaf was written
    after the question in the child list (no key of their own)."""
    assert not tree.degraded()
    by_label = {n.label: n for n in tree.nodes.values()}
    assert sorted(by_label) == ["0", "1", "2", "3", "4", "5"]
    assert [c.label for c in by_label["0"].children] == ["1", "2", "3"]
    assert [c.label for c in by_label["1"].children] == ["4", "5"]
    for label, question, ref in [("3", "Which two of the features from [2] were specifically played up?", "2"),
                                 ("5", "Who had the biggest from [4]?", "4")]:
        node = by_label[label]
        assert node.question == question and node.leaf_text == "[END]"
        assert node.sibling and node.operator is None and not node.synthetic and node.children == []
        assert tree.resolve(ref, node).label == ref
    assert by_label["4"].operator.text() == 'Search("people", "net worth in 2017")'
    assert by_label["2"].operator.text() == 'Relate([1], "features played up")'
    assert sum("was read as question" in w and "[END] leaf" in w for w in tree.warnings) == 2


def test_musique_384_a_numbered_question_with_its_end_mark_in_the_child_list():
    assert_musique_384(parse_tree(released(384)))


async def test_crag_173_runs_the_recovered_children_before_their_parent():
    from conflict_eval.plugins.atomr.executor import Executor
    from conflict_eval.retrieval import Hit
    from conflict_eval.testing import scripted_model

    class Fixed:
        name, label = "text", "Wikipedia Passages"

        def search(self, query, k=3):
            return [Hit(id="0", text=f"passage for {query}", title=None, score=1.0, rank=1)]

    def ans(*items):
        return f"So the answer is: (1) Paraphrase Answer: {', '.join(items)}; (2) Answer List: {json.dumps(list(items))}"

    replies = [ans("Chad Kroeger", "Ryan Peake", "Mike Kroeger", "Daniel Adair"),
               ans("1974"), ans("1975"), ans("1973"), ans("1977"),  # the four recovered Relate children
               ans("1974", "1975", "1973", "1977"),                 # node 2: child reasoning over them
               ans("Mike Kroeger"),                                 # node 3: [END] over [2]
               ans("Mike Kroeger")]                                 # root
    model = scripted_model(replies)
    ex = Executor(model, {"text": Fixed()})
    answer = await ex.run(parse_tree(released(173)))
    assert answer.answers == ["Mike Kroeger"]
    assert dict(ex.llm_calls) == {"relate": 5, "child_reasoning": 2, "sibling_reasoning": 1}
    node2_prompt = model.script.calls[5][-1].text
    assert 'Q: What is the birth date of Ryan Peake? A: ["1975"]' in node2_prompt


@pytest.mark.parametrize("call", ['Relate("Nickelback" "members")', 'Search("a" "b")', 'Relate("Nickelback" [1])'])
def test_a_missing_comma_is_named_as_such(call):
    with pytest.raises(TreeError, match=r"missing ',' after the argument"):
        parse_operator(call)
