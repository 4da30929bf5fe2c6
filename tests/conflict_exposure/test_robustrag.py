"""RobustRAG as its authors built it (inspire-group/RobustRAG src/defense.py
KeywordAgg, src/prompt_template.py): prompts, abstention, keywords with the
spaCy POS model and with the fallback, threshold, hint order, and scripted runs."""

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.robustrag import prompts as P
from conflict_eval.plugins.robustrag.keywords import (
    FallbackExtractor, abstains, keyword_aggregate, load_extractor, response_keywords)
from conflict_eval.plugins.robustrag.solver import clean, robustrag
from conflict_eval.testing import scripted_model

from .conftest import TARGET

FALLBACK = FallbackExtractor()


@pytest.fixture(scope="module")
def spacy_en():
    ex = load_extractor("spacy")  # installed by the `keywords` extra (CI: dev)
    assert ex.name.startswith("spacy en_core_web_sm")
    return ex


def test_prompts_are_the_authors_templates():
    # spot checks against src/prompt_template.py (the full text is in prompts.py)
    iso = P.QA_PROMPT_TMPL.format(context_str="CTX", query_str="Q?")
    assert iso.count("Context information is below.\n---------------------\n") == 5
    assert iso.endswith('---------------------\nCTX\n---------------------\nGiven the context information and not '
                        'prior knowledge, answer the query with only keywords. \nIf there is no relevant '
                        'information, just say "I don\'t know".\nQuery: Q?\nAnswer: ')
    assert "Query: What new video game titles are being released by Microsoft this year?\nAnswer: I don't know\n\n\n" in iso
    hint = P.QA_PROMPT_HINTS_TMPL.format(hints="a, b", query_str="Q?")
    assert hint.endswith("Word suggestion is below.\n---------------------\na, b\n---------------------\n"
                         "Given the word suggestion provided by experts, concisely answer the query.\n"
                         "Query: Q?\nAnswer: ")
    assert "Query:  How much did NASA invest" in hint  # the double space is theirs
    assert P.QA_PROMPT_HINTS_TMPL_GPT.format(hints="h", query_str="q") == (
        "Answer the query question using only words from the word list provided below.\n"
        "Query: q\nWord list: \n---------------------\nh\n---------------------\nAnswer: \n")
    assert P.GPT_SYSTEM == "You are a helpful assistant."


def test_abstention_is_containing_i_dont():
    assert abstains("I don't know") and abstains("Sorry, I don't have that.") and abstains("I don’t know")
    assert not abstains("i don't know") and not abstains("Unknown") and not abstains("")


def test_keywords_with_spacy(spacy_en):
    # "The Eiffel Tower is in Paris.": DET PROPN PROPN AUX ADP PROPN PUNCT
    assert response_keywords("The Eiffel Tower is in Paris.", spacy_en) == {
        "The Eiffel Tower is in Paris.", "Eiffel Tower", "Eiffel", "Tower", "Paris", ""}
    # lemmas: "was born" is AUX VERB; "novels" -> "novel"; the last run is not empty, so no ""
    assert response_keywords("He was born in 1879 and wrote novels", spacy_en) == {
        "He was born in 1879 and wrote novels", "1879", "novel"}


def test_keywords_with_the_fallback():
    assert response_keywords("The Eiffel Tower is in Paris.", FALLBACK) == {
        "The Eiffel Tower is in Paris.", "Eiffel Tower", "Eiffel", "Tower", "Paris", ""}
    # no tagger: the verbs stay, no lemmas ("novels", "born", "wrote")
    assert response_keywords("He was born in 1879 and wrote novels", FALLBACK) == {
        "He was born in 1879 and wrote novels", "born", "1879", "wrote novels", "wrote", "novels"}


