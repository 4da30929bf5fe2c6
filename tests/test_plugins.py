"""The plugin system: hooks, duplicates, unknown hooks, lookups, third-party plugins.

Every hook in conflict_eval.components.hookspecs must be exercised here
(test_every_hook_has_a_test enforces it).
"""

import inspect as pyinspect
import types

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import ChatMessageUser
from inspect_ai.scorer import Score, mean, scorer
from inspect_ai.solver import solver

import conflict_eval
from conflict_eval import hookimpl
from conflict_eval.components import hookspecs
from conflict_eval.components.manager import (
    PluginError,
    UnknownComponentError,
    components,
    lookup,
    register_plugin,
    unregister_plugin,
)
from conflict_eval.testing import scripted_model


def _hook_names():
    return [n for n, f in pyinspect.getmembers(hookspecs, pyinspect.isfunction)
            if n.startswith("conflict_eval_")]


def test_every_hook_has_a_test():
    source = open(__file__).read()
    for hook in _hook_names():
        assert f"def test_{hook}" in source, f"hook {hook} has no test"


def test_hookimpl_marker_is_public():
    assert conflict_eval.hookimpl is hookimpl
    assert sorted(_hook_names()) == [
        "conflict_eval_add_cli_commands",
        "conflict_eval_lmeval_exports",
        "conflict_eval_register_datasets",
        "conflict_eval_register_methods",
        "conflict_eval_register_metrics",
        "conflict_eval_register_sources",
        "conflict_eval_reply_readers",
    ]


def test_builtins_are_registered_in_code():
    found = components()
    assert found["method"]["end_to_end"].origin == "built-in"
    assert found["method"]["end_to_end"].plugin == "end_to_end"
    assert found["method"]["end_to_end"].distribution == "conflict-eval"
    assert found["dataset"]["demo"].plugin == "demo"
    assert found["metric"]["choice_accuracy"].plugin == "choice_accuracy"


# --- a third-party plugin, registered at run time --------------------------------

@solver
def always_b():
    async def solve(state, generate):
        state.messages = [ChatMessageUser(content="say B")]
        return await generate(state)
    return solve


@scorer(metrics=[mean()])
def reply_length():
    async def score(state, target):
        return Score(value=len(state.output.completion))
    return score


def _make_plugin(**hooks):
    mod = types.ModuleType("thirdparty_plugin")
    for name, value in hooks.items():
        setattr(mod, name, hookimpl(value))
    return mod


@pytest.fixture
def thirdparty():
    def methods():
        return {"always_b": always_b}

    def datasets():
        from conflict_eval.plugins.demo.dataset import demo

        def tiny(path=None, limit=None):
            return demo(path=path, limit=2 if limit is None else limit)
        return {"tiny_demo": tiny}

    def metrics():
        return {"reply_length": reply_length}

    plugin = _make_plugin(
        conflict_eval_register_methods=methods,
        conflict_eval_register_datasets=datasets,
        conflict_eval_register_metrics=metrics,
    )
    register_plugin(plugin, "thirdparty")
    yield plugin
    unregister_plugin("thirdparty")


def test_conflict_eval_register_methods(thirdparty, log_dir):
    c = lookup("method", "always_b")
    assert c.plugin == "thirdparty"
    model = scripted_model(["<a>B</a>", "<a>B</a>"])
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "always_b", "dataset": "demo"},
                         model=model, limit=2, log_dir=log_dir, display="none")
    assert log.status == "success"
    assert len(model.script.calls) == 2
    assert model.script.calls[0][-1].text == "say B"


def test_conflict_eval_register_datasets(thirdparty, log_dir):
    assert lookup("dataset", "tiny_demo").plugin == "thirdparty"
    model = scripted_model(lambda prompt: "<a>A</a>")
    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "tiny_demo"},
                         model=model, log_dir=log_dir, display="none")
    assert log.status == "success" and log.results.total_samples == 2


def test_conflict_eval_register_metrics(thirdparty, log_dir):
    assert lookup("metric", "reply_length").plugin == "thirdparty"
    model = scripted_model(lambda prompt: "abc")
    [log] = inspect_eval("conflict_eval/run",
                         task_args={"dataset": "demo", "scorer": "reply_length"},
                         model=model, limit=3, log_dir=log_dir, display="none")
    # end_to_end puts the prefilled "<a>" back in front: "<a>abc" has 6 characters
    assert log.results.scores[0].metrics["mean"].value == 6


