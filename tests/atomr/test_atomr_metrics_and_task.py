"""F1 / EM / cover-EM with AtomR's normalisation (hand-computed), the CLI scorer,
the per-category breakdown, the baselines, and the task end to end."""

import json

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.cli import main as cli_main
from conflict_eval.answers.text_metrics import cover_em, exact_match, token_f1
from conflict_eval.testing import scripted_model


def test_atomr_normalisation_by_hand():
    # atomr: "jean paul sartre simone de beauvoir" (6) vs "jean paul sartre" (3): common 3,
    # P = 3/6, R = 3/3, F1 = 2 * 0.5 * 1 / 1.5 = 2/3
    assert token_f1("Jean-Paul Sartre, Simone de Beauvoir", ["Jean-Paul Sartre"], "atomr") == pytest.approx(2 / 3)
    # squad glues the hyphen: "jeanpaul sartre simone de beauvoir" (5) vs "jeanpaul sartre" (2):
    # P = 2/5, R = 1, F1 = 2 * 0.4 / 1.4 = 4/7
    assert token_f1("Jean-Paul Sartre, Simone de Beauvoir", ["Jean-Paul Sartre"], "squad") == pytest.approx(4 / 7)
    # max over gold answers: "praha" 0, "prague" 1
    assert token_f1("Prague", ["Praha", "Prague"], "atomr") == 1.0
    assert exact_match("The Beatles!", ["beatles"], "atomr") == 1.0
    assert exact_match("Beatles, Wings", ["beatles"], "atomr") == 0.0
    # "studio 3 at nbc studios" ("a" is an article once "3-A" splits) covers "studio 3"
    assert cover_em("Studio 3-A at NBC Studios", ["Studio 3-A"], "atomr") == 1.0
    assert cover_em("Studio 3-A", ["NBC Studios"], "atomr") == 0.0