@pytest.mark.parametrize("extractor", ["spacy", "fallback"])
def test_aggregation_golden_values(extractor, spacy_en):
    ex = spacy_en if extractor == "spacy" else FALLBACK
    responses = ["Goosebumps series", "Animorphs", "I don't know", "The Animorphs", "Animorphs", "I don't know."]
    agg = keyword_aggregate(responses, ex, alpha=0.3, beta=3.0)
    # m = 4 retained; threshold = min(3, 0.3 * 4) = 1.2. Keyword sets (a set per response):
    #   fallback: {Goosebumps series, Goosebumps, series}, {Animorphs}, {The Animorphs, Animorphs}, {Animorphs}
    #   spaCy tags "Animorphs" as a plural noun, lemma "animorph":
    #             {Goosebumps series, Goosebumps, series}, {Animorphs, animorph},
    #             {The Animorphs, animorph}, {Animorphs, animorph}
    assert agg.retained == 4 and agg.threshold == pytest.approx(1.2)
    if extractor == "spacy":
        assert (agg.counts["animorph"], agg.counts["Animorphs"], agg.counts["The Animorphs"]) == (3, 2, 1)
        assert agg.kept == ["Animorphs", "animorph"]  # longer first
    else:
        assert (agg.counts["Animorphs"], agg.counts["The Animorphs"]) == (3, 1)
        assert agg.kept == ["Animorphs"]
    # m = 3 -> threshold 0.9: everything seen once is kept; order by (length, text), both descending
    agg = keyword_aggregate(["Goosebumps series", "Animorphs", "I don't know", "The Animorphs"], ex)
    lemma = ["animorph"] if extractor == "spacy" else []
    assert agg.kept == ["Goosebumps series", "The Animorphs", "Goosebumps", "Animorphs", *lemma, "series"]
    # beta caps the threshold: m = 20 -> min(3, 6) = 3; "Yuma" (2) is dropped
    many = ["Xeno"] * 3 + ["Yuma"] * 2 + ["Zed Wu"] * 15
    agg = keyword_aggregate(many, ex)
    assert agg.threshold == 3.0 and agg.kept == ["Zed Wu", "Xeno", "Zed", "Wu"]


def test_stop_words_and_punctuation_are_dropped():
    agg = keyword_aggregate(["very", "very", ".", "."], FALLBACK, alpha=0.3, beta=3.0)
    # "very" is content to the fallback (and ADV to spaCy) but an NLTK stop word; "." is punctuation
    assert agg.retained == 4 and agg.counts["very"] == 2 and agg.kept == []


def test_all_abstain_means_no_aggregation():
    agg = keyword_aggregate(["I don't know", "I don't know."], FALLBACK)
    assert agg.abstain and agg.retained == 0 and agg.kept == []


def test_clean_is_the_authors_hf_cleaning():
    assert clean("  Paris\n\nExplanation: ...", "open") == "Paris"
    assert clean("  Paris\n\nExplanation", "gpt") == "Paris\n\nExplanation"


def _run(small_kb, log_dir, reply, **task_args):
    model = scripted_model(reply)
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "retriever": "bm25", "method": "robustrag",
                                    **task_args},
                         model=model, limit=1, log_dir=log_dir, display="none")
    assert log.status == "success", log.error
    return log, log.samples[0], model.script.calls


def isolated(prompt):
    return prompt.startswith("Context information is below.")


@pytest.mark.parametrize("aggregation", ["llm", "keyword"])
def test_robustrag_run(small_kb, log_dir, aggregation, spacy_en):
    def reply(prompt):
        if isolated(prompt):
            passage = prompt.rsplit("Context information is below.\n---------------------\n", 1)[1]
            return "Goosebumps\n\nThe passage says so." if TARGET in passage else "I don't know"
        if prompt.startswith("Word suggestion is below."):
            return "Goosebumps"
        return "Yes"

    log, sample, calls = _run(small_kb, log_dir, reply, aggregation=aggregation)
    prompts = [c[-1].text for c in calls]
    assert all(isolated(p) for p in prompts[:5])
    assert all(len(c) == 1 for c in calls)  # open family: no system message
    n_goose = sum(TARGET in p.rsplit("Context information is below.", 1)[1] for p in prompts[:5])
    assert n_goose >= 1
    final = prompts[-1]
    assert final.endswith('Is "Animorphs" the answer to the question? (Yes or No)')
    store = {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("RobustRAGStore:")}
    # the reply was cut at the blank line (the authors' HF cleaning)
    assert sorted(store["isolated_answers"].values()) == sorted(["Goosebumps"] * n_goose + ["I don't know"] * (5 - n_goose))
    if aggregation == "llm":
        assert len(prompts) == 6
        assert final.count("Answer from a retrieved document: Goosebumps") == n_goose
        assert log.eval.metadata["method_info"]["keyword_extractor"] is None
    else:
        # m = n_goose retained "Goosebumps" -> keyword "Goosebumps" (count m >= 0.3 m): the hint
        assert len(prompts) == 7
        assert prompts[5].endswith("---------------------\nGoosebumps\n---------------------\nGiven the word "
                                   f"suggestion provided by experts, concisely answer the query.\n"
                                   f"Query: {sample.metadata['question']}\nAnswer: ")
        assert "[1] Answer aggregated from the retrieved documents' keywords: Goosebumps\n" in final
        assert store["hints"] == "Goosebumps" and store["hint_call"] is True
        assert store["keyword_extractor"].startswith("spacy en_core_web_sm")
        assert log.eval.metadata["method_info"]["keyword_extractor"].startswith("spacy en_core_web_sm")