def test_conflict_eval_register_sources(log_dir):
    from conflict_eval.components.manager import get_source
    from conflict_eval.retrieval import Hit

    class EchoSource:
        name, label = "echo", "Echo"

        def search(self, query, k=3):
            return [Hit(id="e1", text=f"echo {query}", title=None, score=1.0, rank=1)]

    register_plugin(_make_plugin(conflict_eval_register_sources=lambda: {"echo": EchoSource}),
                    "thirdparty_sources")
    try:
        c = get_source("echo")
        assert c.plugin == "thirdparty_sources" and c.kind == "source"
        assert c.factory().search("q")[0].text == "echo q"
        # built-in sources are plugins too
        assert {"text", "kg", "web"} <= set(components()["source"])
        # a method picks a registered source by name: AtomR's Standard RAG retrieves from it
        model = scripted_model(lambda prompt: 'So the answer is: (1) Paraphrase Answer: x; (2) Answer List: ["x"]')
        [log] = inspect_eval("conflict_eval/run",
                             task_args={"method": "atomr_standard_rag", "dataset": "demo",
                                        "sources": "echo", "scorer": "token_f1"},
                             model=model, limit=1, log_dir=log_dir, display="none")
        assert log.status == "success", log.error
        assert "Echo: [1] echo " in model.script.calls[0][-1].text
    finally:
        unregister_plugin("thirdparty_sources")


def test_conflict_eval_add_cli_commands(capsys):
    """A third-party plugin adds a ``conflict-eval`` command as the built-ins do
    (``atomr check-trees`` comes through the same hook); a taken name is an error."""
    from conflict_eval.cli import main

    def add(sub):
        p = sub.add_parser("hello-plugin", help="say hello")
        p.add_argument("--name", default="world")
        p.set_defaults(fn=lambda args: print(f"hello {args.name}") or 0)

    register_plugin(_make_plugin(conflict_eval_add_cli_commands=add), "thirdparty_cli")
    try:
        assert main(["hello-plugin", "--name", "houses"]) == 0
        assert capsys.readouterr().out.strip() == "hello houses"
    finally:
        unregister_plugin("thirdparty_cli")

    def clash(sub):
        sub.add_parser("suite")

    register_plugin(_make_plugin(conflict_eval_add_cli_commands=clash), "clashing_cli")
    try:
        with pytest.raises(PluginError, match="suite"):
            from conflict_eval.cli.main import build_parser

            build_parser()
    finally:
        unregister_plugin("clashing_cli")


def test_conflict_eval_lmeval_exports():
    """A plugin's lm-eval functions are served by name from the export's utils module
    (as `!function utils.<name>` asks), beside the built-ins'; a name exported twice is an error."""
    from conflict_eval.lmeval import utils

    def shout_prompt(doc):
        return utils.record(doc).question.upper()

    register_plugin(_make_plugin(conflict_eval_lmeval_exports=lambda: {"shout_prompt": shout_prompt}), "lm_x")
    try:
        assert utils.shout_prompt is shout_prompt
        assert callable(utils.cot_prompt) and callable(utils.process_end_to_end)  # the built-ins' exports
        with pytest.raises(AttributeError, match="no plugin exports it"):
            utils.no_such_export
    finally:
        unregister_plugin("lm_x")
    register_plugin(_make_plugin(conflict_eval_lmeval_exports=lambda: {"cot_prompt": shout_prompt}), "lm_dup")
    try:
        with pytest.raises(PluginError, match="'cot_prompt' is exported by plugins"):
            utils.exports()
    finally:
        unregister_plugin("lm_dup")


def read_shout(reply: str) -> str | None:
    """The fake method's reader (below): the letter after ``SHOUT:``, or None. One pass, linear."""
    _, found, rest = reply.partition("SHOUT:")
    letter = rest.strip()[:1]
    return letter if found and letter in "ABCD" and letter else None


