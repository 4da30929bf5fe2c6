"""Whole-eval wall time of the offline provider against Inspect's stock providers.

Run on demand (not in CI; needs the ``local`` and ``bench`` extras, ``hf`` for the hf arm).
The engine comparison of issue 46, in one command on a quiet machine::

    python benchmarks/local_throughput.py --rounds 4 --concurrency 1 4 --arms ours stock --stock-greedy --name engine_equal_work

Workload (issue 24): ``inspect eval conflict_eval/run -T method=cot -T
dataset=demo --limit 8 --max-tokens 64`` with ``--max-connections N
--max-samples N`` for N concurrent samples, each eval in a fresh process. The
figure is the eval's wall time from its log (``stats.completed_at -
stats.started_at``). **Equal work** (default; ``--natural`` turns it off): every arm
gets ``--logit-bias 0=-100,2=-100``, so SmolLM2's two end tokens (``<|endoftext|>``,
``<|im_end|>``) are never chosen and every request writes exactly 64 tokens: two
llama.cpp builds break near-ties differently, and without this one arm may write a
third more tokens than the other (checked: the output token totals are in the table).
Arms on the same GGUF (``SmolLM2-135M-Instruct.Q4_1.gguf``) and the same prompts:

* ``ours``: ``--model conflict_eval/smollm2`` with its defaults (xllamacpp);
* ``direct`` (with ``ours``, no eval of its own): the same requests as the ``ours`` eval
  sent (read from its log), sent straight to the engine (the provider's pool of
  xllamacpp servers, same threads) from N threads, no Inspect; its wall time against
  ours' sample-event span is the harness's overhead on the engine;
* ``ours-t1`` (not run by default): the same with ``-M threads=1``, one thread
  per server whatever the concurrency;
* ``stock``: Inspect's ``llama-cpp-python/`` provider against ``python -m
  llama_cpp.server`` on the same file (server defaults except ``--n_ctx 8192``,
  the model's window, as ours);
* ``hf``: Inspect's ``hf/`` provider on the same GGUF (``-M gguf_file=``:
  transformers de-quantises it to float32 at load), CPU, the GGUF's
  tokenizer saved as a Hugging Face directory (``-M tokenizer=``).

Pairing: for each round and concurrency the arms run back to back, their
order rotating, so background load on the shared machine hits all arms alike;
the 1-minute load average is recorded beside every run. Ratios are per round
and concurrency (ours / stock), then the median.

Also: single-stream decode speed of one llama.cpp server (1 thread and every core) against the Q4 weights' bandwidth limit -- greedy decoding
reads every weight once per token, so tokens/s <= memory bandwidth / GGUF
tensor bytes; bandwidth is measured here with a numpy copy (bytes read +
written per second, median of 5).

Writes ``benchmarks/results/local_throughput.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import REPO, RESULTS  # noqa: E402  (sets the offline environment)

WORKLOAD = ["conflict_eval/run", "-T", "method=cot", "-T", "dataset=demo", "--limit", "8", "--max-tokens", "64"]
NO_END = "0=-100,2=-100"  # SmolLM2's <|endoftext|> and <|im_end|>: never chosen, so every reply is max_tokens long
SERVER_BOOT = ("import sys, runpy; from local_throughput import avoid_amx_buffers; "
               "avoid_amx_buffers(); sys.argv = ['llama_cpp.server', *sys.argv[1:]]; "
               "runpy.run_module('llama_cpp.server', run_name='__main__')")


def avoid_amx_buffers() -> None:
    """For the stock arm's ``llama-cpp-python`` only: load models without llama.cpp's extra CPU
    buffer types on AMX CPUs, where its AMX matrix product crashes (ggml-org/llama.cpp#20824)
    for a native build; ``Llama()`` does not expose llama.cpp's ``use_extra_bufts``, so the
    default model parameters are wrapped. (xllamacpp's wheel is a generic build without AMX.)"""
    import llama_cpp.llama_cpp as lib

    try:
        amx = " amx_int8" in Path("/proc/cpuinfo").read_text()
    except OSError:
        amx = False
    if not amx or getattr(lib.llama_model_default_params, "_conflict_eval", False):
        return
    original = lib.llama_model_default_params

    def default_params():
        params = original()
        params.use_extra_bufts = False
        return params

    default_params._conflict_eval = True  # type: ignore[attr-defined]
    lib.llama_model_default_params = default_params


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(gguf: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    # llama.cpp's AMX kernel crashes on this CPU (see local_model.avoid_amx_buffers); the
    # same switch is applied to the stock server so both run the same llama.cpp kernels
    proc = subprocess.Popen([sys.executable, "-c", SERVER_BOOT, "--model", str(gguf), "--n_ctx", "8192",
                             "--host", "127.0.0.1", "--port", str(port)], cwd=Path(__file__).parent,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    import urllib.request

    for _ in range(300):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1).read()
            return proc, f"http://127.0.0.1:{port}/v1"
        except OSError:
            if proc.poll() is not None:
                raise SystemExit("python -m llama_cpp.server exited (install the 'bench' extra)")
            time.sleep(0.2)
    raise SystemExit("python -m llama_cpp.server did not come up in 60 s")


def hf_tokenizer_dir(gguf: Path, out: Path) -> Path:
    """The GGUF's tokenizer as a Hugging Face directory (Inspect's hf/ loads its tokenizer
    without ``gguf_file``; the model itself is read from the GGUF by transformers)."""
    from transformers import AutoTokenizer

    AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name).save_pretrained(out)
    return out


def _children_cpu(resource: Any) -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu_seconds(pid: int | None) -> float:
    """CPU seconds (user + system) used so far by a running process (Linux /proc), 0 without one."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_eval(arm: str, n: int, model: str, env: dict[str, str], log_dir: Path,
             model_args: list[str], server_pid: int | None = None) -> dict[str, Any]:
    from inspect_ai.log import list_eval_logs, read_eval_log

    before = {str(p.name) for p in list_eval_logs(str(log_dir))}
    load = os.getloadavg()[0]
    cmd = [sys.executable, "-m", "inspect_ai", "eval", *WORKLOAD, "--model", model, "--max-connections", str(n),
           "--max-samples", str(n), "--log-dir", str(log_dir), "--display", "none"]
    cmd += model_args
    import resource

    cpu_before = _cpu_seconds(server_pid) + _children_cpu(resource)
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    process_seconds = time.perf_counter() - started
    cpu = _cpu_seconds(server_pid) + _children_cpu(resource) - cpu_before
    new = [p for p in list_eval_logs(str(log_dir)) if str(p.name) not in before]
    if done.returncode != 0 or len(new) != 1:
        raise SystemExit(f"{arm} at {n}: inspect eval failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    log = read_eval_log(new[0])
    if log.status != "success" or len(log.samples or []) != 8:
        raise SystemExit(f"{arm} at {n}: eval status {log.status}: {log.error}")
    from datetime import datetime

    wall = (datetime.fromisoformat(log.stats.completed_at) - datetime.fromisoformat(log.stats.started_at))
    # the log's started_at/completed_at are whole seconds; the samples' events carry microseconds
    stamps = [e.timestamp for s in log.samples for e in s.events]
    usage = list(log.stats.model_usage.values())
    return {
        "log": log,
        "arm": arm, "concurrency": n, "eval_seconds": round(wall.total_seconds(), 2),
        "span_seconds": round((max(stamps) - min(stamps)).total_seconds(), 3),
        "process_seconds": round(process_seconds, 2), "cpu_seconds": round(cpu, 2),
        "load1_before": round(load, 2),
        "load1_after": round(os.getloadavg()[0], 2),
        "output_tokens": sum(u.output_tokens for u in usage),
        "completions": [s.output.completion for s in log.samples],
    }


def bandwidth_gbs() -> float:
    import numpy as np

    src = np.ones(64 * 2**20 // 8)
    dst = np.empty_like(src)
    rates = []
    for _ in range(5):
        t = time.perf_counter()
        np.copyto(dst, src)
        rates.append(2 * src.nbytes / (time.perf_counter() - t))
    return statistics.median(rates) / 1e9


def single_stream(gguf: Path, threads: int, tokens: int = 64) -> dict[str, Any]:
    """Decode tokens/s of one llama.cpp server (xllamacpp; llama.cpp's own timings), median of 3."""
    from conflict_eval.local_model import start_server

    server = start_server(gguf, threads)
    body = {"messages": [{"role": "user", "content": "Write a long story about a lighthouse keeper."}],
            "max_tokens": tokens, "temperature": 0.0, "cache_prompt": False, "logit_bias": [[0, -100], [2, -100]]}
    load = os.getloadavg()[0]
    rates = []
    for _ in range(3):
        out = server.handle_chat_completions(body)
        assert out["usage"]["completion_tokens"] == tokens, out["usage"]
        rates.append(out["timings"]["predicted_n"] / out["timings"]["predicted_ms"] * 1000)
    del server
    return {"threads": threads, "tokens": tokens, "tokens_per_s": round(statistics.median(rates), 1),
            "load1": round(load, 2)}


def direct_requests(log: Any) -> list[tuple[list[dict[str, str]], Any]]:
    """The (messages, config) of every model call of an ``ours`` eval, in sample order."""
    from conflict_eval.local_model import _messages

    calls = []
    for sample in log.samples:
        for event in sample.events:
            if event.event == "model":
                calls.append((_messages(event.input), event.config))
    return calls


def run_direct(gguf: Path, n: int, calls: list, cores: int) -> dict[str, Any]:
    """The same requests straight to the engine: the provider's pool (same servers and threads,
    same choice of server), N requests at a time from N threads, no Inspect."""
    from concurrent.futures import ThreadPoolExecutor

    from conflict_eval.local_model import MAX_DEFAULT_INSTANCES, _conversation_text, _Pool, request_body

    instances = min(cores, MAX_DEFAULT_INSTANCES)
    threads = max(1, cores // instances)
    pool = _Pool(gguf, instances, threads, 0, None, True, cores if cores > threads else None)
    if n == 1 and pool.solo_threads:  # start the every-core server before the clock, as the eval's model load
        pool.release(pool.acquire("", 1), "")
    else:  # servers start on demand: start all of them before the clock
        for server in [pool.acquire("") for _ in range(instances)]:
            pool.release(server, "")
    load = os.getloadavg()[0]

    def one(call):
        messages, config = call
        conversation = _conversation_text(messages)
        server = pool.acquire(conversation, n)
        try:
            out = server.handle_chat_completions(request_body(messages, config, config.max_tokens or 512))
        finally:
            pool.release(server, conversation)
        return out["choices"][0]["message"]["content"], out["usage"]["completion_tokens"]

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n) as workers:
        results = list(workers.map(one, calls))
    seconds = time.perf_counter() - started
    pool.close()
    return {"arm": "direct", "concurrency": n, "wall_seconds": round(seconds, 3), "load1_before": round(load, 2),
            "output_tokens": sum(t for _, t in results), "completions": [c for c, _ in results]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--arms", nargs="+", default=["ours", "stock", "hf"],
                        choices=["ours", "ours-t1", "stock", "hf"])
    parser.add_argument("--natural", action="store_true",
                        help="let replies end at the end token (default: equal work, end tokens suppressed)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="local_throughput")
    parser.add_argument("--stock-greedy", action="store_true",
                        help="send repeat_penalty=1.0 to the server (--extra-body), so that its greedy "
                        "decoding is plain argmax like ours (the server's default penalty is 1.1)")
    args = parser.parse_args()

    from conflict_eval.local_model import _cores, smollm2_gguf_path

    gguf = smollm2_gguf_path()
    started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    load_start = [round(x, 2) for x in os.getloadavg()]
    env = {**os.environ, "INSPECT_LOG_LEVEL": "warning"}
    cores = _cores()
    streams: list[dict[str, Any]] = []
    bw, weight_bytes = 0.0, 1
    runs: list[dict[str, Any]] = []
    server = None
    with tempfile.TemporaryDirectory() as tmp:
        models = {"ours": "conflict_eval/smollm2", "ours-t1": "conflict_eval/smollm2",
                  "stock": "llama-cpp-python/smollm2", "hf": f"hf/{gguf.parent}"}
        # ours-t1: one thread per context always (no every-core request alone, no tail rebalance)
        margs: dict[str, list[str]] = {"ours": [], "ours-t1": ["-M", "threads=1"], "stock": []}
        if args.stock_greedy:
            margs["stock"] = ["--extra-body", json.dumps({"repeat_penalty": 1.0})]
        if not args.natural:
            for arm in margs:
                margs[arm] += ["--logit-bias", NO_END]
        if "hf" in args.arms:
            tok = hf_tokenizer_dir(gguf, Path(tmp) / "hf-tokenizer")
            # do_sample=false: greedy like the other arms (Inspect's hf/ samples by default, and
            # transformers rejects temperature 0 when sampling)
            margs["hf"] = ["-M", "device=cpu", "-M", f"gguf_file={gguf.name}", "-M", f"tokenizer={tok}",
                           "-M", "do_sample=false"]
        if not args.natural and "hf" in margs:
            margs["hf"] += ["--logit-bias", NO_END]
        if "stock" in args.arms:
            server, base_url = start_server(gguf)
            env["LLAMA_CPP_PYTHON_BASE_URL"] = base_url
        try:
            k = 0
            for r in range(args.rounds):
                for n in args.concurrency:
                    arms = args.arms[k % len(args.arms):] + args.arms[:k % len(args.arms)]
                    k += 1
                    for arm in arms:
                        row = run_eval(arm, n, models[arm], env, Path(tmp) / "logs", margs[arm],
                                       server.pid if arm == "stock" else None)
                        row["round"] = r
                        log = row.pop("log")
                        runs.append(row)
                        print(json.dumps({x: v for x, v in row.items() if x != "completions"}), flush=True)
                        if arm == "ours":
                            direct = run_direct(gguf, n, direct_requests(log), cores)
                            direct["round"] = r
                            runs.append(direct)
                            print(json.dumps({x: v for x, v in direct.items() if x != "completions"}), flush=True)
                report(args, runs, streams, bw, weight_bytes, gguf, cores, started_at, load_start)
        finally:
            if server is not None:
                server.terminate()
                server.wait()
    # single-stream decode and bandwidth after the evals, so the evals start at once
    streams = [single_stream(gguf, 1)]
    if cores > 1:
        streams.append(single_stream(gguf, cores))
    bw = bandwidth_gbs()
    from gguf import GGUFReader

    weight_bytes = sum(int(t.n_bytes) for t in GGUFReader(str(gguf)).tensors)
    for s in streams:
        s["bandwidth_limit_tokens_per_s"] = round(bw * 1e9 / weight_bytes, 1)
        s["fraction_of_limit"] = round(s["tokens_per_s"] / s["bandwidth_limit_tokens_per_s"], 3)

    report(args, runs, streams, bw, weight_bytes, gguf, cores, started_at, load_start)


def report(args, runs, streams, bw, weight_bytes, gguf, cores, started_at, load_start) -> None:
    summary: dict[str, Any] = {}
    for n in args.concurrency:
        cell: dict[str, Any] = {}
        for arm in args.arms:
            cell[arm] = [x["eval_seconds"] for x in runs if x["arm"] == arm and x["concurrency"] == n]
            cell[f"{arm}_load1"] = [x["load1_before"] for x in runs if x["arm"] == arm and x["concurrency"] == n]
        for other in [a for a in args.arms if a != "ours"]:
            if "ours" in args.arms:
                ratios = [a / b for a, b in zip(cell["ours"], cell[other])]
                cell[f"ours_over_{other}"] = [round(x, 3) for x in ratios]
                cell[f"median_ours_over_{other}"] = round(statistics.median(ratios), 3) if ratios else None
                # finer figures, same pairs: event span, whole process, CPU seconds (server included)
                for key in ("span_seconds", "process_seconds", "cpu_seconds"):
                    pairs = [(a[key], b[key]) for a, b in zip(
                        [x for x in runs if x["arm"] == "ours" and x["concurrency"] == n],
                        [x for x in runs if x["arm"] == other and x["concurrency"] == n])]
                    fine = [a / b for a, b in pairs if b]
                    if fine:
                        cell[f"{key}_ours_over_{other}"] = {
                            "median": round(statistics.median(fine), 3),
                            "range": [round(min(fine), 3), round(max(fine), 3)],
                            "ours": [a for a, _ in pairs], other: [b for _, b in pairs]}
        same = [x["completions"] for x in runs if x["arm"] == "ours" and x["concurrency"] == n]
        cell["ours_replies_identical_across_rounds"] = all(c == same[0] for c in same)
        for arm in [*args.arms, "direct"]:
            cell[f"{arm}_output_tokens"] = [x["output_tokens"] for x in runs if x["arm"] == arm and x["concurrency"] == n]
        ours_runs = [x for x in runs if x["arm"] == "ours" and x["concurrency"] == n]
        direct_runs = [x for x in runs if x["arm"] == "direct" and x["concurrency"] == n]
        if direct_runs:
            overhead = [o["span_seconds"] / d["wall_seconds"] for o, d in zip(ours_runs, direct_runs)]
            cell["ours_span_over_direct"] = {"median": round(statistics.median(overhead), 3),
                                             "range": [round(min(overhead), 3), round(max(overhead), 3)],
                                             "ours": [o["span_seconds"] for o in ours_runs],
                                             "direct": [d["wall_seconds"] for d in direct_runs],
                                             "direct_load1": [d["load1_before"] for d in direct_runs]}
            cell["direct_replies_equal_ours"] = all(o["completions"] == d["completions"]
                                                    for o, d in zip(ours_runs, direct_runs))
        summary[str(n)] = cell
    ours_all = [x["completions"] for x in runs if x["arm"] == "ours"]
    from importlib.metadata import PackageNotFoundError, version

    def _version(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    result = {
        "benchmark": "local_throughput", "created_at": started_at,
        "engine": f"ours: llama.cpp through xllamacpp {_version('xllamacpp')}; stock: llama-cpp-python "
                  f"{_version('llama-cpp-python')}",
        "equal_work": not args.natural,
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
        "workload": "inspect eval " + " ".join(WORKLOAD) + " --max-connections N --max-samples N",
        "gguf": gguf.name, "gguf_tensor_bytes": weight_bytes,
        "machine": {"cpu_count": os.cpu_count(), "usable_cores": cores, "platform": platform.platform()},
        "loadavg_start": load_start, "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "bandwidth_gb_s": round(bw, 2), "single_stream": streams, "summary": summary,
        "ours_replies_identical_at_every_concurrency": all(c == ours_all[0] for c in ours_all),
        "runs": runs,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{args.name}.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = [
        "# Offline provider on llama.cpp: whole-eval wall time against Inspect's stock providers",
        "",
        f"Generated {started_at} by `python benchmarks/{result['command']}` (git {_git()}).",
        f"Engines: {result['engine']}. "
        + ("Equal work: end tokens suppressed (`--logit-bias 0=-100,2=-100`), every request writes "
           "`--max-tokens` tokens (output token totals below)." if not args.natural else
           "Natural stops (`--natural`): the arms may write different numbers of tokens."),
        f"Workload: `{result['workload']}`, each eval a fresh process; figure = the log's "
        "completed_at - started_at. Same GGUF for every arm "
        f"({gguf.name}); `stock` = Inspect's `llama-cpp-python/` provider against `python -m "
        "llama_cpp.server` (defaults, `--n_ctx 8192`); `hf` = Inspect's `hf/` provider on the same "
        "GGUF (`-M gguf_file=`, de-quantised to float32 by transformers). Arms run back to back per round and "
        "concurrency, order rotating.",
        f"Machine: {os.cpu_count()} CPUs shared with other engineers' jobs; 1-minute load average "
        f"{load_start} at start, {result['loadavg_end']} at end, and beside every figure below.",
        "",
        "| concurrent samples | " + " | ".join(f"{a} s (load)" for a in args.arms)
        + (" | ours / stock (median) | ours / hf (median) |" if "ours" in args.arms else " |"),
        "|---|" + "---|" * len(args.arms) + ("---|---|" if "ours" in args.arms else ""),
    ]
    for n, cell in summary.items():
        parts = [", ".join(f"{s} ({ld})" for s, ld in zip(cell[a], cell[f"{a}_load1"])) for a in args.arms]
        row = f"| {n} | " + " | ".join(parts)
        if "ours" in args.arms:
            row += (f" | **{cell.get('median_ours_over_stock', 'n/a')}** {cell.get('ours_over_stock', '')} "
                    f"| {cell.get('median_ours_over_hf', 'n/a')} {cell.get('ours_over_hf', '')} |")
        lines.append(row + ("" if "ours" in args.arms else " |"))
    lines += [
        "",
        "Finer figures for the same pairs (ours / stock, median [range]): `span` = first to last sample "
        "event (microsecond timestamps), `process` = the whole `inspect eval` process, `cpu` = CPU seconds "
        "of the eval process plus, for stock, of the server:",
        "",
        "| concurrent samples | span | process | cpu |",
        "|---|---|---|---|",
    ]
    for n, cell in summary.items():
        parts = []
        for key in ("span_seconds", "process_seconds", "cpu_seconds"):
            f = cell.get(f"{key}_ours_over_stock")
            parts.append(f"{f['median']} [{f['range'][0]}-{f['range'][1]}] (ours {f['ours']}, stock {f['stock']})"
                         if f else "n/a")
        lines.append(f"| {n} | " + " | ".join(parts) + " |")
    lines += [
        "",
        "Output tokens per eval, and the harness's overhead on the engine: `direct` = the same requests "
        "(from the ours eval's log) sent straight to the provider's pool of xllamacpp servers from N "
        "threads, no Inspect; ours' sample-event span / direct's wall time, median [range]:",
        "",
        "| concurrent samples | output tokens per arm | ours span / direct (median [range]) | direct s (load) |",
        "|---|---|---|---|",
    ]
    for n, cell in summary.items():
        toks = "; ".join(f"{a} {cell.get(f'{a}_output_tokens')}" for a in [*args.arms, "direct"]
                         if cell.get(f"{a}_output_tokens"))
        d = cell.get("ours_span_over_direct")
        lines.append(f"| {n} | {toks} | " + (f"{d['median']} [{d['range'][0]}-{d['range'][1]}] | "
                                              + ", ".join(f"{w} ({ld})" for w, ld in zip(d["direct"], d["direct_load1"]))
                                              if d else "n/a | n/a") + " |")
    lines += [
        "",
        f"Our replies identical in every run and at every concurrency: "
        f"{result['ours_replies_identical_at_every_concurrency']}.",
        "",
        "Single-stream decode (one xllamacpp server, greedy, 64 tokens, median of 3) against the Q4 weights' "
        f"bandwidth limit ({weight_bytes / 2**20:.1f} MiB of GGUF tensors; numpy-copy bandwidth "
        f"{bw:.1f} GB/s):",
        "",
        "| threads | tokens/s | limit tokens/s | fraction of limit | load |",
        "|---|---|---|---|---|",
        *[f"| {s['threads']} | {s['tokens_per_s']} | {s['bandwidth_limit_tokens_per_s']} "
          f"| {s['fraction_of_limit']} | {s['load1']} |" for s in streams],
    ]
    (args.out / f"{args.name}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))



def _git() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True,
                              text=True).stdout.strip() or "unknown"
    except OSError:
        return "unknown"


if __name__ == "__main__":
    main()
