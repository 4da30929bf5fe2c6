"""External distractor pools (-T distractors=FILE), Table 1 presets, and the
paper's n = 500 contexts end to end with a scripted model."""

import json
import re

import numpy as np
import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.user_needs.generator import generate_uraq, pool_path
from conflict_eval.plugins.user_needs.grid import (
    N_CONTEXT_PRESETS, UserNeedItem, build_grid, default_pool, load_distractors, parse_counts)
from conflict_eval.records import DatasetError
from conflict_eval.testing import scripted_model


def test_table_1_presets():
    # Table 1, "Num. of Context Sequence", copied by hand
    assert parse_counts("uraq") == [1, 10, 25, 50, 100, 250, 500, 1000]
    assert parse_counts("synthetic") == parse_counts("uraq")
    assert parse_counts("DisentQA") == [1, 2, 4, 8, 16, 32, 64]
    assert parse_counts("hotpotqa") == [1, 2, 4, 8, 16, 32]
    assert parse_counts("1, 3") == [1, 3] and parse_counts([2]) == [2]
    assert set(N_CONTEXT_PRESETS) == {"uraq", "synthetic", "disentqa", "hotpotqa"}
    with pytest.raises(ValueError, match="presets uraq, synthetic, disentqa, hotpotqa"):
        parse_counts("squad")
    with pytest.raises(ValueError, match=">= 1"):
        parse_counts("0,4")


def test_pool_file_forms_and_ownership(tmp_path):
    f = tmp_path / "pool.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in [
        {"text": "Owls can rotate their heads.", "question_id": "q0"},
        {"text": " Bees make honey. ", "question_id": None, "keys": ["Bee"]},
        {"id": "q1", "original_knowledge": "Cats purr.", "manipulated_knowledge": "Cats bark."},
    ]) + "\n")
    entries = load_distractors(f)
    assert [(e.owner, e.text, sorted(e.keys)) for e in entries] == [
        ("q0", "Owls can rotate their heads.", []), ("", "Bees make honey.", ["Bee"]),
        ("q1", "Cats purr.", []), ("q1", "Cats bark.", [])]
    items = [UserNeedItem(id=f"q{i}", question=f"Q{i}?", answers=("a",), manipulated_answers=("b",),
                          match_context=f"m{i}", conflict_context=f"c{i}",
                          keys=frozenset({"Bee"}) if i == 2 else frozenset()) for i in range(3)]
    records = build_grid("t", items, n_contexts=[6], max_context_tokens=None,
                         pool=default_pool(items) + entries, settings=["irrelevant"], user_needs=["context_first"])
    shown = {r.extra["question_id"]: {p.text for p in r.evidence} for r in records}
    # q1 owns the two cat statements: its 6 candidates are exactly these
    assert shown["q1"] == {"m0", "c0", "m2", "c2", "Owls can rotate their heads.", "Bees make honey."}
    # q0 owns the owl statement; q2 shares the topic key "Bee" with the bee passage
    assert "Owls can rotate their heads." not in shown["q0"] and len(shown["q0"]) == 6
    assert "Bees make honey." not in shown["q2"] and len(shown["q2"]) == 6


def test_bad_pool_rows_name_file_line_and_field(tmp_path):
    f = tmp_path / "pool.jsonl"
    f.write_text('{"text": ""}\n{"passage": "x"}\nnot json\n{"text": "ok", "keys": "Bee"}\n'
                 '{"id": "u1", "original_knowledge": "A.", "manipulated_knowledge": 3}\n')
    with pytest.raises(DatasetError) as err:
        load_distractors(f)
    msg = str(err.value)
    assert str(f) in msg and "5 bad record(s)" in msg
    for want in ["line 1 field 'text'", "line 2 field 'text': missing", "line 3 field '-': invalid JSON",
                 "line 4 field 'keys'", "record 'u1' (line 5) field 'manipulated_knowledge'"]:
        assert want in msg
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(DatasetError, match=f"{empty}.*empty"):
        load_distractors(empty)


def test_too_few_distractors_points_to_the_option(tmp_path):
    from conflict_eval.plugins.user_needs.dataset import user_needs_uraq
    path = tmp_path / "u.jsonl"
    path.write_text("".join(json.dumps({"id": f"u{i}", "question": "Q?", "original_answer": "x",
                                        "manipulated_answer": "y", "original_knowledge": f"o{i}",
                                        "manipulated_knowledge": f"m{i}"}) + "\n" for i in range(3)))
    with pytest.raises(ValueError, match=r"only 4 unrelated passages.*-T distractors=FILE"):
        user_needs_uraq(path=str(path), n_contexts="uraq")


# --------------------------------------------------------------------------
# the paper's n = 500 with a generated pool of >= 1000 statements

N_STATEMENTS = 1000


def statement(i):
    return f"Fact number {i} says item {i} weighs {i + 3} kilograms."


def author(prompt):
    """A URAQ author: 25 statements a call; manipulates every statement; writes a
    valid 4-hop question only for every 250th statement (the rest are unused)."""
    m = re.match(r"Write (\d+) short", prompt)
    if m:
        author.next = getattr(author, "next", 0)
        start, author.next = author.next, author.next + int(m.group(1))
        return "\n".join(f"{k + 1}. {statement(i)}" for k, i in enumerate(range(start, author.next)))
    if prompt.startswith("Here is a knowledge statement:"):
        i = int(re.search(r"Fact number (\d+)", prompt).group(1))
        return f"<manipulated>Fact number {i} says item {i} weighs {i + 500} kilograms.</manipulated>"
    if prompt.startswith("Original statement:"):
        i = int(re.search(r"Fact number (\d+)", prompt).group(1))
        if i % 250:
            return "I cannot write that."
        return json.dumps([{"hops": 4, "question": f"How much does item {i} weigh in kilograms?",
                            "original_answer": str(i + 3), "manipulated_answer": str(i + 500),
                            "answer_type": "number"}])
    raise AssertionError(prompt)