def test_cli_score_token_f1_with_atomr_normaliser(tmp_path, capsys):
    f = tmp_path / "preds.jsonl"
    rows = [{"predicted": "Jean-Paul Sartre, Simone de Beauvoir", "gold": ["Jean-Paul Sartre"]},  # 2/3
            {"predicted": "Prague", "gold": ["Praha", "Prague"]},                                # 1
            {"predicted": "", "gold": "x"}]                                                       # 0
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert cli_main(["score", "--metric", "token_f1", "-T", "normalizer=atomr", "--json", str(f)]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["n"] == 3
    assert out["value"] == pytest.approx((2 / 3 + 1 + 0) / 3)  # 5/9


@pytest.mark.parametrize("normalizer, value", [("atomr", 1.0), ("atomr_authors", 0.5)])
def test_cli_score_with_the_authors_normaliser_keeps_typographic_quotes(tmp_path, capsys, normalizer, value):
    """The README's fidelity line: `-T normalizer=atomr_authors` is AtomR's normaliser as
    published (typographic quotes kept); `atomr` folds them first. By hand: row 1 has
    “…’s” against ASCII 's: 1 token set folded, no shared token unfolded; row 2 is exact."""
    f = tmp_path / "preds.jsonl"
    rows = [{"predicted": "“Wulfsige’s farm”", "gold": ["Wulfsige's farm"]}, {"predicted": "Prague", "gold": "Prague"}]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    assert cli_main(["score", "--metric", "token_f1", "-T", f"normalizer={normalizer}", "--json", str(f)]) == 0
    assert json.loads(capsys.readouterr().out.strip().splitlines()[-1])["value"] == pytest.approx(value)


def run(model, task_args, log_dir, limit):
    [log] = inspect_eval("conflict_eval/atomr", task_args=task_args, model=model, limit=limit,
                         log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    return log


def test_standard_baseline_and_category_breakdown(shared_data, log_dir):
    # first four 2Wiki records: inference (gold Crown Prince Hyomyeong), compositional x2, comparison
    model = scripted_model(lambda p: "Crown Prince Hyomyeong\nQuestion: ...")
    log = run(model, {"dataset": "2wiki", "method": "atomr_standard",
                      "path": str(shared_data / "2wikimultihopqa_atomr" / "sample.jsonl")}, log_dir, 4)
    assert len(model.script.calls) == 4
    assert model.script.calls[0][-1].text.endswith("Question: Who is the father-in-law of Queen Hyojeong?\nAnswer:")
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert m["f1"] == 0.25 and m["f1/inference"] == 1.0
    assert m["f1/compositional"] == 0.0 and m["n/compositional"] == 2.0 and m["f1/comparison"] == 0.0


def test_cot_baseline_counts_parse_failures(shared_data, log_dir):
    model = scripted_model(lambda p: "Queen Hyojeong married ... So the answer is: Crown Prince Hyomyeong."
                           if p.endswith("Queen Hyojeong?\nAnswer:") else "no final answer here")
    log = run(model, {"dataset": "2wiki", "method": "atomr_cot",
                      "path": str(shared_data / "2wikimultihopqa_atomr" / "sample.jsonl")}, log_dir, 2)
    s0, s1 = sorted(log.samples, key=lambda s: s.id != "8974f9a00bb011ebab90acde48001122")
    assert s0.output.completion == "Crown Prince Hyomyeong" and s0.scores["atomr_qa"].value["f1"] == 1.0
    assert s1.output.completion == "" and s1.store["AtomRBaselineStore:parse_error"]
    assert s1.scores["atomr_qa"].metadata["parse_error"]


def test_standard_rag_retrieves_once_from_every_source(shared_data, log_dir):
    model = scripted_model(lambda p: 'So the answer is: (1) Paraphrase Answer: x; (2) Answer List: ["x"]')
    log = run(model, {"dataset": "blendqa", "method": "atomr_standard_rag",
                      "path": str(shared_data / "blendqa" / "sample.jsonl")}, log_dir, 1)
    store = log.samples[0].store
    assert store["AtomRBaselineStore:retriever_calls"] == {"text": 1, "kg": 1}
    prompt = model.script.calls[0][-1].text.split("Your Question.")[-1]
    assert "Wikipedia Passages: [1]" in prompt and "Question: What caused the residents" in prompt


def test_atomr_blendqa_multi_source_with_selection(shared_data, log_dir):
    path = str(shared_data / "blendqa" / "sample.jsonl")
    tree = json.dumps({"Q?": [
        {"1. Who is the stepparent of Ella Emhoff?": 'Relate("Kamala Harris", "stepparent")'},
        {"2. Is [1] considering a visit?": "[SIB]"}]})

    def reply(prompt):
        if "Decomposition Tree:" in prompt:
            return tree
        if prompt.rstrip().endswith("Sources:"):
            return "[Wikidata]"
        return 'So the answer is: (1) Paraphrase Answer: Yes; (2) Answer List: ["Yes"]'

    model = scripted_model(reply)
    log = run(model, {"dataset": "blendqa", "path": path, "category": "KG-Web"}, log_dir, 1)
    store = log.samples[0].store
    assert store["AtomRStore:retriever_calls"] == {"text": 0, "kg": 1}
    assert store["AtomRStore:llm_calls"] == {"planning": 1, "source_selection": 1, "relate": 1,
                                              "sibling_reasoning": 1, "child_reasoning": 1}
    node = store["AtomRStore:tree"][0]
    assert node["sources"] == ["kg"] and node["query"] == "Kamala Harris stepparent"
    assert node["passages"]["kg"][0]["text"] == "Q98382515 | stepparent | Kamala Harris"
    assert log.samples[0].output.completion == "Yes"


def test_task_rejects_bad_options(shared_data):
    from conflict_eval.tasks.atomr.task import atomr

    path = str(shared_data / "hotpotqa_ircot" / "sample.jsonl")
    with pytest.raises(ValueError, match="dataset='nq'"):
        atomr(dataset="nq")
    with pytest.raises(ValueError, match="unknown source"):
        atomr(path=path, sources="text,wiki")
    with pytest.raises(ValueError, match="threshold"):
        atomr(path=path, threshold=2.0)


@pytest.mark.slow
def test_atomr_end_to_end_with_the_offline_model(shared_data, log_dir):
    # CRAG in its official format, searched through its own pre-fetched pages (the web
    # source): its planner examples are half the length of HotpotQA's (about 3,000 prompt
    # tokens against 5,000), and prefill on one core is most of this test's time. k=1: one
    # passage per retrieval (the paper's top 3 would add ~640 prompt tokens to every
    # retrieval step; what this run proves, every step on the real model, needs one)
    crag = str(shared_data / "crag_example" / "sample.jsonl")
    [log] = inspect_eval("conflict_eval/atomr", task_args={
        "dataset": "crag", "path": crag, "web_pages": crag, "k": 1,
        "tree_tokens": 32, "operator_tokens": 16},
        model="conflict_eval/smollm2", limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    store = log.samples[0].store
    calls = store["AtomRStore:llm_calls"]
    assert calls["planning"] in (1, 2)
    # SmolLM2-135M rarely writes a valid tree: either the tree ran or the root fell back
    if store["AtomRStore:planner_fallback"]:
        assert store["AtomRStore:plan_error"] and calls.get("direct_rag") in (1, 2)  # 2: truncated, retried
        assert [len(p) for p in store["AtomRStore:tree"][0]["passages"].values()] == [1]  # k=1, web only
    assert sum(calls.values()) == len([e for e in log.samples[0].events if e.event == "model"])
    assert "atomr_qa" in log.samples[0].scores