def test_conflict_eval_reply_readers(tmp_path):
    """Issue 47: a new method declares its reply reader through the hook, and nothing shared
    changes: its parser joins the fuzz list (run here on the fuzz harness's adversarial inputs),
    its chain and its labelled shapes join the read-as-meant benchmark (which reads them as
    meant); a name the core or another plugin declares is an error naming both."""
    import importlib.util
    import sys
    from pathlib import Path

    from conflict_eval.answers.fuzz import ParserEntry, adversarial_inputs, check_total, scaling_inputs
    from conflict_eval.answers.readers import Chain, Reading, ReplyReaders
    from conflict_eval.components.manager import reply_readers

    shapes = tmp_path / "shout_shapes.jsonl"
    shapes.write_text('{"id": "shout/1", "kind": "shout.answer", "reply": "SHOUT: B", "args": {"options": ["x", "y"]}, '
                      '"meaning": {"choice": "B"}}\n'
                      '{"id": "shout/2", "kind": "shout.answer", "reply": "B, I think", "args": {"options": ["x", "y"]}, '
                      '"meaning": {"unreadable": true}}\n', encoding="utf-8")

    def read_row(row):
        letter = read_shout(row["reply"])
        return Reading("value", letter.lower()) if letter else Reading("failure", reason="no SHOUT: line")

    declared = ReplyReaders(parsers=[ParserEntry("shout.read_shout", f"{__name__}:read_shout", "counted, never guessed")],
                            chains=[Chain("shout.read_shout", ("shout.answer",), read_row)], shapes=[str(shapes)],
                            tokens=["SHOUT:"])
    plugin = _make_plugin(conflict_eval_register_methods=lambda: {"shout": always_b},
                          conflict_eval_reply_readers=lambda: declared)
    before = {c.name for c in reply_readers().chains}
    register_plugin(plugin, "shouter")  # a fresh plugin manager, with the fake method plugin in it
    try:
        assert lookup("method", "shout").plugin == "shouter"
        found = reply_readers()
        entry = next(p for p in found.parsers if p.name == "shout.read_shout")
        assert entry.owner == "shouter"  # filled in from the plugin's name
        assert {"parse_choice", "microact.parse_call"} <= {p.name for p in found.parsers}  # the core's, a unit's
        for text in [*adversarial_inputs(2_000).values(), *scaling_inputs(2_000, found.tokens).values()]:
            check_total(entry, text)
        assert "'SHOUT:' + spaces" in scaling_inputs(2_000, found.tokens)  # its label, padded for the linear-time test
        spec = importlib.util.spec_from_file_location("reply_reading", Path(__file__).parents[1] / "benchmarks" / "reply_reading.py")
        bench = sys.modules.get("reply_reading") or importlib.util.module_from_spec(spec)
        if "reply_reading" not in sys.modules:
            spec.loader.exec_module(bench)
        assert {c.name for c in bench.reader_chains()} == before | {"shout.read_shout"}
        run = bench.measure([r for r in bench.load_corpus("shapes") if r["kind"] == "shout.answer"])
        assert run["readers"]["shout.read_shout"]["counts"]["shapes"] == {"meant": 2, "misread": 0, "refused": 0,
                                                                          "crashed": 0}
    finally:
        unregister_plugin("shouter")
    assert "shout.read_shout" not in {c.name for c in reply_readers().chains}
    clash = ReplyReaders(parsers=[ParserEntry("parse_choice", f"{__name__}:read_shout", "-")])
    register_plugin(_make_plugin(conflict_eval_reply_readers=lambda: clash), "clasher")
    try:
        with pytest.raises(PluginError, match="reply parser 'parse_choice' is declared by the core and by plugin 'clasher'"):
            reply_readers()
    finally:
        unregister_plugin("clasher")
    register_plugin(_make_plugin(conflict_eval_reply_readers=lambda: [entry]), "listed")
    try:
        with pytest.raises(PluginError, match="must return a conflict_eval.answers.readers.ReplyReaders, got list"):
            reply_readers()
    finally:
        unregister_plugin("listed")


def test_duplicate_name_names_both_plugins():
    plugin = _make_plugin(conflict_eval_register_methods=lambda: {"end_to_end": always_b})
    with pytest.raises(PluginError) as err:
        register_plugin(plugin, "copycat")
    assert "'end_to_end'" in str(err.value) and "'copycat'" in str(err.value)
    # the failed registration leaves the installed plugins usable
    assert lookup("method", "end_to_end").plugin == "end_to_end"


def test_unknown_hook_is_an_error():
    plugin = _make_plugin(conflict_eval_register_metods=lambda: {})
    with pytest.raises(PluginError) as err:
        register_plugin(plugin, "typo")
    assert "typo" in str(err.value) and "conflict_eval_register_metods" in str(err.value)
    assert lookup("method", "end_to_end")


def test_hook_must_return_mapping():
    plugin = _make_plugin(conflict_eval_register_datasets=lambda: ["not", "a", "mapping"])
    with pytest.raises(PluginError, match="must return a mapping"):
        register_plugin(plugin, "badreturn")


def test_broken_plugin_is_named():
    def boom():
        raise ImportError("no module named fancy_dep")
    with pytest.raises(PluginError, match="plugin 'broken'.*fancy_dep"):
        register_plugin(_make_plugin(conflict_eval_register_methods=boom), "broken")


def test_unknown_name_lists_installed():
    with pytest.raises(UnknownComponentError) as err:
        lookup("method", "nope")
    message = str(err.value)
    assert "unknown method 'nope'" in message and "end_to_end (end_to_end)" in message
    with pytest.raises(UnknownComponentError, match="demo"):
        lookup("dataset", "nope")
    with pytest.raises(UnknownComponentError, match="choice_accuracy"):
        lookup("metric", "nope")
