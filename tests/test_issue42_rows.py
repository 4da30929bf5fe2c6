"""Issue 42's table, row by row: each reply sent by a scripted model through
the task named in its row is recorded as meant; where the row says "no single
option", a counted failure. The Conflict Exposure rows (detection, triplets)
are in ``tests/conflict_exposure/test_issue42_rows.py`` (they need its KB
fixture), MADAM-RAG's empty agent reply in ``tests/madam_rag/test_madam_rag_task.py``.

To stay cheap, every task runs once for the whole module: the ``runs``
fixture makes one ``inspect eval`` of all the tasks below, each with its
scripted model, every reply of a row a sample of its own (answered by its
question); the tests read those logs, one small test per sample where a row
has several. Golden values are worked out by hand from the metrics'
definitions (comments beside each assertion).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai import task_with
from inspect_ai.model import get_model

from conflict_eval.testing import CHEAP_EVAL, scripted_model, scripted_output

from .test_choice_rows import control_rag_task

FIXTURES = Path(__file__).resolve().parent / "fixtures"
KRE = str(FIXTURES / "kre" / "comparative_shapes_handwritten.json")  # golds B, E, E, E, D (5 options)

pytestmark = pytest.mark.xdist_group("issue42_rows")
"""Under ``pytest -n N --dist loadgroup`` one worker runs the whole module, so its one eval runs once; under
``--dist load`` every worker given one of its tests runs that eval."""


def _overall(log) -> dict[str, float]:
    return {sc.name: next(iter(sc.metrics.values())).value for sc in log.results.scores}


def _by_question(replies: dict[str, str]):
    def reply(prompt):
        [text] = [r for q, r in replies.items() if f"Question: {q}" in prompt]
        return text

    return reply


# ---------------------------------------------------------------- the rows: replies and what they mean

# ConflictQA, options counter first: A "Biochemistry studies gluons." (counter), B "... does not study ..."
# (memory), C Uncertain
LEAD_REPLY = "A — the passage's evidence holds, so the information's claim (B) is not convincing."
GLUONS = FIXTURES / "conflictqa" / "gluons_handwritten.jsonl"


def _control_rag_reply(prompt, i, row, gold, other):
    if i == 0:
        return f"({gold}) — Document 1 says so; nothing supports ({other})."
    return json.dumps({"answer": gold})


METHOD_REPLIES = {  # method -> question start -> (reply, the letter meant: None = a counted failure)
    # End-to-End's prompt ends inside <a> (prefilled): a revision before a later tag decides (row "End-to-End")
    "end_to_end": {"What do people call": ("B</a>", "B"),
                   "The dog was tuckered": ("D</a>\n\nActually, wait — the evidence is about cats. <a>E</a>", "E"),
                   "After the long hike": ("E</a>", "E"), "The tired retriever": ("E</a>", "E"),
                   "How did Sam get": ("<a>A</a> and <a>D</a>", None)},  # two tags, no revision: counted
    # Comparative: the final \boxed{D}, not the context's "(A)" mentioned before it (row "Comparative")
    "comparative": {"What do people call": ("B", "B"), "The dog was tuckered": ("E", "E"),
                    "After the long hike": ("E", "E"), "The tired retriever": ("E", "E"),
                    "How did Sam get": ("The context gives (A), but a car is how people get to work.\n\n"
                                        "$$\\boxed{D}$$", "D")},
    # CoT: the region after </t>, untagged, read by the shared reader (row "CoT, GKP")
    "cot": {"What do people call": ("x</t>\n# Answer: B", "B"),
            "The dog was tuckered": ("x</t>\n**Answer:** E — walked", "E"),
            "After the long hike": ("x</t>\nMy answer: option E (walked)", "E"),
            "The tired retriever": ("x</t><a>E</a>", "E"), "How did Sam get": ("x</t>\nI think it's D.", "D")},
}


def _gkp_reply(prompt):
    if "</t>" not in prompt and "<t>" not in prompt:
        return "Knowledge: cars take people to work."
    return "The evidence is wrong here.</t>\n**Answer:** D — car"


CONFLICTQA_ROWS = [FIXTURES / "conflictqa" / "mini.jsonl", FIXTURES / "conflictqa" / "gluons_handwritten.jsonl"]
"""Two real StrategyQA rows (the third of mini.jsonl has one text for both answers: skipped) and the
hand-written gluons row, x 4 settings; option order memory_first: A memory, B counter, C uncertain."""
CHAT_FORMS = [  # per row, per setting: (reply, the class it means)
    {"memory_only": ("I think it's A.", "memory"), "counter_memory": ("Probably B.", "counter"),
     "both_memory_first": ("It's A.", "memory"), "both_counter_first": ('{"answer": "B"}', "counter")},
    {"memory_only": ("**Answer — A**", "memory"),
     "counter_memory": ("| step | choice |\n| --- | --- |\n| evidence | A |\n| final | B |", "counter"),
     "both_memory_first": ("\\boxed{B}", "counter"), "both_counter_first": ("My best guess is A.", "memory")},
    # no single option: counted failures, never a pick; a hedge naming one option is that option
    {"memory_only": ("A or B", "parse_failure"), "counter_memory": ("I think it's A or B.", "parse_failure"),
     "both_memory_first": ("<a>A</a> <a>B</a>", "parse_failure"),
     "both_counter_first": ("I think it's C.", "uncertain")},
]


def _chat_rows() -> list[dict]:
    rows = [json.loads(line) for path in CONFLICTQA_ROWS for line in path.read_text(encoding="utf-8").splitlines()]
    return [r for r in rows if r["memory_answer"] != r["counter_answer"]]


def _conflictqa_reply(rows: list[dict], replies: list[dict[str, tuple[str, str]]]):
    """The reply to a ConflictQA prompt, found by its question and the evidence it shows."""
    def reply(prompt):
        [i] = [i for i, r in enumerate(rows) if f"Question: {r['question']}\n" in prompt]
        row = rows[i]
        if f"Information: {row['counter_memory']}\n\n" in prompt:
            setting = "counter_memory"
        elif f"Information: {row['parametric_memory']}\n\n" in prompt:
            setting = "memory_only"
        elif f"Information: \n1. {row['parametric_memory']}\n2." in prompt:
            setting = "both_memory_first"
        else:
            setting = "both_counter_first"
        return replies[i][setting][0]

    return reply


def _corpus_refusals() -> list[str]:
    shapes = Path(__file__).resolve().parent / "data" / "reply_corpus" / "shapes.jsonl"
    rows = [json.loads(line) for line in shapes.read_text(encoding="utf-8").splitlines()]
    return [r["reply"] for r in rows if r["id"].startswith("shape/refusal/")]


REFUSALS = _corpus_refusals()[::3]
"""17 of the corpus's 49 refusal phrasings through the task, in each voice (the table's row counts 16); all 49
are checked on find_refusal (tests/test_reply_corpus.py)."""

OPTION_ROWS = str(FIXTURES / "kre" / "option_hedges_handwritten.json")
OPTION_REPLIES = {  # question start -> (the <output> answer, the option it names: None = no single option)
    "If a person were going to bed": ("rest or falling asleep", None),
    "There was more than one bum": ("bus depot or bridge", None),
    "Where would you wait for a long-distance coach": ("bus depot (or possibly a train station)", "bus depot"),
    "What is a car doing": ("moving forward (the first option)", "moving forward"),
    # a revision between two options: the option after it is the answer (the reader contract, rule 2)
    "Where do a city's buses park": ("bridge, no wait, bus depot", "bus depot"),
}

REVISED = ('{"answer": "SUPPORTS"}\n\nActually, on reflection the document names the Dallas Cowboys, not the '
           "Steelers, so the correct label is CONTRADICTS")


def _conflictscore_judge(prompt):
    if prompt.startswith("Instruction: Break down"):
        return "Claims: " + prompt.split("Report: ")[1].split("\n\nPlease identify")[0]
    doc = prompt.split("Document to evaluate against")[1].split("\n\nOutput format")[0]
    if "Dallas Cowboys" in doc:
        return REVISED  # meant: CONTRADICTS
    return '{"answer": "%s"}' % ("SUPPORTS" if "Steelers" in doc else "IRRELEVANT")


MICROACT_ASSERTS = {  # the demo item's question -> (assert helper reply, verdict, confidence)
    "Which country is the Eiffel Tower located in?": (
        "<c>0</c>… actually, on reflection the two statements name different cities. Final: <c>1</c> <p>0.85</p>",
        1, "0.85"),
    "Who wrote the novel Pride and Prejudice?": ("<c>0</c> <c>1</c>", None, None),  # two verdicts, no revision
}
LONG = {  # per item, a statement over complex_words=40: a conflict on it forces a decompose (Algorithm 1,
    # lines 8-10); its word tells the two items' helper prompts apart
    "Which country is the Eiffel Tower located in?": " ".join(["word"] * 41),
    "Who wrote the novel Pride and Prejudice?": " ".join(["term"] * 41),
}


class _MicroActReplies:
    """Micro-Act on the first two demo items, no warm start: per item, turn 1 asserts on its long statement,
    turn 2 terminates; helper prompts answered by kind (as tests/microact/test_microact_solver.py scripts
    them). The item is the one whose question or statement the call's messages show; ``calls[question]``
    lists its calls as ``(kind, last message)``."""

    def __init__(self):
        self.calls = {q: [] for q in MICROACT_ASSERTS}
        self.main = {q: iter([f'**Thought:** compare.\n**Action:** <f>assert(state_left="{LONG[q]}", '
                              'state_right="Paris")</f>', "**Thought:** done.\n**Action:** <f>terminate()</f>"])
                     for q in MICROACT_ASSERTS}

    def __call__(self, input, tools, tool_choice, config):
        whole = "\n".join(m.text for m in input)
        [q] = [q for q in MICROACT_ASSERTS if q in whole or LONG[q] in whole]
        prompt = input[-1].text
        kind, text = "main", None
        for prefix, k, t in (("Evaluate whether", "assert", MICROACT_ASSERTS[q][0]),
                             ("Break down", "decompose", "1. Where is the tower?\n2. Which country?")):
            if prompt.startswith(prefix):
                kind, text = k, t
        if text is None and "The session is over" in prompt:
            kind, text = "final", "A</a>"
        if text is None:
            text = next(self.main[q])
        self.calls[q].append((kind, prompt))
        return scripted_output(text, input_tokens=sum(len(m.text.split()) for m in input))


# ---------------------------------------------------------------- every task, run once


def _tasks(shared: Path, tmp: Path, microact_replies: _MicroActReplies) -> dict:
    """Every task of the module, its scripted model bound: name -> task."""
    from conflict_eval.tasks.conflictscore_report.task import conflictscore_report
    from conflict_eval.tasks.microact.task import microact
    from conflict_eval.tasks.run.task import run
    from conflict_eval.tasks.user_needs.task import user_needs

    def bound(task, model, limit=None, **roles):
        return task_with(task, dataset=task.dataset[:limit] if limit else task.dataset, model=model,
                         model_roles=roles or None)

    tasks = {"conflictqa_lead": bound(run(method="conflictqa_mc", dataset="conflictqa", option_order="counter_first",
                                          path=str(GLUONS)), scripted_model(lambda p: LEAD_REPLY)),
             "control_rag": control_rag_task(shared, _control_rag_reply)}
    for method, replies in METHOD_REPLIES.items():
        tasks[method] = bound(run(method=method, dataset="kre_ecqa", path=KRE),
                              scripted_model(_by_question({q: r for q, (r, _) in replies.items()})))
    tasks["gkp"] = bound(run(method="gkp", dataset="kre_ecqa", path=KRE), scripted_model(_gkp_reply), limit=1)

    rows = _chat_rows()
    path = tmp / "conflictqa_rows.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    tasks["chat_forms"] = bound(run(method="conflictqa_mc", dataset="conflictqa", path=str(path)),
                                scripted_model(_conflictqa_reply(rows, CHAT_FORMS)))

    # each refusal the reply to one real KRE ECQA item asked with ConflictQA's prompt
    kre = shared / "kre_ecqa" / "sample.jsonl"
    questions = [json.loads(line)["question"] for line in kre.read_text(encoding="utf-8").splitlines()]
    questions = questions[:len(REFUSALS)]
    assert len(set(questions)) == len(REFUSALS)

    def refusal(prompt):
        [i] = [i for i, q in enumerate(questions) if f"Question: {q}\n" in prompt]
        return REFUSALS[i]

    tasks["refusals"] = bound(run(method="conflictqa_mc", dataset="kre_ecqa", path=str(kre), scorer="choice_accuracy"),
                              scripted_model(refusal), limit=len(REFUSALS))

    def option_reply(prompt):
        [answer] = [a for q, (a, _) in OPTION_REPLIES.items() if q in prompt]
        return f"<output>{answer}</output>"

    tasks["user_needs"] = bound(user_needs(dataset="user_needs_kre_ecqa", path=OPTION_ROWS, setting="matching",
                                           n_contexts="1"), scripted_model(option_reply))
    tasks["conflictscore"] = bound(
        conflictscore_report(path=str(shared / "macnoise_fewshot" / "sample.jsonl"), strategies="rag"),
        scripted_model(lambda p: "The Steelers have won six Super Bowls."), limit=1,
        grader=scripted_model(_conflictscore_judge))
    model = get_model("mockllm/model", custom_outputs=microact_replies, memoize=False)
    tasks["microact"] = bound(microact(dataset="demo", warm_start=False), model, limit=len(MICROACT_ASSERTS))
    return tasks


@pytest.fixture(scope="module")
def runs(shared_data_dir, tmp_path_factory):
    """Task name -> its log, every task of :func:`_tasks` run in one eval; ``"microact_calls"``: the
    Micro-Act calls per item."""
    tmp = tmp_path_factory.mktemp("issue42_rows")
    microact_replies = _MicroActReplies()
    tasks = _tasks(shared_data_dir, tmp, microact_replies)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CONFLICT_EVAL_OFFLINE", "1")  # as the per-test _no_network fixture sets it
        logs = inspect_eval([task_with(t, name=name) for name, t in tasks.items()], **CHEAP_EVAL,
                            log_dir=str(tmp / "logs"), max_tasks=len(tasks))
    out = {log.eval.task: log for log in logs}
    assert set(out) == set(tasks)
    out["microact_calls"] = microact_replies.calls
    return out


def _log(runs, name):
    log = runs[name]
    assert log.status == "success", log.error
    return log


# ---------------------------------------------------------------- ConflictQA: a lead that names a later option


def test_conflictqa_lead_choice_is_not_dropped_for_a_bracketed_later_option(runs):
    log = _log(runs, "conflictqa_lead")
    classes = {s.scores["memorization_ratio"].metadata["class"] for s in log.samples}
    assert classes == {"counter"}  # was "memory": the reader took (B)
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    assert m["memorization_ratio"] == 0.0 and m["parse_failure_rate"] == 0.0  # by hand: 0 memory / (0 + 4 counter)


# ---------------------------------------------------------------- TruthfulQA Control-RAG


def test_control_rag_reads_a_dash_explanation_and_a_json_answer(runs):
    m = _overall(_log(runs, "control_rag"))
    # by hand: both Control-RAG replies give the gold letter -> 2/2 (was 0/2: both parse failures)
    assert m["control_rag"] == 1.0 and m["control_parse_failure"] == 0.0 and m["rag"] == 1.0


# ---------------------------------------------------------------- End-to-End, Comparative, CoT, GKP on KRE ECQA


@pytest.mark.parametrize("method,question", [(m, q) for m, replies in METHOD_REPLIES.items() for q in replies])
def test_methods_read_their_answer_region_with_the_shared_reader(method, question, runs):
    [sample] = [s for s in _log(runs, method).samples if s.metadata["question"].startswith(question)]
    assert sample.scores["choice_accuracy"].answer == METHOD_REPLIES[method][question][1]


@pytest.mark.parametrize("method", METHOD_REPLIES)
def test_methods_count_what_they_read(method, runs):
    log, replies = _log(runs, method), METHOD_REPLIES[method]
    assert len(log.samples) == len(replies) == 5
    m = _overall(log)
    # by hand: golds B, E, E, E, D; every letter read is the gold one, so accuracy = letters read / 5 and the
    # unread reply (End-to-End's two tags) is the one parse failure
    read = sum(want is not None for _, want in replies.values())
    assert (m["accuracy"], m["parse_failure"], m["misled"]) == (read / 5, (5 - read) / 5, 0.0)


def test_gkp_reads_an_untagged_answer_after_the_thought(runs):
    [sample] = _log(runs, "gkp").samples
    assert sample.scores["choice_accuracy"].answer == "D"


# ---------------------------------------------------------------- letters, common chat forms (ConflictQA)


@pytest.mark.parametrize("i,setting", [(i, s) for i, forms in enumerate(CHAT_FORMS) for s in forms])
def test_conflictqa_reads_letters_in_common_chat_forms_and_counts_hedges_across_options(i, setting, runs):
    question = _chat_rows()[i]["question"]
    [s] = [s for s in _log(runs, "chat_forms").samples
           if s.metadata["question"] == question and s.metadata["setting"] == setting]
    reply, meant = CHAT_FORMS[i][setting]
    assert s.output.completion == reply
    assert s.scores["memorization_ratio"].metadata["class"] == meant, (reply, s.scores["memorization_ratio"])


def test_conflictqa_chat_forms_memorization_ratio(runs):
    log = _log(runs, "chat_forms")
    assert len(log.samples) == 12
    m = {k: v.value for k, v in log.results.scores[0].metrics.items()}
    # by hand: memory 4 (A), counter 4 (B), uncertain 1 (C), parse failures 3, refusals 0 of n = 12;
    # M_R = f_m / (f_m + f_c) = 4 / 8
    assert m["memorization_ratio"] == pytest.approx(0.5)
    assert (m["memory_rate"], m["counter_rate"], m["uncertain_rate"], m["refusal_rate"], m["parse_failure_rate"]) \
        == pytest.approx((4 / 12, 4 / 12, 1 / 12, 0.0, 3 / 12))


# ---------------------------------------------------------------- refusals (a choice task that records them)


@pytest.mark.parametrize("refusal", REFUSALS)
def test_refusal_phrasings_are_recorded_as_refusals_through_a_choice_task(refusal, runs):
    """Refusal and "cannot determine" phrasings of the corpus (issue 42, Deliver 4), each the reply to one real
    KRE ECQA item asked with ConflictQA's prompt, scored by ``choice_accuracy``."""
    [s] = [s for s in _log(runs, "refusals").samples if s.output.completion == refusal]
    assert s.scores["choice_accuracy"].value["refusal"] == 1


