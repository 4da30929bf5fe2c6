"""``microact_trajectory``'s cost uses the evaluated model's price (Inspect's
model cost config), not GPT-4o-mini's whatever the model; unknown -> NaN."""

import math

import pytest
from inspect_ai import eval as inspect_eval

from conflict_eval.components.compose import compose_task
from conflict_eval.pricing import PriceTable
from conflict_eval.testing import scripted_model


def _trajectory(model, log_dir, **eval_kwargs):
    task = compose_task("microact", "demo", ["choice_accuracy", "microact_trajectory"], max_turns=2)
    [log] = inspect_eval(task, model=model, limit=1, display="none", log_dir=log_dir, **eval_kwargs)
    assert log.status == "success", log.error
    return log.samples[0].scores["microact_trajectory"].value


def test_cost_follows_the_model_cost_config(log_dir):
    costs = PriceTable.load({"mockllm/model": {"input": 100.0, "output": 300.0, "input_cache_write": 100.0,
                                               "input_cache_read": 100.0}}).register_with_inspect()
    value = _trajectory(scripted_model(lambda prompt: "<a>A</a>"), log_dir, model_cost_config=costs)
    assert value["input_tokens"] > 0
    # by hand: USD per 1M tokens from the config, not GPT-4o-mini's 0.15 / 0.60
    assert value["cost"] == pytest.approx((value["input_tokens"] * 100.0 + value["output_tokens"] * 300.0) / 1e6)


def test_unpriced_model_costs_nan_not_gpt4o_mini(log_dir):
    """scripted/ has the price file's zero entry (no per-token bill): an unknown cost, as on the page."""
    from inspect_ai.model import get_model

    from conflict_eval.testing import _scripted_api  # noqa: F401  (registers scripted/)

    value = _trajectory(get_model("scripted/unpriced", reply="<a>A</a>"), log_dir)
    assert math.isnan(value["cost"])


def test_explicit_prices_still_win(log_dir):
    task = compose_task("microact", "demo", ["choice_accuracy", "microact_trajectory"], max_turns=2,
                        input_price=1.0, output_price=2.0)
    [log] = inspect_eval(task, model=scripted_model(lambda prompt: "<a>A</a>"), limit=1, display="none",
                         log_dir=log_dir)
    value = log.samples[0].scores["microact_trajectory"].value
    assert value["cost"] == pytest.approx((value["input_tokens"] * 1.0 + value["output_tokens"] * 2.0) / 1e6)
    with pytest.raises(ValueError, match="give both input_price and output_price"):
        compose_task("microact", "demo", ["choice_accuracy", "microact_trajectory"], input_price=1.0)
