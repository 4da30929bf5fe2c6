"""Batching and prefix reuse in the offline provider give bit-identical results.

The engine tests drive :class:`conflict_eval._local_batch.Engine` directly on
a small random-weight Llama (random weights give near-uniform logits, so a
numerical difference would flip greedy tokens quickly) and compare the logits
every token was picked from, bit for bit.  Prompts cross the attention's
256-position key blocks.  Each engine test runs twice: with the linear layers
packed for oneDNN (rows need no padding) and with plain ``nn.Linear`` layers
and padded row counts (the fallback on other CPU builds).  The ``slow`` tests run the real SmolLM2 through
Inspect.
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

torch = pytest.importorskip("torch")

from conflict_eval import _local_batch as lb  # noqa: E402


@pytest.fixture(scope="module", params=["packed", "padded"])
def model(request):
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=512,
        hidden_size=96,
        intermediate_size=160,
        num_hidden_layers=2,
        num_attention_heads=6,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        tie_word_embeddings=True,
    )
    torch.manual_seed(0)
    m = LlamaForCausalLM(config).eval()
    lb.register_attention()
    m.set_attn_implementation(lb.ATTN_NAME)
    assert lb.supports_packed(m)
    if request.param == "padded":
        setattr(m, lb._PACKED_ATTR, False)  # as where the packed kernel is missing
    m.variant = request.param
    return m


def test_linears_are_packed_unless_disabled(model):
    engine = lb.Engine(model, frozenset(), max_batch=2)
    kinds = {type(m).__name__ for n, m in model.named_modules() if n.endswith(("_proj", "lm_head"))}
    if model.variant == "padded":
        assert not engine.packed_linears and kinds == {"Linear"}
    else:  # torch's x86 CPU builds (CI's) have oneDNN; its packed products are row-invariant
        assert engine.packed_linears and kinds == {"PackedLinear"}


def _prompts(n: int, lengths: list[int], seed: int = 1) -> list[list[int]]:
    g = torch.Generator().manual_seed(seed)
    return [torch.randint(3, 512, (lengths[i % len(lengths)],), generator=g).tolist() for i in range(n)]


def _run(engine: lb.Engine, prompts: list[list[int]], max_new: int, **kw) -> list[lb.Completion]:
    futures = [engine.submit(lb.Request(p, max_new, keep_logits=True, **kw)) for p in prompts]
    return [f.result(timeout=600) for f in futures]


def _same(a: list[lb.Completion], b: list[lb.Completion]) -> None:
    for x, y in zip(a, b, strict=True):
        assert x.new_ids == y.new_ids
        assert len(x.logits) == len(y.logits)
        for lx, ly in zip(x.logits, y.logits):
            assert torch.equal(lx, ly)  # bit for bit, not allclose


def test_probe_finds_safe_row_counts(model):
    safe = lb.probe_safe_rows(96, 160, 16, torch.float32)
    assert safe, "no batch-invariant row counts on this machine"
    assert lb.pad_rows(1, (4, 8, 12)) == 4
    assert lb.pad_rows(9, (4, 8, 12)) == 12
    assert lb.pad_rows(13, (4, 8, 12)) == 17  # above the probed range every count is safe
    assert lb.pad_rows(40, (4, 8, 12)) == 40


def test_batched_and_chunked_equal_single_request(model):
    prompts = _prompts(6, [5, 300, 40, 530, 17, 260])
    single = lb.Engine(model, frozenset(), max_batch=1, prefix_cache=False, chunk_tokens=4096)
    reference = [_run(single, [p], 12)[0] for p in prompts]  # strictly one at a time
    batched = lb.Engine(model, frozenset(), max_batch=4, prefix_cache=False, chunk_tokens=7)
    together = _run(batched, prompts, 12)
    assert batched.stats.max_active == 4
    assert batched.stats.max_decodes >= 2
    assert single.stats.max_decodes == 0  # a lone decode takes the per-sequence path
    _same(reference, together)
    # whole prompts in one step: 4 decodes whose keys span 1, 2, 1 and 3 blocks, attended as one
    wide = lb.Engine(model, frozenset(), max_batch=4, prefix_cache=False, chunk_tokens=4096)
    _same(reference[:4], _run(wide, prompts[:4], 12))
    assert wide.stats.max_decodes == 4


def test_decode_batch_probe_sees_a_difference(model, monkeypatch):
    safe = lb.probe_safe_rows(96, 160, 16, torch.float32)
    assert lb.decodes_batch_exactly(2, 3, 16, safe)
    real = lb._decode_attention

    def off_by_a_bit(dec, layer, q_all, *rest):
        real(dec, layer, q_all * (1 + 2**-20), *rest)

    monkeypatch.setattr(lb, "_decode_attention", off_by_a_bit)
    monkeypatch.setattr(lb, "_decode_probe_cache", {})
    assert not lb.decodes_batch_exactly(2, 3, 16, safe)
    engine = lb.Engine(model, frozenset(), max_batch=4, prefix_cache=False)
    assert not engine.batched_decodes  # so every decode is attended on its own
    _run(engine, _prompts(3, [20]), 3)
    assert engine.stats.max_decodes == 0


def test_an_idle_engine_waits_briefly_so_requests_started_together_share_the_first_step(model):
    prompts = _prompts(3, [30, 50, 20], seed=10)
    engine = lb.Engine(model, frozenset(), max_batch=3, prefix_cache=False, batch_wait_ms=60_000)
    futures = []
    for p in prompts:  # one at a time, as Inspect's samples submit them
        futures.append(engine.submit(lb.Request(p, 3)))
    [f.result(timeout=120) for f in futures]
    assert engine.stats.steps == 3  # all three prefilled in the first step, then 2 decodes
    eager = lb.Engine(model, frozenset(), max_batch=4, prefix_cache=False, batch_wait_ms=0)
    _run(eager, prompts, 3)
    assert eager.stats.max_decodes >= 2


def test_the_kv_pool_holds_the_active_sequences_and_is_freed_when_idle(model):
    import time

    engine = lb.Engine(model, frozenset(), max_batch=3, prefix_cache=False)
    first = _run(engine, _prompts(3, [20, 300, 40]), 4)
    deadline = time.monotonic() + 30
    while engine._pool and time.monotonic() < deadline:
        time.sleep(0.01)
    assert engine._pool == [] and engine._owners == []
    # 3 requests at most 2 at a time: the third takes the slot of the first to finish
    # (zeroed: the previous occupant's KV must not leak), with no rebuild
    engine = lb.Engine(model, frozenset(), max_batch=2, prefix_cache=False, batch_wait_ms=1000)
    prompts = _prompts(3, [200, 30, 200], seed=12)
    alone = lb.Engine(model, frozenset(), max_batch=1, prefix_cache=False)
    _same(_run(engine, prompts, 4), [_run(alone, [p], 4)[0] for p in prompts])
    assert engine.stats.repacks == 2  # built once, freed once
    assert first and all(len(c.new_ids) == 4 for c in first)


def test_a_reused_slot_is_zeroed_past_the_reused_prefix(model):
    engine = lb.Engine(model, frozenset(), max_batch=2, prefix_cache=False)
    a, b = (lb._Seq(lb.Request([1] * 100, 10), 256, 0) for _ in range(2))
    engine._active = [a, b]
    engine._sync_pool()
    a.n_cached = 110
    for k, v in a.kv:  # a departing sequence's KV, here as NaN so a leak would show
        k.fill_(float("nan"))
        v.fill_(float("nan"))
    cached = [(torch.ones_like(k), torch.ones_like(v)) for k, v in a.kv]
    c = lb._Seq(lb.Request([1] * 50, 10), 256, 20, cached)  # reuses a 20-token prefix
    engine._active = [b, c]
    engine._sync_pool()
    assert c.slot == a.slot and engine.stats.repacks == 1  # a's slot, no rebuild
    for k, v in c.kv:
        assert torch.equal(k[:, :20], torch.ones_like(k[:, :20]))
        assert not k[:, 20:].any() and not v[:, 20:].any()  # zero, not NaN


def test_prefix_reuse_is_exact(model):
    [first_prompt] = _prompts(1, [280], seed=2)
    cached = lb.Engine(model, frozenset(), max_batch=2, prefix_cache=True)
    plain = lb.Engine(model, frozenset(), max_batch=1, prefix_cache=False)
    first = _run(cached, [first_prompt], 10)[0]
    assert first.reused_tokens == 0
    # the next turn: the whole conversation so far plus new tokens
    follow_up = first_prompt + first.new_ids + _prompts(1, [30], seed=3)[0]
    second = _run(cached, [follow_up], 10)[0]
    assert second.reused_tokens == len(first_prompt) + len(first.new_ids) - 1
    _same([second], _run(plain, [follow_up], 10))
    # a request sharing only the first 100 tokens reuses exactly those
    branch = first_prompt[:100] + _prompts(1, [20], seed=4)[0]
    third = _run(cached, [branch], 5)[0]
    assert third.reused_tokens == 100
    _same([third], _run(plain, [branch], 5))
    assert cached.stats.reused_tokens == second.reused_tokens + 100


def test_prefix_cache_is_bounded(model):
    engine = lb.Engine(model, frozenset(), max_batch=1, prefix_cache=True, prefix_cache_mb=0.25)
    # a 256-position buffer of this model is 2 layers x 2 heads x 33 x 4 B x 256 = 135 kB
    for prompt in _prompts(4, [100], seed=5):
        _run(engine, [prompt], 2)
    assert len(engine._prefix) == 1


def test_memory_budget_limits_the_batch(model):
    # 2 layers x 2 kv heads x (2 x 16 + 1) x 4 bytes = 528 bytes per position
    tight = lb.Engine(model, frozenset(), max_batch=8, kv_cache_mb=0.15, prefix_cache=False)
    out = _run(tight, _prompts(3, [200]), 3)
    assert tight.stats.max_active == 1  # each 256-position request needs 135 kB
    assert all(len(c.new_ids) == 3 for c in out)
    loose = lb.Engine(model, frozenset(), max_batch=2, prefix_cache=False)
    _run(loose, _prompts(5, [20]), 3)
    assert loose.stats.max_active == 2  # never more than max_batch


def test_seeded_sampling_does_not_depend_on_batching(model):
    prompts = _prompts(3, [30, 70, 9], seed=6)
    kw = dict(temperature=0.9, top_p=0.9, top_k=50, seed=11)
    single = lb.Engine(model, frozenset(), max_batch=1, prefix_cache=False)
    reference = [_run(single, [p], 8, **kw)[0] for p in prompts]
    batched = lb.Engine(model, frozenset(), max_batch=3, prefix_cache=False)
    _same(reference, _run(batched, prompts, 8, **kw))
    other_seed = _run(single, [prompts[0]], 8, temperature=0.9, seed=12)[0]
    assert other_seed.new_ids != reference[0].new_ids


def test_eos_and_stop_check_end_a_sequence(model):
    [prompt] = _prompts(1, [20], seed=7)
    engine = lb.Engine(model, frozenset(), max_batch=2, prefix_cache=False)
    free = _run(engine, [prompt], 10)[0]
    eos = free.new_ids[3]
    stopped = lb.Engine(model, frozenset({eos}), max_batch=2, prefix_cache=False)
    out = _run(stopped, [prompt], 10)[0]
    assert out.hit_eos and out.new_ids == free.new_ids[: free.new_ids.index(eos) + 1]
    by_check = _run(engine, [prompt], 10, stop_check=lambda ids: len(ids) >= 2)[0]
    assert by_check.stopped and by_check.new_ids == free.new_ids[:2]


def test_a_failing_step_fails_its_requests_and_the_engine_recovers(model):
    engine = lb.Engine(model, frozenset(), max_batch=2, prefix_cache=False)
    bad = engine.submit(lb.Request([10**6], 2))  # token id outside the vocabulary
    with pytest.raises(Exception):
        bad.result(timeout=120)
    assert len(_run(engine, _prompts(1, [5]), 2)[0].new_ids) == 2


# --------------------------------------------------------------------------
# the real model through Inspect
# --------------------------------------------------------------------------


@pytest.mark.slow
def test_max_connections_1_and_4_give_identical_eval_outputs(tmp_path):
    from inspect_ai import eval as inspect_eval

    from conflict_eval.compose import compose_task

    outputs = {}
    for connections in (1, 4):
        task = compose_task("end_to_end", "demo")
        [log] = inspect_eval(
            task,
            model="conflict_eval/smollm2",
            limit=6,
            max_tokens=24,
            max_connections=connections,
            log_dir=str(tmp_path / str(connections)),
            display="none",
        )
        assert log.status == "success", log.error
        outputs[connections] = {s.id: s.output.completion for s in log.samples}
    assert outputs[1] == outputs[4]
    assert all(outputs[1].values())


@pytest.mark.slow
async def test_second_turn_reuses_the_first_turns_cache():
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, GenerateConfig, get_model

    config = GenerateConfig(max_tokens=12)
    model = get_model("conflict_eval/smollm2", memoize=False, prefix_cache_mb=64)
    plain = get_model("conflict_eval/smollm2", memoize=False, prefix_cache=False)
    turn1 = [ChatMessageUser(content="Name three rivers in Europe. " * 8)]
    first = await model.generate(turn1, config=config)
    turn2 = turn1 + [
        ChatMessageAssistant(content=first.completion),
        ChatMessageUser(content="Which of them is the longest?"),
    ]
    second = await model.generate(turn2, config=config)
    assert second.usage.input_tokens_cache_read and second.usage.input_tokens_cache_read > 50
    assert second.completion == (await plain.generate(turn2, config=config)).completion


def test_a_cancelled_request_leaves_the_batch(model):
    engine = lb.Engine(model, frozenset(), max_batch=2, prefix_cache=False)
    slow = engine.submit(lb.Request(_prompts(1, [10])[0], 400))
    assert slow.cancel()
    out = _run(engine, _prompts(1, [12], seed=9), 3)[0]
    assert len(out.new_ids) == 3
    assert engine.stats.steps < 100  # the cancelled 400-token request did not run to the end