def one_hot(texts):
    return np.eye(len(texts))  # no two statements are near-duplicates


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("uraq") / "uraq.jsonl"
    author.next = 0
    rows, report = generate_uraq(scripted_model(author), out, n_statements=N_STATEMENTS, embed=one_hot)
    return out, rows, report


def test_generator_pool_holds_every_statement(generated):
    out, rows, report = generated
    assert [r["id"] for r in rows] == ["uraq-00000", "uraq-00250", "uraq-00500", "uraq-00750"]
    pool = [json.loads(line) for line in pool_path(out).read_text().splitlines()]
    # 1000 originals + 1000 manipulated variants, 8 of them used by the 4 questions
    assert len(pool) == 2 * N_STATEMENTS == report.counts["pool"]
    assert sum(p["used"] for p in pool) == 8
    assert {p["question_id"] for p in pool if p["used"]} == {r["id"] for r in rows}
    assert pool[250] == {"text": statement(250), "kind": "original", "question_id": "uraq-00250", "used": True}
    assert pool[251] == {"text": statement(251), "kind": "original", "question_id": None, "used": False}


def reader(rows):
    """Answers from the question's own context wherever it is among the contexts."""
    def reply(prompt):
        [row] = [r for r in rows if f"<question>{r['question']}</question>" in prompt]
        if f"<info>{row['original_knowledge']}</info>" in prompt:
            return f"<output>{row['original_answer']}</output>"
        if f"<info>{row['manipulated_knowledge']}</info>" in prompt:
            return f"<output>{row['manipulated_answer']}</output>"
        return "<output>I don't know</output>"
    return reply


def test_500_contexts_end_to_end(generated, log_dir):
    out, rows, _ = generated
    model = scripted_model(reader(rows))
    [log] = inspect_eval("conflict_eval/user_needs",
                         task_args={"dataset": "user_needs_uraq", "path": str(out),
                                    "distractors": str(pool_path(out)), "n_contexts": "500"},
                         model=model, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    assert log.results.total_samples == 4 * 9 == len(model.script.calls)
    own = {r["id"]: {r["original_knowledge"], r["manipulated_knowledge"]} for r in rows}
    for s in log.samples:
        prompt = s.messages[1].text
        infos = re.findall(r"<info>(.+?)</info>", prompt)  # the header names the empty tag
        assert len(infos) == 500 == len(set(infos))
        extra = s.metadata["extra"]
        mine = [t for t in infos if t in own[extra["question_id"]]]
        if s.metadata["setting"] == "irrelevant":
            assert mine == []
        else:
            assert len(mine) == 1 and infos.index(mine[0]) == extra["relevant_position"]
    # a perfect Context-Exclusive reader: CE 3/3, CF 2/3, MF 1/3 -> 6/9
    metrics = {name: m.value for sc in log.results.scores for name, m in sc.metrics.items()}
    assert metrics["accuracy"] == pytest.approx(6 / 9)
    assert metrics["case/context_exclusive"] == 1


def test_1000_contexts_on_real_kre_rows_with_an_external_pool(shared_data, tmp_path):
    """Real data: KRE ECQA questions (400 rows -> 798 own passages) with e-CARE's
    contexts as the external pool reach Table 1's largest count."""
    from conflict_eval.plugins.user_needs.dataset import user_needs_kre_ecqa
    ecare = [json.loads(line) for line in (shared_data / "kre_ecare" / "sample.jsonl").open()]
    pool = tmp_path / "ecare_pool.jsonl"
    pool.write_text("".join(json.dumps({"text": r[k]}) + "\n"
                            for r in ecare for k in (" golden_context", "negative_context")))
    path = str(shared_data / "kre_ecqa" / "sample.jsonl")
    with pytest.raises(ValueError, match="unrelated passages in the pool"):
        user_needs_kre_ecqa(path=path, n_contexts="1000", limit=1, max_context_tokens=None)
    ds = user_needs_kre_ecqa(path=path, n_contexts="1000", limit=1, max_context_tokens=None,
                             distractors=str(pool), setting="conflict", user_need="context_first")
    [s] = list(ds)
    assert len(s.metadata["evidence"]) == 1000
    labels = [p["label"] for p in s.metadata["evidence"]]
    assert labels.count("conflicting") == 1 and labels.count("irrelevant") == 999


def test_a_text_owned_by_the_question_anywhere_is_never_its_distractor():
    item = UserNeedItem(id="q0", question="Q?", answers=("a",), manipulated_answers=("b",),
                        match_context="m0", conflict_context="c0")
    other = UserNeedItem(id="q1", question="R?", answers=("a",), manipulated_answers=("b",),
                         match_context="m1", conflict_context="c1")
    from conflict_eval.plugins.user_needs.grid import PoolEntry, candidates
    # "paraphrase" is owned by q0 in one entry and by nobody in another (e.g. an external file)
    pool = default_pool([item, other]) + [PoolEntry("q0", "paraphrase"), PoolEntry("", "paraphrase"),
                                          PoolEntry("", "free")]
    assert candidates(item, pool) == ["c1", "free", "m1"]
    assert candidates(other, pool) == ["c0", "free", "m0", "paraphrase"]
