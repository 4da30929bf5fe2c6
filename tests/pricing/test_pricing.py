"""One room prices models (``conflict_eval.pricing``): the ladder's order, the estimate
and the page agreeing on a model's price live and batched, and the price file checked
against genai-prices (0.2.3), which the toolkit adopted for the API models' list prices.

Golden values are the providers' published list prices in USD per 1M tokens
(OpenAI gpt-4o-mini: $0.15 input, $0.60 output; batch APIs at 50%), computed by hand.
"""

from pathlib import Path

import pytest
import yaml
from inspect_ai import eval as inspect_eval
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import GenerateConfig, ModelCost, ModelUsage

from conflict_eval.pricing import PriceTable, genai_price, packaged

MINI = "openai/gpt-4o-mini"


def _cost(i: float, o: float) -> ModelCost:
    return ModelCost(input=i, output=o, input_cache_write=i, input_cache_read=i)


# --------------------------------------------------------------------------
# the ladder


def test_the_ladder_order_recorded_config_database_file_genai(monkeypatch):
    from inspect_ai.model import ModelInfo, get_model_info, set_model_info

    usage = ModelUsage(input_tokens=1_000_000, output_tokens=0)
    # 5. genai-prices: OpenAI's list price, $0.15 per 1M input tokens
    assert PriceTable.load().usd(MINI, usage).usd == pytest.approx(0.15)
    assert PriceTable.load().usd(MINI, usage).source == "genai-prices"
    # 4. the price file wins over genai-prices
    table = PriceTable.load(prices={MINI: {"input": 1, "output": 1}})
    assert (table.usd(MINI, usage).usd, table.usd(MINI, usage).source) == (pytest.approx(1.0), "price file")
    # 3. Inspect's model database wins over the price file
    assert get_model_info("ladder/db") is None
    set_model_info("ladder/db", ModelInfo(cost=_cost(2, 2)))
    table = PriceTable.load(prices={"ladder/*": {"input": 1, "output": 1}})
    assert table.price("ladder/db").source == "inspect database" and table.usd("ladder/db", usage).usd == 2.0
    # 2. the cost config wins over the database
    table = PriceTable.load({"ladder/db": {"input": 3, "output": 3, "input_cache_write": 3, "input_cache_read": 3}},
                            prices={"ladder/*": {"input": 1, "output": 1}})
    assert table.price("ladder/db").source == "model-cost-config" and table.usd("ladder/db", usage).usd == 3.0
    # 1. what Inspect recorded wins over every price
    recorded = ModelUsage(input_tokens=1_000_000, output_tokens=0, total_cost=0.5)
    assert (table.usd("ladder/db", recorded).usd, table.usd("ladder/db", recorded).source) == (0.5, "inspect")
    # nothing knows it: unknown, never 0
    assert PriceTable.load().usd("nobody/knows", usage).usd is None


def test_a_zero_price_file_entry_is_no_known_cost_but_a_config_zero_is():
    usage = ModelUsage(input_tokens=1000, output_tokens=1000)
    assert packaged().price("scripted/x").cost is not None  # a budget accepts the model
    assert packaged().usd("scripted/x", usage).usd is None  # the page and the estimate show n/a
    table = PriceTable.load({"scripted/x": {"input": 0, "output": 0, "input_cache_write": 0, "input_cache_read": 0}})
    assert table.usd("scripted/x", usage).usd == 0.0


@pytest.mark.parametrize("text, says", [
    ("models:\n  a/b: {input: .inf, output: 1}\n", "model 'a/b': field 'input' must be a finite number >= 0"),
    ("models:\n  a/b: {input: 1, output: .nan}\n", "model 'a/b': field 'output' must be a finite number >= 0"),
    ("models: {}\nbatch:\n  openai: {discount: 1.5, source: x}\n", "batch.openai.discount must be a number in [0, 1)"),
    ("modles: {}\n", "unknown section 'modles'"),
])
def test_a_bad_price_file_is_refused_where_it_is_read(tmp_path, text, says):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(ValueError) as err:
        PriceTable.load(prices=path)
    assert str(err.value).startswith(f"price table {path}: ") and says in str(err.value)