def test_robustrag_abstains_without_a_hint_call(small_kb, log_dir):
    log, sample, calls = _run(small_kb, log_dir, lambda p: "I don't know" if isolated(p) else "No",
                              aggregation="keyword", keyword_extractor="fallback")
    prompts = [c[-1].text for c in calls]
    assert len(prompts) == 6 and not any(p.startswith("Word suggestion") for p in prompts)
    assert "[1] Answer aggregated from the retrieved documents' keywords: I don't know.\n" in prompts[-1]
    store = {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("RobustRAGStore:")}
    assert store["robustrag_answer"] == "I don't know." and store["hint_call"] is False
    assert store["keyword_extractor"].startswith("fallback")
    assert log.eval.metadata["method_info"]["keyword_extractor"].startswith("fallback")


def test_gpt_family_sends_the_system_message(small_kb, log_dir):
    log, sample, calls = _run(small_kb, log_dir, lambda p: "Goosebumps" if p.startswith("Please answer") else
                              ("Goosebumps" if p.startswith("Answer the query question") else "Yes"),
                              aggregation="keyword", templates="gpt", keyword_extractor="fallback")
    assert [m.role for m in calls[0]] == ["system", "user"] and calls[0][0].text == P.GPT_SYSTEM
    assert calls[0][1].text.startswith("Please answer the query question based on the update-to-date context")
    assert calls[5][1].text.startswith("Answer the query question using only words from the word list")
    assert len(calls[-1]) == 1  # the Figure 3 yes/no call is Conflict Exposure's, no system message


def test_bad_options_fail_before_running():
    with pytest.raises(ValueError, match="unknown aggregation"):
        robustrag(aggregation="vote")
    with pytest.raises(ValueError, match="templates must be one of open, gpt"):
        robustrag(templates="llama")
    with pytest.raises(ValueError, match="keyword_extractor must be one of"):
        robustrag(keyword_extractor="nltk")
    with pytest.raises(ValueError, match="max_tokens"):
        robustrag(max_tokens=0)


@pytest.mark.slow
def test_offline_model_keyword_aggregation(small_kb, log_dir, spacy_en):
    """The real offline model, keyword aggregation with spaCy: every step runs and is recorded."""
    [log] = inspect_eval("conflict_eval/conflict_exposure",
                         task_args={"path": str(small_kb), "method": "robustrag", "aggregation": "keyword",
                                    "k": 2, "retriever": "bm25"},
                         model="conflict_eval/smollm2", limit=1, max_tokens=16, log_dir=log_dir,
                         display="none")
    assert log.status == "success", log.error
    assert log.eval.metadata["method_info"]["keyword_extractor"] == spacy_en.name
    sample = log.samples[0]
    store = {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("RobustRAGStore:")}
    assert len(store["isolated_answers"]) == 2 and store["keyword_extractor"] == spacy_en.name
    retained = 2 - len(store["abstained"])
    assert store["hint_call"] is (retained >= 1)
    assert store["robustrag_answer"] if retained else store["robustrag_answer"] == "I don't know."
    assert sample.scores["yes_no_accuracy"].value["parse_failure"] in (0, 1)
