"""One reader of Inspect's ``--model-cost-config`` format (pricing.load_model_cost_config),
used by the estimate, the budget, ``suite run`` and the leaderboard, with Inspect's rules:
a YAML or JSON file (JSON when the text starts with ``{``), exact model names, all four
``ModelCost`` fields; a bad file is an error naming the file, the model and the field."""

import json
import subprocess
import sys

import pytest
from inspect_ai.model import ModelCost, ModelUsage, compute_model_cost

from conflict_eval.pricing import COST_FIELDS, PriceTable, load_model_cost_config

YAML = """\
# USD per 1M tokens
openai/gpt-4o-mini: {input: 0.15, output: 0.6, input_cache_write: 0.15, input_cache_read: 0.075}
scripted/x:
  input: 2
  output: 8
  input_cache_write: 2.5
  input_cache_read: 0.2
"""


def test_fields_are_inspects_model_cost_fields():
    """If Inspect adds or renames a ModelCost field, this reader must follow."""
    assert COST_FIELDS == tuple(ModelCost.model_fields)


def test_yaml_file_with_cache_prices(tmp_path):
    path = tmp_path / "costs.yaml"
    path.write_text(YAML)
    table = load_model_cost_config(path)
    assert table["scripted/x"] == ModelCost(input=2, output=8, input_cache_write=2.5, input_cache_read=0.2)
    # by hand: 1M input + 0.5M output + 2M cache writes + 4M cache reads
    # = 2 + 0.5*8 + 2*2.5 + 4*0.2 = 2 + 4 + 5 + 0.8 = 11.8 USD
    usage = ModelUsage(input_tokens=1_000_000, output_tokens=500_000, total_tokens=7_500_000,
                       input_tokens_cache_write=2_000_000, input_tokens_cache_read=4_000_000)
    assert compute_model_cost(table["scripted/x"], usage) == pytest.approx(11.8)
    # the estimate reads the same file the same way
    price = PriceTable.load(str(path)).price("scripted/x")
    assert (price.cost, price.source) == (table["scripted/x"], "model-cost-config")


@pytest.mark.parametrize("name", ["costs.json", "costs.yaml"])
def test_json_text_is_json_whatever_the_suffix(tmp_path, name):
    """As Inspect decides: by the text (starts with ``{``), not by the file name."""
    path = tmp_path / name
    path.write_text(json.dumps({"scripted/x": {"input": 1, "output": 4, "input_cache_write": 1,
                                               "input_cache_read": 0.1}}, indent=2))
    assert load_model_cost_config(path)["scripted/x"].input_cache_read == 0.1


def test_yaml_text_in_a_json_named_file_is_yaml(tmp_path):
    path = tmp_path / "costs.json"
    path.write_text("scripted/x: {input: 1, output: 4, input_cache_write: 1, input_cache_read: 0.5}\n")
    assert load_model_cost_config(path)["scripted/x"].input_cache_read == 0.5