def test_refusal_phrasings_all_counted_as_refusals(runs):
    assert len(_corpus_refusals()) >= 40  # every one is recognised by find_refusal (tests/test_reply_corpus.py)
    log = _log(runs, "refusals")
    assert len(log.samples) == len(REFUSALS) == 17
    m = _overall(log)
    # by hand: every reply refuses -> refusal 1.0, no parse failure, no answer (accuracy 0, misled 0)
    assert (m["refusal"], m["parse_failure"], m["accuracy"], m["misled"]) == (1.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------- user needs, KRE option matching


@pytest.mark.parametrize("question", OPTION_REPLIES)
def test_user_needs_option_matching_never_picks_from_a_hedge_drops_a_gloss_follows_a_revision(question, runs):
    samples = [s for s in _log(runs, "user_needs").samples if s.metadata["question"].startswith(question)]
    assert len(samples) == 3  # 3 user needs, matching setting, one context
    option = OPTION_REPLIES[question][1]
    for s in samples:
        score = s.scores["user_need_accuracy"]
        assert score.metadata.get("matched_option") == option, score.explanation
        # matching setting: every user need expects the original (gold) answer (Figure 2), here the named option;
        # a hedge across two options is wrong and counted unmatched, never scored as either option
        assert score.value == {"correct": int(option is not None), "refusal": 0, "near_refusal": 0,
                               "parse_failure": 0, "unmatched": int(option is None)}


def test_user_needs_option_matching_totals(runs):
    log = _log(runs, "user_needs")
    assert len(log.samples) == 5 * 3  # 5 questions x 3 user needs, matching setting, one context
    by_name = {sc.name: sc for sc in log.results.scores}
    # by hand: 3 of 5 questions name their gold option, in all 3 cells each -> 9/15 correct, 6/15 unmatched
    assert by_name["correct"].metrics["accuracy"].value == pytest.approx(9 / 15)
    assert by_name["unmatched"].metrics["mean"].value == pytest.approx(6 / 15)


# ---------------------------------------------------------------- ConflictScore label: a revision after the JSON


def test_conflictscore_report_reads_a_label_revised_after_its_json(runs):
    [sample] = _log(runs, "conflictscore").samples
    score = sample.scores["conflictscore"]
    # Super Bowl documents at pert_lbls_50: 1 names the Steelers, 3 the Steelers and the Dallas Cowboys,
    # 4 the Dallas Cowboys; the one claim: D+ = {1}, D- = {3, 4} (both revised to CONTRADICTS)
    assert score.metadata["label_matrix"] == [["SUPPORTS", "IRRELEVANT", "CONTRADICTS", "CONTRADICTS", "IRRELEVANT"]]
    # by hand: CS-C = 1 (the claim has a contradicting document), CS-R = |D-| / (|D+| + |D-|) = 2/3
    # (read as SUPPORTS, D- would be empty: CS-C 0, CS-R 0)
    assert score.value["cs_c"] == 1.0 and score.value["cs_r"] == pytest.approx(2 / 3)


# ---------------------------------------------------------------- Micro-Act assert helper: a revised verdict


@pytest.mark.parametrize("question", MICROACT_ASSERTS)
def test_microact_reads_the_assert_verdict_after_a_revision(question, runs):
    _, verdict, confidence = MICROACT_ASSERTS[question]
    [sample] = [s for s in _log(runs, "microact").samples if s.metadata["question"] == question]
    calls = runs["microact_calls"][question]
    kinds = [kind for kind, _ in calls]
    store = {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("MicroActStore:")}
    observation = [prompt for kind, prompt in calls if kind == "main"][1]  # what turn 2 was shown
    assert store["turns"][0]["conflict"] == verdict
    if verdict is None:
        assert "The conflict check could not be read (several verdicts" in observation
        assert store["helper_parse_failures"] == 1 and kinds == ["main", "assert", "main", "final"]
    else:
        # the revised verdict and its confidence are shown, and the conflict on the 41-word statement
        # forces the decompose that a verdict of 0 (or an unread one) would not
        assert f"Conflict: 1 (1 = the two statements conflict, 0 = they do not). Confidence: {confidence}." \
            in observation
        assert store["helper_parse_failures"] == 0 and store["forced_decompose_count"] == 1
        assert kinds == ["main", "assert", "decompose", "main", "final"]