def test_batch_prices_at_the_providers_discount():
    usage = ModelUsage(input_tokens=1_000_000, output_tokens=1_000_000)  # by hand: 0.15 + 0.60 = $0.75 live
    table = packaged()
    assert table.usd(MINI, usage).usd == pytest.approx(0.75)
    assert table.usd(MINI, usage, batched=True).usd == pytest.approx(0.375)
    assert table.usd(MINI, usage, batched=True).source == "genai-prices, batch x0.5"
    # Inspect records batched calls at the list price: the discount applies to a recorded cost too
    assert table.usd(MINI, ModelUsage(total_cost=0.75), batched=True).usd == pytest.approx(0.375)
    # a provider with no batch API runs live whatever the setting
    assert PriceTable.load(prices={"vllm/m": {"input": 1, "output": 1}}).usd(
        "vllm/m", usage, batched=True).usd == pytest.approx(2.0)


# --------------------------------------------------------------------------
# the estimate and the page price one model the same, live and batched

PROFILES = {"tokens_per_word": 1.0, "methods": {},
            "default": {"calls": 1, "input_base": 1_000_000, "input_per_word": 0, "output_per_call": 500_000}}


@pytest.fixture(scope="module")
def one_log(tmp_path_factory) -> Path:
    """A real Inspect log (scripted model, one sample), to re-label as a gpt-4o-mini run."""
    log_dir = tmp_path_factory.mktemp("one")
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo"},
                         model="scripted/x", model_args={"reply": "A</a>"}, limit=1, log_dir=str(log_dir),
                         display="none")
    return Path(log.location)


@pytest.mark.parametrize("batch, usd", [(False, 0.45), (True, 0.225)])
def test_the_estimate_and_the_page_agree_on_a_models_price(one_log, tmp_path, batch, usd):
    """1M input and 0.5M output tokens of gpt-4o-mini: by hand 1 x 0.15 + 0.5 x 0.60 = $0.45
    live, half of it ($0.225) through the batch API. The estimate (its live and batch
    columns) and the leaderboard (the sample's cost and the cell's $ total) give it."""
    from conflict_eval.report.build import build_leaderboard
    from conflict_eval.runs.batch_estimate import batch_view
    from conflict_eval.runs.estimate import estimate_samples

    sample = read_eval_log(str(one_log)).samples[0]
    est = estimate_samples([sample], "x", MINI, profiles=PROFILES)
    assert (est.input_tokens, est.output_tokens) == (1_000_000, 500_000)
    view = batch_view(MINI, batch, est, "end_to_end", {})
    assert view.live_usd == pytest.approx(0.45) and view.batch_usd == pytest.approx(0.225)
    assert view.run_usd == pytest.approx(usd)

    log = read_eval_log(str(one_log))
    log.eval.model = MINI
    log.eval.model_generate_config = GenerateConfig(batch=batch)
    usage = {MINI: ModelUsage(input_tokens=1_000_000, output_tokens=500_000, total_tokens=1_500_000)}
    log.stats.model_usage = usage
    for s in log.samples:
        s.model_usage = usage
    (tmp_path / "logs").mkdir()
    write_eval_log(log, str(tmp_path / "logs" / Path(one_log).name))
    [row] = build_leaderboard([tmp_path / "logs"], bootstrap=0)["rows"]
    assert row.cost_per_sample == pytest.approx(usd) and row.cost_total == pytest.approx(usd)
    assert row.cost_per_sample == pytest.approx(view.run_usd)


# --------------------------------------------------------------------------
# genai-prices against the price file it replaced