@pytest.mark.parametrize("text, says", [
    ("scripted/x: {input: 1, output: 4}\n", "model 'scripted/x': field 'input_cache_write' is missing"),
    ("scripted/x: {input: 1, output: 4, input_cache_write: 1, input_cache_read: 1, cache: 2}\n",
     "model 'scripted/x': unknown field 'cache'"),
    ("scripted/x: {input: -1, output: 4, input_cache_write: 1, input_cache_read: 1}\n",
     "model 'scripted/x': field 'input' must be a finite number >= 0"),
    ("scripted/x: {input: '1', output: 4, input_cache_write: 1, input_cache_read: 1}\n",
     "model 'scripted/x': field 'input' must be a finite number"),
    # YAML's .inf and .nan are numbers; a price of either is refused where the file is read
    ("scripted/x: {input: .inf, output: 4, input_cache_write: 1, input_cache_read: 1}\n",
     "model 'scripted/x': field 'input' must be a finite number >= 0 (USD per 1M tokens), got inf"),
    ("scripted/x: {input: 1, output: .nan, input_cache_write: 1, input_cache_read: 1}\n",
     "model 'scripted/x': field 'output' must be a finite number >= 0 (USD per 1M tokens), got nan"),
    ("scripted/x: 3\n", "model 'scripted/x': expected a mapping"),
    ("'openai/*': {input: 1, output: 4, input_cache_write: 1, input_cache_read: 1}\n",
     "model 'openai/*': glob patterns are not Inspect's format"),
    ("- scripted/x\n", "expected a mapping"),
    ("", "expected a mapping"),
    ("scripted/x: {input: 1\n", "line 2: invalid YAML"),
    ('{"scripted/x": {"input": 1,}}', "line 1, column 28: invalid JSON"),
])
def test_a_bad_file_names_the_file_model_and_field(tmp_path, text, says):
    path = tmp_path / "costs.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        load_model_cost_config(path)
    assert str(err.value).startswith((f"model cost config {path}: ", f"model cost config {path}, line "))
    assert says in str(err.value)


def test_a_missing_file(tmp_path):
    with pytest.raises(ValueError, match=r"model cost config .*nope\.yaml: no such file"):
        load_model_cost_config(tmp_path / "nope.yaml")


INSPECT_EVAL = """
import json, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model_info
from conflict_eval.testing import scripted_model
task = Task(dataset=[Sample(input="hi", target="hi")])
for path in sys.argv[2:]:
    try:
        [log] = eval(task, model=scripted_model(["hi"]), model_cost_config=path, display="none",
                     log_dir=sys.argv[1])
    except Exception as ex:
        print(json.dumps({"error": str(ex)}))
    else:
        print(json.dumps({"status": log.status, "cost": get_model_info("openai/gpt-4o-mini").cost.model_dump()}))
"""


def test_what_inspect_accepts_and_rejects_we_do_too(tmp_path):
    """The same files given to Inspect's own eval(model_cost_config=FILE): the
    prices it sets are the ones read here; a file without cache prices it refuses.
    Not in this process: Inspect keeps prices process-wide, and an eval that refuses
    its cost config leaves Inspect's "an eval is running" flag set for the rest of
    the process. So one fresh process reads the good file first, then the bad one
    (the last eval there: the flag it leaves stops nothing after it)."""
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text("openai/gpt-4o-mini: {input: 0.5, output: 2, input_cache_write: 0.6, input_cache_read: 0.05}\n")
    bad.write_text("openai/gpt-4o-mini: {input: 0.5, output: 2}\n")

    done = subprocess.run([sys.executable, "-c", INSPECT_EVAL, str(tmp_path / "logs"), str(good), str(bad)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    accepted, refused = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    assert accepted["status"] == "success"
    assert ModelCost(**accepted["cost"]) == load_model_cost_config(good)["openai/gpt-4o-mini"]
    assert "input_cache_write" in refused["error"]
    with pytest.raises(ValueError, match="field 'input_cache_write' is missing"):
        load_model_cost_config(bad)


def test_the_fallback_price_file_keeps_its_own_format(tmp_path):
    """``--prices``/prices.yaml is ours, not Inspect's: a ``models:`` table with glob
    patterns, cache prices defaulting to the input price."""
    assert PriceTable.load().file["hf/*"].input_cache_read == 0
    path = tmp_path / "prices.yaml"
    path.write_text("models:\n  'x/*': {input: 1, output: 2, input_cache_read: 0.1}\n")
    assert PriceTable.load(prices=path).file["x/*"] == ModelCost(input=1, output=2, input_cache_write=1,
                                                                 input_cache_read=0.1)
    path.write_text("models:\n  'x/*': {input: 1}\n")
    with pytest.raises(ValueError, match=r"price table .*prices\.yaml: model 'x/\*': field 'output' is missing"):
        PriceTable.load(prices=path)
