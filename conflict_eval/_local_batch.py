"""Batched, batch-invariant generation engine for the ``conflict_eval`` provider.

One engine thread per (model, options) gathers the pending requests and runs
them together: every step packs, for each active sequence, either its next
prompt chunk (prefill) or its last generated token (decode) into ONE row of
tokens (``[1, T]``, each token with its own position id) and runs one forward
pass.  New requests join at the next step (continuous batching); a finished
sequence leaves at once.

Why packing instead of a left-padded ``[B, L]`` batch: greedy outputs must not
depend on what else is in the batch.  On CPU, a matrix product's row does not
always come out bit-identical when the number of rows changes (MKL uses other
kernels for 1-3, 5-7 and 9-11 rows on the machine this was written on), and a
padded attention softmax sums over a longer row.  Both would let batching flip
a greedy argmax in rare near-ties.  So the engine computes every token's
hidden states in a way that depends only on that token's own sequence:

* the linear layers run on weights pre-packed for oneDNN
  (:func:`pack_linears`), whose products give every row bit-identical to that
  row computed alone, whatever the row count (probed on the model's own shapes
  at load).  Where that kernel is missing or fails the probe (another CPU
  build, bf16 on some CPUs), the row count of every product is padded instead
  to a *safe* count found by :func:`probe_safe_rows`: counts whose rows are
  bit-identical to those of a large product.  The attention's own small
  products (below) are always padded that way;
* attention never mixes sequences: each key block of fixed size
  :data:`BLOCK` is its own product, positions after the query are masked out,
  and the blocks are summed in one fixed order, so a key block gives the same
  values whether the query is decoded or prefilled.  A prompt chunk is
  attended on its own; the one-row segments of a step (decodes) are attended
  together, each key block of all of them in one batched product whose
  entries are the per-sequence products (checked at load by
  :func:`decodes_batch_exactly`; where that fails, each decode is attended on
  its own).

The KV of the active sequences lives in one zero-initialised pool per layer,
``[slots, kv heads, positions, head_dim]``, so the decodes' keys are side by
side and a batched product reads them in place.  A joining sequence takes the
slot of one that left (zeroed) or the pool is rebuilt
(:meth:`Engine._sync_pool`).

The same property makes the prefix cache exact: the KV of a token is the same
whether it was computed in a prefill, a chunk of a prefill or a decode step,
so a later request that starts with the same tokens (the next turn of a
conversation, or another sample with the same long instructions) copies the
cached KV and prefills only its new tokens.  The tests check both properties
bit for bit on logits.

Why pack the linears: MKL computes a one-row product with another kernel
(gemv) than a four-row one, so padding a lone decode row to a safe count made
every single-stream step 2-3x dearer (the 49k-row output layer took 26 ms
padded to 4 rows against 11 ms for 1 row here); the packed kernel takes 7 ms
for 1 row and 8 ms for 4.

If the probe finds no safe row counts (some other BLAS), the engine runs one
request at a time with no prefix cache, which is still deterministic.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

logger = logging.getLogger(__name__)

BLOCK = 256
"""Key-block size of the attention (positions per block)."""

ATTN_NAME = "conflict_eval_packed"

_probe_cache: dict[tuple[Any, ...], tuple[int, ...] | None] = {}


# --------------------------------------------------------------------------
# Safe row counts
# --------------------------------------------------------------------------


def probe_safe_rows(
    hidden: int,
    intermediate: int,
    head_dim: int,
    dtype: torch.dtype,
    limit: int = 16,
    linears: bool = True,
) -> tuple[int, ...] | None:
    """Row counts ``m <= limit`` whose products are row-invariant.

    For each product the engine runs (``[m, hidden] @ [hidden, n]`` linears
    unless ``linears`` is false, the attention's ``q @ k^T`` and ``p @ v``)
    the rows computed in a product of ``m`` rows are compared bit for bit with
    the same rows computed in a product of 64 rows.  Counts above ``limit``
    must all be safe (checked up to 48); otherwise ``None`` (no safe padding
    exists here).
    """
    key = (hidden, intermediate, head_dim, dtype, torch.get_num_threads(), linears)
    if key in _probe_cache:
        return _probe_cache[key]
    gen = torch.Generator().manual_seed(0)

    def rand(*shape: int, dt: torch.dtype = dtype) -> torch.Tensor:
        return torch.randn(*shape, generator=gen).to(dt)

    products: list[tuple[torch.Tensor, Callable[[torch.Tensor], torch.Tensor]]] = []
    for k, n in ((hidden, hidden), (hidden, intermediate), (intermediate, hidden)) if linears else ():
        w = rand(n, k)
        products.append((rand(64, k), lambda x, w=w: torch.nn.functional.linear(x, w)))
    kt = rand(3, head_dim, 2 * BLOCK, dt=torch.float32)
    products.append(
        (rand(3, 64, head_dim, dt=torch.float32), lambda x, kt=kt: torch.matmul(x, kt))
    )
    kt1 = kt[:, :, :BLOCK].contiguous()
    products.append(
        (rand(3, 64, head_dim, dt=torch.float32), lambda x, kt=kt1: torch.matmul(x, kt))
    )
    v = rand(3, BLOCK, head_dim + 1, dt=torch.float32)
    products.append((rand(3, 64, BLOCK, dt=torch.float32), lambda x, v=v: torch.matmul(x, v)))

    def ok(m: int) -> bool:
        for x, fn in products:
            full = fn(x)
            for start in (0, 7):
                part = fn(x[..., start : start + m, :])
                if not torch.equal(part, full[..., start : start + m, :]):
                    return False
        return True

    # the key-length dimension must not matter either (q @ k^T over 1 or 2 blocks)
    q = products[-3][0]
    n_invariant = torch.equal(
        torch.matmul(q, kt)[..., :BLOCK], torch.matmul(q, kt1)
    )
    safe: tuple[int, ...] | None = tuple(m for m in range(1, limit + 1) if ok(m))
    if not n_invariant or not all(ok(m) for m in range(limit + 1, 49)):
        safe = None
    _probe_cache[key] = safe
    return safe


def pad_rows(n: int, safe: tuple[int, ...], limit: int = 16) -> int:
    """Smallest safe row count >= n (every count above ``limit`` is safe)."""
    for m in safe:
        if m >= n:
            return m
    return max(n, limit + 1)


# --------------------------------------------------------------------------
# Row-invariant linear layers
# --------------------------------------------------------------------------


class PackedLinear(torch.nn.Module):
    """``nn.Linear`` on a weight pre-packed for oneDNN's matrix product."""

    def __init__(self, linear: torch.nn.Linear) -> None:
        super().__init__()
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.packed = torch.ops.mkldnn._reorder_linear_weight(linear.weight.detach(), 4)
        self.bias = linear.bias

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.ops.mkldnn._linear_pointwise(x, self.packed, self.bias, "none", [], "")


_PACKED_ATTR = "_conflict_eval_packed_linears"


def _rows_are_invariant(linear: torch.nn.Module, dtype: torch.dtype) -> bool:
    """Every row of a product of 2-9, 12, 16, 17, 24, 31, 33, 40 and 300 rows
    (and of a 3-D input) equals that row computed alone."""
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(300, linear.in_features, generator=gen).to(dtype)
    with torch.inference_mode():
        alone = torch.cat([linear(x[i : i + 1]) for i in range(40)])
        counts = [*range(2, 10), 12, 16, 17, 24, 31, 33, 40, 300]
        return all(torch.equal(linear(x[:m])[:40], alone[:m]) for m in counts) and torch.equal(
            linear(x[None, 7:30])[0], alone[7:30]
        )


def pack_linears(model: Any) -> bool:
    """Swap the model's linear layers for :class:`PackedLinear` when that makes
    every row of a product independent of the row count (probed once per
    layer shape on the packed weights themselves).

    Idempotent; returns whether the model's linears are row-invariant now.
    Leaves the model unchanged (and returns False) where the packed kernel is
    missing, fails, or is not row-invariant: the engine then pads row counts.
    The original weight of a swapped layer is released unless another module
    shares it (a tied output layer keeps the input embedding)."""
    done = getattr(model, _PACKED_ATTR, None)
    if done is not None:
        return done
    linears = [
        (name, module)
        for name, module in model.named_modules()
        if type(module) is torch.nn.Linear and name
    ]
    ok = bool(linears) and hasattr(torch.ops.mkldnn, "_reorder_linear_weight")
    swapped: list[tuple[str, torch.nn.Module]] = []
    try:
        checked: dict[tuple[int, int, torch.dtype], bool] = {}
        for name, module in linears if ok else ():
            packed = PackedLinear(module)
            shape = (module.out_features, module.in_features, module.weight.dtype)
            if shape not in checked:
                checked[shape] = _rows_are_invariant(packed, module.weight.dtype)
            if not checked[shape]:
                ok = False
                break
            swapped.append((name, packed))
    except (RuntimeError, NotImplementedError) as exc:
        logger.info("conflict_eval: packed linear layers unavailable here (%s)", exc)
        ok = False
    if ok:
        for name, packed in swapped:
            parent_name, _, attr = name.rpartition(".")
            setattr(model.get_submodule(parent_name), attr, packed)
    setattr(model, _PACKED_ATTR, ok)
    return ok


# --------------------------------------------------------------------------
# Requests, sequences and the step context seen by the attention function
# --------------------------------------------------------------------------


@dataclass
class Request:
    prompt_ids: list[int]
    max_new: int
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    seed: int | None = None
    stop_check: Callable[[list[int]], bool] | None = None
    """Called with the generated ids after each token; True stops."""
    keep_logits: bool = False
    """Record the logits each token was picked from (tests compare them bit for bit)."""
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


@dataclass
class Completion:
    new_ids: list[int]
    hit_eos: bool
    stopped: bool
    reused_tokens: int
    seconds: float
    logits: list[torch.Tensor] | None = None


KV = list[tuple[torch.Tensor, torch.Tensor]]
"""Per layer: keys ``[kv heads, positions, head_dim]`` and values
``[kv heads, positions, head_dim + 1]`` (the last column is 1 at every written
position, so one product gives the softmax's numerator and denominator)."""


class _Seq:
    def __init__(self, req: Request, need: int, reused: int, source: KV | None = None):
        self.req = req
        self.tokens = list(req.prompt_ids)
        self.n_prompt = len(req.prompt_ids)
        self.need = need
        """Positions of KV this sequence can fill (a multiple of BLOCK)."""
        self.kv: KV | None = None
        """Views of this sequence's slot in the engine's KV pool (set by the engine's repack)."""
        self.slot = -1
        self.source = source
        """Prefix-cache entry whose first ``reused`` positions the repack copies in."""
        self.n_cached = reused
        self.reused = reused
        self.started = time.monotonic()
        self.logits: list[torch.Tensor] | None = [] if req.keep_logits else None
        self.generator: torch.Generator | None = None
        if req.temperature is not None and req.temperature > 0:
            self.generator = torch.Generator()
            seed = req.seed if req.seed is not None else int(torch.randint(0, 2**62, (1,)))
            self.generator.manual_seed(seed)


@dataclass
class _Segment:
    seq: _Seq
    start: int  # first row in the packed step
    n: int  # rows
    pos0: int  # absolute position of the first row
    mask: torch.Tensor | None = None
    """Masked (True) score positions, built by the first layer, reused by the others."""


@dataclass
class _Decodes:
    """The step's one-row segments (decode steps, a prompt's last token).

    Their attention runs once for all of them on the slots ``lo..hi`` of the
    KV pool (slots in that range that are not decoding get zero queries and
    their results are dropped)."""

    rows: torch.Tensor
    """Each segment's row in the packed step."""
    slots: torch.Tensor
    positions: torch.Tensor
    lo: int
    hi: int
    n_blocks: int
    mask: torch.Tensor
    """``[slots, 1, blocks, 1, BLOCK]``: key positions after each slot's query."""
    pool: KV

    @classmethod
    def of(cls, segments: list[_Segment], pool: KV) -> _Decodes | None:
        if not segments:
            return None
        slots = [seg.seq.slot for seg in segments]
        lo, hi = min(slots), max(slots)
        n_blocks = max(seg.pos0 for seg in segments) // BLOCK + 1
        last = torch.full((hi - lo + 1,), n_blocks * BLOCK)  # other slots: nothing masked
        last[torch.tensor(slots) - lo] = torch.tensor([seg.pos0 for seg in segments])
        mask = torch.arange(n_blocks * BLOCK).view(n_blocks, BLOCK)[None] > last[:, None, None]
        return cls(
            rows=torch.tensor([seg.start for seg in segments]),
            slots=torch.tensor(slots),
            positions=torch.tensor([seg.pos0 for seg in segments]),
            lo=lo,
            hi=hi,
            n_blocks=n_blocks,
            mask=mask[:, None, :, None],
            pool=pool,
        )


@dataclass
class _Step:
    segments: list[_Segment]
    """Segments of more than one row (prompt chunks): each attended on its own."""
    decodes: _Decodes | None
    rows: int
    safe: tuple[int, ...]


_current = threading.local()


def packed_attention(
    module: Any,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: Any,
    scaling: float | None = None,
    dropout: float = 0.0,
    **kwargs: Any,
) -> tuple[torch.Tensor, None]:
    """HF attention function: per-sequence blocked attention over the engine's KV buffers.

    Outside an engine step (no step on this thread: e.g. Micro-Act's
    perplexity analysis calling the shared model directly on one unpadded
    sequence) it is transformers' ordinary SDPA attention."""
    step: _Step | None = getattr(_current, "step", None)
    if step is None:
        from transformers.integrations.sdpa_attention import sdpa_attention_forward

        return sdpa_attention_forward(module, query, key, value, attention_mask,
                                      scaling=scaling, dropout=dropout, **kwargs)
    layer = module.layer_idx
    _, n_heads, rows, d = query.shape
    n_kv = key.shape[1]
    groups = n_heads // n_kv
    scale = scaling if scaling is not None else d**-0.5
    out = torch.zeros(1, rows, n_heads, d, dtype=query.dtype, device=query.device)
    q_all = query[0].float()
    k_all = key[0].float()
    v_all = value[0].float()
    if step.decodes is not None:
        _decode_attention(step.decodes, layer, q_all, k_all, v_all, out, scale, step.safe)
    for seg in step.segments:
        kbuf, vbuf = seg.seq.kv[layer]
        end = seg.pos0 + seg.n
        kbuf[:, seg.pos0 : end] = k_all[:, seg.start : seg.start + seg.n]
        vbuf[:, seg.pos0 : end, :d] = v_all[:, seg.start : seg.start + seg.n]
        vbuf[:, seg.pos0 : end, d] = 1.0
        n_blocks = math.ceil(end / BLOCK)
        width = n_blocks * BLOCK
        q = q_all[:, seg.start : seg.start + seg.n]  # [H, n, d]
        q = q.reshape(n_kv, groups * seg.n, d)  # heads grouped by their kv head
        real = groups * seg.n
        padded = pad_rows(real, step.safe)
        if padded > real:
            q = torch.cat([q, q.new_zeros(n_kv, padded - real, d)], dim=1)
        # scores block by block: [kv, blocks, R, BLOCK], each block its own product
        keys = kbuf[:, :width].view(n_kv, n_blocks, BLOCK, d).transpose(2, 3)
        scores = torch.matmul(q.mul(scale)[:, None], keys)
        first = seg.pos0 // BLOCK  # blocks before the segment's first query are never masked
        if seg.mask is None:  # same for every layer of this step
            positions = first * BLOCK + torch.arange((n_blocks - first) * BLOCK, device=query.device)
            query_pos = seg.pos0 + torch.arange(seg.n, device=query.device)
            masked = (positions[None, :] > query_pos[:, None]).repeat(groups, 1)  # [real, cols]
            if padded > real:
                masked = torch.cat([masked, masked.new_zeros(padded - real, masked.shape[1])], dim=0)
            seg.mask = masked.view(padded, n_blocks - first, BLOCK).transpose(0, 1)[None]
        scores[:, first:].masked_fill_(seg.mask, float("-inf"))
        scores.sub_(scores.amax(dim=(1, 3), keepdim=True)).exp_()  # max is exact in any order
        parts = torch.matmul(scores, vbuf[:, :width].view(n_kv, n_blocks, BLOCK, d + 1))
        acc = parts[:, 0]
        for b in range(1, n_blocks):  # one fixed order, whatever the length
            acc = acc + parts[:, b]
        attn = acc[:, :real, :d] / acc[:, :real, d:]
        attn = attn.reshape(n_heads, seg.n, d).transpose(0, 1)  # [n, H, d]
        out[0, seg.start : seg.start + seg.n] = attn.to(query.dtype)
    return out, None


def _decode_attention(
    dec: _Decodes,
    layer: int,
    q_all: torch.Tensor,
    k_all: torch.Tensor,
    v_all: torch.Tensor,
    out: torch.Tensor,
    scale: float,
    safe: tuple[int, ...],
) -> None:
    """The per-sequence attention above, for all one-row segments at once.

    The sequences' keys and values sit side by side in the pool, so each key
    block of all of them is one batched product on a view (no copy), and every
    other operation runs once per layer instead of once per sequence (~250 us
    per sequence and layer in small operations alone).  Each entry of a batched
    product is the product the per-sequence path computes (same shapes, same
    padded rows), a block past a sequence's query is wholly masked (its
    weights are exact zeros, so adding its part changes nothing), and the
    block sums run in the same order: a sequence's result does not depend on
    the others."""
    kpool, vpool = dec.pool[layer]
    n_kv, _, d = k_all.shape
    n_heads = q_all.shape[0]
    groups = n_heads // n_kv
    g, n_slots, n_blocks = len(dec.rows), dec.hi - dec.lo + 1, dec.n_blocks
    kpool[dec.slots, :, dec.positions] = k_all[:, dec.rows].transpose(0, 1)
    vpool[dec.slots, :, dec.positions, :d] = v_all[:, dec.rows].transpose(0, 1)
    vpool[dec.slots, :, dec.positions, d] = 1.0
    q = q_all.new_zeros(n_slots, n_kv, pad_rows(groups, safe), d)
    q[dec.slots - dec.lo, :, :groups] = q_all[:, dec.rows].transpose(0, 1).reshape(g, n_kv, groups, d)
    q = q.mul(scale).flatten(0, 1)  # [slots * kv, R, d]
    keys = kpool[dec.lo : dec.hi + 1]
    values = vpool[dec.lo : dec.hi + 1]
    scores = torch.stack(
        [
            torch.bmm(q, keys[:, :, b * BLOCK : (b + 1) * BLOCK].flatten(0, 1).transpose(1, 2))
            for b in range(n_blocks)
        ],
        dim=1,
    ).view(n_slots, n_kv, n_blocks, -1, BLOCK)
    scores.masked_fill_(dec.mask, float("-inf"))
    scores.sub_(scores.amax(dim=(2, 4), keepdim=True)).exp_()
    scores = scores.flatten(0, 1)
    acc = torch.bmm(scores[:, 0], values[:, :, :BLOCK].flatten(0, 1))
    for b in range(1, n_blocks):  # the per-sequence path's order
        acc = acc + torch.bmm(scores[:, b], values[:, :, b * BLOCK : (b + 1) * BLOCK].flatten(0, 1))
    acc = acc.view(n_slots, n_kv, -1, d + 1)[dec.slots - dec.lo, :, :groups]  # [G, kv, groups, d+1]
    attn = acc[..., :d] / acc[..., d:]
    out[0, dec.rows] = attn.reshape(g, n_heads, d).to(out.dtype)


_decode_probe_cache: dict[tuple[Any, ...], bool] = {}


class _ProbeLayer:
    layer_idx = 0


def decodes_batch_exactly(n_kv: int, groups: int, head_dim: int, safe: tuple[int, ...]) -> bool:
    """Whether :func:`_decode_attention` gives, bit for bit, what the
    per-sequence path gives for the same one-row segments (checked on random
    keys and values at key lengths of 1, 2 and 3 blocks).  Where it does not,
    the engine attends each decode on its own."""
    key = (n_kv, groups, head_dim, safe, torch.get_num_threads())
    if key not in _decode_probe_cache:
        gen = torch.Generator().manual_seed(0)
        n, cap, d = 3, 3 * BLOCK, head_dim
        positions = [BLOCK - 2, 2 * BLOCK + 7, 3 * BLOCK - 1]
        keys = torch.randn(n, n_kv, cap, d, generator=gen)
        values = torch.randn(n, n_kv, cap, d + 1, generator=gen)
        values[..., d] = 1.0
        q = torch.randn(1, n_kv * groups, n, d, generator=gen)
        k = torch.randn(1, n_kv, n, d, generator=gen)
        v = torch.randn(1, n_kv, n, d, generator=gen)

        def attend(batched: bool) -> torch.Tensor:
            pool = [(keys.clone(), values.clone())]
            segments = []
            for i, pos in enumerate(positions):
                seq = _Seq(Request([0], 1), cap, 0)
                seq.slot, seq.kv = i, [(pool[0][0][i], pool[0][1][i])]
                segments.append(_Segment(seq, i, 1, pos))
            if batched:
                _current.step = _Step([], _Decodes.of(segments, pool), n, safe)
            else:
                _current.step = _Step(segments, None, n, safe)
            try:
                return packed_attention(_ProbeLayer, q, k, v, None)[0]
            finally:
                _current.step = None

        _decode_probe_cache[key] = torch.equal(attend(True), attend(False))
    return _decode_probe_cache[key]


_registered = False
_register_lock = threading.Lock()


def register_attention() -> None:
    global _registered
    with _register_lock:
        if not _registered:
            from transformers import AttentionInterface

            AttentionInterface.register(ATTN_NAME, packed_attention)
            _registered = True


def supports_packed(model: Any) -> bool:
    """Whether ``model`` routes attention through transformers' AttentionInterface."""
    return bool(getattr(model, "_supports_attention_backend", False)) and all(
        hasattr(m, "layer_idx") for m in _attention_modules(model)
    ) and bool(_attention_modules(model))


def _attention_modules(model: Any) -> list[Any]:
    return [m for name, m in model.named_modules() if name.endswith("self_attn")]


# --------------------------------------------------------------------------
# The engine
# --------------------------------------------------------------------------


@dataclass
class EngineStats:
    requests: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0
    steps: int = 0
    max_active: int = 0
    max_decodes: int = 0
    """Most one-row segments attended together in one step."""
    repacks: int = 0
    """Times the KV pool was rebuilt (rather than a free slot reused)."""


class Engine:
    """Continuous batching over one loaded model (see the module docstring)."""

    def __init__(
        self,
        model: Any,
        eos_ids: frozenset[int],
        *,
        max_batch: int = 8,
        chunk_tokens: int = 256,
        kv_cache_mb: float = 2048,
        prefix_cache: bool = True,
        prefix_cache_mb: float = 512,
        min_prefix: int = 16,
        batch_wait_ms: float = 5,
    ) -> None:
        if max_batch < 1:
            raise ValueError(f"conflict_eval: max_batch must be >= 1, got {max_batch}")
        self.model = model
        config = model.config
        self.eos_ids = eos_ids
        self.n_layers = config.num_hidden_layers
        self.n_kv = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
        self.head_dim = getattr(config, "head_dim", None) or (
            config.hidden_size // config.num_attention_heads
        )
        self.device = next(model.parameters()).device
        self.packed_linears = self.device.type == "cpu" and pack_linears(model)
        safe = probe_safe_rows(
            config.hidden_size,
            getattr(config, "intermediate_size", 4 * config.hidden_size),
            self.head_dim,
            next(model.parameters()).dtype,
            linears=not self.packed_linears,
        )
        self.exact_batching = safe is not None
        self.batched_decodes = safe is not None and decodes_batch_exactly(
            self.n_kv, config.num_attention_heads // self.n_kv, self.head_dim, safe
        )
        if safe is None:
            logger.warning(
                "conflict_eval: this BLAS gives batch-dependent matrix products; generating "
                "one request at a time without a prefix cache"
            )
            max_batch, prefix_cache = 1, False
            safe = tuple(range(1, 17))
        self.safe = safe
        self.max_batch = max_batch
        self.chunk_tokens = max(1, chunk_tokens)
        self.batch_wait = max(0.0, batch_wait_ms) / 1000
        """An idle engine's first step waits this long for more requests: samples started
        together (an eval's first batch) arrive about a millisecond apart, and one alone
        in the first step would be prefilled alone and the rest a step later."""
        self.bytes_per_token = self.n_layers * self.n_kv * (2 * self.head_dim + 1) * 4
        self.kv_budget = int(kv_cache_mb * 2**20)
        self.prefix_cache_enabled = prefix_cache
        self.prefix_budget = int(prefix_cache_mb * 2**20)
        self.min_prefix = min_prefix
        self.stats = EngineStats()
        self._pending: list[Request] = []
        self._active: list[_Seq] = []
        self._prefix: OrderedDict[int, tuple[tuple[int, ...], KV]] = OrderedDict()
        self._pool: KV = []
        """Per layer ``[slots, kv heads, C, head_dim (+1)]``: the active sequences' KV."""
        self._owners: list[_Seq | None] = []
        """Each slot's sequence (None: free)."""
        self._dirty: list[int] = []
        """Positions of each free slot that may hold a departed sequence's KV."""
        self._prefix_key = 0
        self._cv = threading.Condition()
        self._thread: threading.Thread | None = None

    # -- public --------------------------------------------------------------

    def submit(self, req: Request) -> concurrent.futures.Future:
        with self._cv:
            self._pending.append(req)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._loop, name="conflict_eval-engine", daemon=True
                )
                self._thread.start()
            self._cv.notify()
        return req.future

    def clear_prefix_cache(self) -> None:
        with self._cv:
            self._prefix.clear()

    # -- memory --------------------------------------------------------------

    def _capacity(self, req: Request) -> int:
        return math.ceil((len(req.prompt_ids) + req.max_new) / BLOCK) * BLOCK

    def _fits(self, capacity: int) -> bool:
        """Whether the pool, with one more sequence of ``capacity``, stays in budget.

        Every slot of the pool is as long as its longest sequence needs."""
        longest = max([s.need for s in self._active] + [capacity])
        return (len(self._active) + 1) * longest * self.bytes_per_token <= self.kv_budget

    def _sync_pool(self) -> None:
        """Give every active sequence a slot of the KV pool, free the slots of
        those that left.

        A joining sequence takes a free slot when the pool's slots are long
        enough: the slot's stale positions are zeroed and the reused prefix is
        copied in.  Otherwise, or when the pool has grown to more than twice
        what the active sequences need, it is rebuilt for them alone."""
        active = set(self._active)
        cap = self._pool[0][0].shape[2] if self._pool else 0
        for i, owner in enumerate(self._owners):
            if owner is not None and owner not in active:
                self._owners[i] = None  # a failed step may have written a chunk past n_cached
                self._dirty[i] = min(cap, owner.n_cached + self.chunk_tokens)
        joining = [seq for seq in self._active if seq.kv is None]
        if not joining:
            if not self._active and self._pool:
                self._rebuild()  # nothing runs: free the pool
            return
        free = [i for i, owner in enumerate(self._owners) if owner is None]
        longest = max(seq.need for seq in self._active)
        if (
            len(joining) > len(free)
            or longest > cap
            or len(self._owners) > 2 * len(self._active)
            or cap > 2 * longest
        ):
            self._rebuild()
            return
        for seq, i in zip(joining, free):
            dirty = self._dirty[i]
            for (k, v), (sk, sv) in zip(self._pool, seq.source or []):
                k[i, :, : seq.reused] = sk[:, : seq.reused]
                v[i, :, : seq.reused] = sv[:, : seq.reused]
            for k, v in self._pool if dirty > seq.reused else ():
                k[i, :, seq.reused : dirty] = 0.0
                v[i, :, seq.reused : dirty] = 0.0
            self._place(seq, i)

    def _rebuild(self) -> None:
        """A new KV pool, slot i for ``_active[i]``: a running sequence's KV is
        copied over, a new one's reused prefix comes from the prefix cache,
        every other position is zero.  For a moment the old and new pools both
        exist (at most twice the budget)."""
        active = list(self._active)
        pool: KV = []
        if active:
            n, cap = len(active), max(s.need for s in active)
            pool = [
                (
                    torch.zeros(n, self.n_kv, cap, self.head_dim, device=self.device),
                    torch.zeros(n, self.n_kv, cap, self.head_dim + 1, device=self.device),
                )
                for _ in range(self.n_layers)
            ]
        for i, seq in enumerate(active):
            source, upto = (seq.kv, seq.n_cached) if seq.kv is not None else (seq.source, seq.reused)
            if source is not None and upto:
                for (k, v), (sk, sv) in zip(pool, source):
                    k[i, :, :upto] = sk[:, :upto]
                    v[i, :, :upto] = sv[:, :upto]
        self._pool, self._owners, self._dirty = pool, [None] * len(active), [0] * len(active)
        for i, seq in enumerate(active):
            self._place(seq, i)
        self.stats.repacks += 1

    def _place(self, seq: _Seq, slot: int) -> None:
        seq.source = None
        seq.slot = slot
        seq.kv = [(k[slot], v[slot]) for k, v in self._pool]
        self._owners[slot] = seq

    def _lookup_prefix(self, prompt: list[int]) -> tuple[int, int | None]:
        best, best_key = 0, None
        for key, (tokens, _) in self._prefix.items():
            n = min(len(tokens), len(prompt) - 1)
            i = 0
            while i < n and tokens[i] == prompt[i]:
                i += 1
            if i > best:
                best, best_key = i, key
        if best < self.min_prefix:
            return 0, None
        return best, best_key

    def _store_prefix(self, seq: _Seq) -> None:
        n = seq.n_cached
        if not self.prefix_cache_enabled or n < self.min_prefix:
            return
        tokens = tuple(seq.tokens[:n])
        width = math.ceil(n / BLOCK) * BLOCK  # the pool slot is reused: keep a copy
        kv = [(k[:, :width].clone(), v[:, :width].clone()) for k, v in seq.kv or []]
        # entries this one extends are now redundant
        for key in [k for k, (t, _) in self._prefix.items() if len(t) <= n and tokens[: len(t)] == t]:
            del self._prefix[key]
        self._prefix_key += 1
        self._prefix[self._prefix_key] = (tokens, kv)
        total = sum(kv[0][0].shape[1] for _, kv in self._prefix.values()) * self.bytes_per_token
        while self._prefix and total > self.prefix_budget:
            _, (_, kv) = self._prefix.popitem(last=False)
            total -= kv[0][0].shape[1] * self.bytes_per_token

    def _admit(self) -> None:
        while self._pending and len(self._active) < self.max_batch:
            req = self._pending[0]
            cap = self._capacity(req)
            if self._active and not self._fits(cap):
                break  # memory bound: wait for a running sequence to finish
            self._pending.pop(0)
            if req.future.cancelled():
                continue
            reused, cached = 0, None
            if self.prefix_cache_enabled:
                reused, key = self._lookup_prefix(req.prompt_ids)
                if key is not None:
                    _, cached = self._prefix[key]
                    self._prefix.move_to_end(key)
            self._active.append(_Seq(req, cap, reused, cached))
            self.stats.requests += 1
            self.stats.prompt_tokens += len(req.prompt_ids)
            self.stats.reused_tokens += reused
        self.stats.max_active = max(self.stats.max_active, len(self._active))

    # -- loop ----------------------------------------------------------------

    def _loop(self) -> None:
        while True:
            with self._cv:
                # a request whose caller gave up (sample cancelled or timed out) stops now
                self._active = [s for s in self._active if not s.req.future.cancelled()]
                idle = not self._active
                self._admit()
                while not self._active:
                    self._sync_pool()
                    if not self._cv.wait(timeout=30):
                        if not self._pending:
                            self._thread = None
                            return  # idle: the thread ends, the next submit restarts it
                    self._admit()
                if idle and self.batch_wait:
                    deadline = time.monotonic() + self.batch_wait
                    while len(self._active) + len(self._pending) < self.max_batch:
                        left = deadline - time.monotonic()
                        if left <= 0:
                            break
                        self._cv.wait(timeout=left)
                    self._admit()
                self._sync_pool()
                active = list(self._active)
            try:
                finished = self._step(active)
            except BaseException as exc:  # fail every request in the step, keep serving
                logger.exception("conflict_eval: generation step failed")
                with self._cv:
                    for seq in active:
                        self._active.remove(seq)
                        if not seq.req.future.done():
                            seq.req.future.set_exception(exc)
                continue
            with self._cv:
                for seq, completion in finished:
                    self._active.remove(seq)
                    self._store_prefix(seq)
                    if not seq.req.future.done():
                        seq.req.future.set_result(completion)

    def _step(self, active: list[_Seq]) -> list[tuple[_Seq, Completion]]:
        # single-row work first (decodes, last prompt tokens), then prompt chunks
        # share the rest of the token budget; at least one sequence always moves
        plan: list[tuple[_Seq, int]] = []
        budget = self.chunk_tokens
        for seq in active:
            if len(seq.tokens) - seq.n_cached == 1:
                plan.append((seq, 1))
                budget -= 1
        for seq in active:
            remaining = len(seq.tokens) - seq.n_cached
            if remaining > 1:
                take = min(remaining, budget if plan else max(budget, 1))
                over = (seq.n_cached + take) % BLOCK
                if take < remaining and take > over:
                    take -= over  # end on a key-block boundary: each later chunk spans fewer blocks
                if take > 0:
                    plan.append((seq, take))
                    budget -= take
        ids: list[int] = []
        pos: list[int] = []
        segments: list[_Segment] = []
        logit_rows: list[int] = []
        needs_token: list[_Seq] = []
        for seq, take in plan:
            start = len(ids)
            ids.extend(seq.tokens[seq.n_cached : seq.n_cached + take])
            pos.extend(range(seq.n_cached, seq.n_cached + take))
            segments.append(_Segment(seq, start, take, seq.n_cached))
            if seq.n_cached + take == len(seq.tokens):
                logit_rows.append(start + take - 1)
                needs_token.append(seq)
        real_rows = len(ids)
        n_logits = len(logit_rows)
        first = logit_rows[0] if logit_rows else 0  # a prefill-only step needs no logits
        if self.packed_linears:  # every row is computed as if alone: no padding
            rows, keep = real_rows, logit_rows or [first]
        else:
            rows = pad_rows(real_rows, self.safe)
            keep = logit_rows + [first] * (pad_rows(max(n_logits, 1), self.safe) - n_logits)
        ids.extend([0] * (rows - real_rows))
        pos.extend([0] * (rows - real_rows))

        decodes = [seg for seg in segments if seg.n == 1]
        if len(decodes) > 1 and self.batched_decodes:  # one alone: the per-sequence path is quicker
            self.stats.max_decodes = max(self.stats.max_decodes, len(decodes))
            step = _Step([seg for seg in segments if seg.n > 1], _Decodes.of(decodes, self._pool), rows, self.safe)
        else:
            step = _Step(segments, None, rows, self.safe)
        _current.step = step
        try:
            with torch.inference_mode():
                out = self.model(
                    input_ids=torch.tensor([ids], device=self.device),
                    position_ids=torch.tensor([pos], device=self.device),
                    use_cache=False,
                    logits_to_keep=torch.tensor(keep, device=self.device),
                )
        finally:
            _current.step = None
        logits = out.logits[0, :n_logits].float()
        self.stats.steps += 1
        for seq, take in plan:
            seq.n_cached += take

        finished: list[tuple[_Seq, Completion]] = []
        for i, seq in enumerate(needs_token):
            token = self._pick(seq, logits[i])
            if seq.logits is not None:
                seq.logits.append(logits[i].clone())
            seq.tokens.append(token)
            new = seq.tokens[seq.n_prompt :]
            hit_eos = token in self.eos_ids
            stopped = bool(seq.req.stop_check and seq.req.stop_check(new))
            if hit_eos or stopped or len(new) >= seq.req.max_new:
                finished.append(
                    (
                        seq,
                        Completion(
                            new_ids=new,
                            hit_eos=hit_eos,
                            stopped=stopped,
                            reused_tokens=seq.reused,
                            seconds=time.monotonic() - seq.started,
                            logits=seq.logits,
                        ),
                    )
                )
        return finished

    def _pick(self, seq: _Seq, logits: torch.Tensor) -> int:
        if seq.generator is None:
            return int(torch.argmax(logits))
        req = seq.req
        logits = logits / float(req.temperature or 1.0)
        if req.top_k:
            kth = torch.topk(logits, min(req.top_k, logits.numel())).values[-1]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if req.top_p is not None and req.top_p < 1.0:
            sorted_logits, order = torch.sort(logits, descending=True)
            cumulative = torch.softmax(sorted_logits, dim=-1).cumsum(-1)
            drop = cumulative > req.top_p
            drop[1:] = drop[:-1].clone()
            drop[0] = False  # keep at least the top token
            logits = logits.masked_fill(torch.zeros_like(drop).scatter(0, order, drop), float("-inf"))
        probs = torch.softmax(logits, dim=-1)
        return int(torch.multinomial(probs, 1, generator=seq.generator))