# The API entries the packaged prices.yaml held until it adopted genai-prices (providers'
# list prices, mid-2025, USD per 1M tokens): genai-prices 0.2.3 gives the same figures.
REPLACED = {
    "openai/gpt-4o": (2.50, 10.00), "openai/gpt-4o-mini": (0.15, 0.60), "openai/gpt-4.1": (2.00, 8.00),
    "openai/gpt-4.1-mini": (0.40, 1.60), "openai/gpt-4.1-nano": (0.10, 0.40), "openai/o3-mini": (1.10, 4.40),
    "openai/gpt-3.5-turbo": (0.50, 1.50), "anthropic/claude-3-5-haiku-latest": (0.80, 4.00),
    "anthropic/claude-3-5-sonnet-20241022": (3.00, 15.00), "anthropic/claude-sonnet-4-20250514": (3.00, 15.00),
    "anthropic/claude-opus-4-20250514": (15.00, 75.00), "google/gemini-2.0-flash": (0.10, 0.40),
    "google/gemini-1.5-flash": (0.075, 0.30), "google/gemini-1.5-pro": (1.25, 5.00),
}


@pytest.mark.parametrize("model", sorted(REPLACED))
def test_genai_prices_gives_the_list_prices_the_file_held(model):
    cost = genai_price(model)
    assert cost is not None, f"genai-prices does not price {model}"
    assert (cost.input, cost.output) == pytest.approx(REPLACED[model])
    assert packaged().price(model).source == "genai-prices"


def test_every_api_model_of_the_shipped_suites_is_priced_by_genai_prices():
    suites = Path(__file__).resolve().parents[2] / "suites"
    models = {m["model"] if isinstance(m, dict) else m
              for f in suites.glob("*.yaml") for m in (yaml.safe_load(f.read_text()) or {}).get("models") or []}
    api = sorted(m for m in models if m.split("/", 1)[0] in ("openai", "anthropic", "google", "together"))
    assert api, "the shipped suites name API models"
    for m in api:
        assert packaged().price(m).source == "genai-prices" and packaged().price(m).cost.input > 0, m


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/gpt-4o", "openai/gpt-4.1-mini",
                                   "anthropic/claude-haiku-4-5", "anthropic/claude-sonnet-4-5"])
def test_the_batch_discounts_agree_with_genai_prices_where_it_models_batch(model):
    """Where genai-prices has a batch price for the model, the provider discount of
    prices.yaml gives the same. (It has none for retired models such as the default
    suite's claude-3-5-haiku-latest, and then returns the list price under a batch
    context: why the discounts stay per provider in prices.yaml.)"""
    import genai_prices

    provider, name = model.split("/", 1)
    usage = genai_prices.Usage(input_tokens=1000, output_tokens=1000)
    live = genai_prices.calc_price(usage, name, provider_id=provider).total_price
    batch = genai_prices.calc_price(usage, name, provider_id=provider,
                                    price_context={"processing": "batch"}).total_price
    assert batch < live, f"genai-prices 0.2.3 models a batch price for {model}"
    ours = packaged().usd(model, ModelUsage(input_tokens=1000, output_tokens=1000), batched=True).usd
    assert ours == pytest.approx(float(batch))


def test_a_local_model_is_priced_without_building_it_and_the_lookup_keeps_stdout(monkeypatch, capsys):
    """Inspect's database is not asked about a local model: for a name it lacks, Inspect builds the
    provider to canonicalise it, which for a local provider loads the model. Other names are asked,
    and what the lookup prints (Inspect's hooks banner on its first provider) goes to stderr."""
    import inspect_ai.model

    asked: list[str] = []

    def lookup(model):
        asked.append(model)
        print("inspect_ai v0.3.285\n- hooks enabled: 0")  # what building a provider prints, once
        return None

    monkeypatch.setattr(inspect_ai.model, "get_model_info", lookup)
    table = PriceTable.load(None, None)
    for local in ("hf/HuggingFaceTB/SmolLM2-135M-Instruct", "conflict_eval/smollm2", "vllm/meta/x", "ollama/llama3"):
        price = table.price(local)
        assert price.source == "price file" and price.no_bill, local  # prices.yaml: local models at 0
    assert asked == []
    assert table.price("scripted/x").source == "price file"
    assert asked == ["scripted/x"]
    out, err = capsys.readouterr()
    assert out == "" and "hooks enabled" in err
