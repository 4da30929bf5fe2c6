from inspect_ai import eval as inspect_eval

from conflict_eval.report.accounting import log_costs, summarise
from conflict_eval.testing import scripted_model


def test_end_to_end_costs_one_call_per_sample(log_dir):
    model = scripted_model(lambda p: "A</a> extra words")
    [log] = inspect_eval("conflict_eval/run", task_args={"dataset": "demo"}, model=model,
                         limit=3, log_dir=log_dir, display="none")
    costs = log_costs(log)
    assert [c.calls for c in costs] == [1, 1, 1]
    # scripted usage counts words: the reply has 3
    assert all(c.output_tokens == 3 for c in costs)
    prompt_words = len(model.script.calls[0][-1].text.split())
    assert costs[0].input_tokens == prompt_words
    s = summarise(costs)
    assert s["n"] == 3 and s["calls"] == 1
    assert summarise([])["n"] == 0


def test_cached_input_tokens_are_read_from_usage():
    from types import SimpleNamespace

    from inspect_ai.model import ModelUsage

    from conflict_eval.report.accounting import sample_cost

    sample = SimpleNamespace(
        id=1, events=[], total_time=2.0,
        model_usage={"m": ModelUsage(input_tokens=100, output_tokens=5, total_tokens=105,
                                     input_tokens_cache_read=60)},
    )
    cost = sample_cost(sample)
    assert (cost.input_tokens, cost.cached_input_tokens) == (100, 60)
    assert summarise([cost])["cached_input_tokens"] == 60
