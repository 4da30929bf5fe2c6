"""ConflictScore wall time and grader calls vs the connection limit, and the
call savings of the cheaper variants (issue 4 benchmark).

A local HTTP grader (an OpenAI-compatible ``/v1/chat/completions`` endpoint,
``ThreadingHTTPServer``) answers every request after a fixed delay; an
Inspect provider ``delayedhttp/<name>`` defined here posts to it over real
sockets (the ``openai`` client is not installed here, so the provider speaks
the minimal HTTP itself). The grader's replies are deterministic: the
decomposition returns one claim per response sentence, each label is chosen
from a hash of (claim, document).

Each sample is a response of 5-10 claims scored against 10 documents (real
MacNoise passages when ``../shared/data`` is present). Samples run one at a
time (``max_samples=1``) so the timing of one sample's claim x document
fan-out is what is measured:

* sequential time = grader calls x delay;
* ideal time at ``c`` connections = per sample (1 decomposition round +
  ceil(claims x docs / c) labelling rounds) x delay;
* speed-up = sequential / measured; efficiency = ideal / measured.

The harness itself (Inspect's sample loop, one model event per call, log
writing) costs CPU time that on a loaded shared machine is comparable to the
delay, so every configuration is also run with a zero delay; "net" columns
subtract that harness time to isolate the waiting that concurrency removes.
A warm-up run (discarded) comes first.

    python benchmarks/conflictscore_concurrency.py [--delay 0.25]

Writes benchmarks/results/conflictscore_concurrency.{json,md}.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import math
import os
import platform
import re
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ModelAPI, ModelOutput, ModelUsage, modelapi
from inspect_ai.solver import Generate, TaskState, solver

from conflict_eval.report.accounting import log_costs
from conflict_eval.scorers.conflictscore.scorer import conflictscore

RESULTS = Path(__file__).parent / "results"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data"
LABELS = ("SUPPORTS", "CONTRADICTS", "IRRELEVANT")


# --------------------------------------------------------------------------
# the delayed grader server


def grader_reply(prompt: str) -> str:
    if prompt.startswith("Instruction: Break down"):
        report = prompt.split("Report: ", 1)[1].split("\n\nPlease identify", 1)[0]
        claims = [s for s in re.split(r"(?<=\.)\s+", report) if s]
        m = re.search(r"only the (\d+) most salient", prompt)
        return "Claims:\n" + "\n".join(claims[: int(m.group(1))] if m else claims)
    claim = prompt.split("Claim to evaluate", 1)[1].split("Document", 1)[0]
    if "Documents to evaluate against" in prompt:
        n = int(re.search(r"numbered 1 to (\d+)", prompt).group(1))
        return json.dumps([{"document": j + 1, "answer": _label(claim, str(j))} for j in range(n)])
    doc = prompt.split("Document to evaluate against", 1)[1].split("</document>", 1)[0]
    return json.dumps({"document_snippet": doc[:40], "reasoning": "benchmark", "answer": _label(claim, doc)})


def _label(claim: str, doc: str) -> str:
    return LABELS[hashlib.sha1((claim + doc).encode()).digest()[0] % 3]


class Server:
    def __init__(self, delay: float):
        self.delay, self.active, self.peak, self.requests = delay, 0, 0, 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with lock:
                    outer.active += 1
                    outer.requests += 1
                    outer.peak = max(outer.peak, outer.active)
                time.sleep(outer.delay)
                text = grader_reply(body["messages"][-1]["content"])
                with lock:
                    outer.active -= 1
                data = json.dumps({"choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                                "finish_reason": "stop"}],
                                   "usage": {"prompt_tokens": len(body["messages"][-1]["content"].split()),
                                             "completion_tokens": len(text.split())}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        ThreadingHTTPServer.request_queue_size = 128
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reset(self):
        self.active = self.peak = self.requests = 0


PORT = {"value": 0}


@modelapi(name="delayedhttp")
class DelayedHTTP(ModelAPI):
    """Posts chat requests to the local benchmark server (one socket per call)."""

    def __init__(self, model_name, base_url=None, api_key=None, config=None, **kwargs):
        from inspect_ai.model import GenerateConfig

        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

    async def generate(self, input, tools, tool_choice, config):
        body = json.dumps({"model": self.model_name,
                           "messages": [{"role": m.role, "content": m.text} for m in input]}).encode()
        reader, writer = await asyncio.open_connection("127.0.0.1", PORT["value"])
        writer.write(b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        await writer.drain()
        raw = await reader.read()
        writer.close()
        data = json.loads(raw.split(b"\r\n\r\n", 1)[1])
        out = ModelOutput.from_content(self.model_name, data["choices"][0]["message"]["content"])
        u = data["usage"]
        out.usage = ModelUsage(input_tokens=u["prompt_tokens"], output_tokens=u["completion_tokens"],
                               total_tokens=u["prompt_tokens"] + u["completion_tokens"])
        return out

    def max_connections(self) -> int:
        return 32


# --------------------------------------------------------------------------
# data and runs


def documents() -> list[str]:
    path = SHARED / "macnoise_fewshot" / "sample.jsonl"
    if path.is_file():
        docs = [c["text"] for line in path.open() for c in json.loads(line)["ctxs"]]
        return docs[:10]
    return [f"Synthetic document {i} about topic {i % 3}." for i in range(10)]


CLAIM_COUNTS = (5, 8, 10)


def samples() -> list[Sample]:
    docs = documents()
    out = []
    for n in CLAIM_COUNTS:
        response = " ".join(f"Claim number {i + 1} of a {n}-claim response states fact {i}." for i in range(n))
        out.append(Sample(id=f"claims-{n}", input="respond", metadata={"documents": docs, "response": response}))
    return out


@solver
def canned_response():
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = ModelOutput.from_content("canned", state.metadata["response"])
        return state

    return solve


def run(server: Server, connections: int, log_dir: str, **opts) -> dict:
    server.reset()
    task = Task(dataset=MemoryDataset(samples()), solver=canned_response(), scorer=conflictscore(**opts))
    start = time.perf_counter()
    [log] = inspect_eval(task, model="delayedhttp/grader", max_connections=connections, max_samples=1,
                         log_dir=log_dir, display="none")
    wall = time.perf_counter() - start
    assert log.status == "success", log.error
    calls = sum(c.calls for c in log_costs(log))
    scorer_calls = sum(s.scores["conflictscore"].value["grader_calls"] for s in log.samples)
    assert calls == scorer_calls == server.requests, (calls, scorer_calls, server.requests)
    return {"connections": connections, "options": opts, "wall_s": wall, "grader_calls": calls,
            "peak_concurrent_requests": server.peak,
            "claims": {s.id: s.scores["conflictscore"].value["claims"] for s in log.samples}}


def ideal_seconds(claims: list[int], docs: int, connections: int, delay: float) -> float:
    return sum(1 + math.ceil(n * docs / connections) for n in claims) * delay


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--delay", type=float, default=0.5)
    args = parser.parse_args()
    server = Server(args.delay)
    PORT["value"] = server.port
    n_docs = len(documents())
    results: dict = {"delay_s": args.delay, "documents": n_docs, "claims_per_sample": list(CLAIM_COUNTS),
                     "platform": platform.platform(), "python": platform.python_version()}
    with tempfile.TemporaryDirectory() as log_dir:
        server.delay = 0.0
        run(server, 32, log_dir)  # warm-up, discarded
        rows = []
        for c in (1, 8, 32):
            server.delay = 0.0
            zero = run(server, c, log_dir)
            server.delay = args.delay
            r = run(server, c, log_dir)
            r["zero_delay_wall_s"] = zero["wall_s"]
            r["net_s"] = max(r["wall_s"] - zero["wall_s"], 1e-9)
            r["sequential_s"] = r["grader_calls"] * args.delay
            r["ideal_s"] = ideal_seconds(list(CLAIM_COUNTS), n_docs, c, args.delay)
            r["speedup_vs_sequential"] = r["sequential_s"] / r["wall_s"]
            r["efficiency_vs_ideal"] = r["ideal_s"] / r["wall_s"]
            r["net_speedup_vs_sequential"] = r["sequential_s"] / r["net_s"]
            r["net_efficiency_vs_ideal"] = r["ideal_s"] / r["net_s"]
            rows.append(r)
            print(json.dumps(r))
        results["pairwise"] = rows
        variants = []
        full = rows[1]["grader_calls"]
        for name, opts in (("full (atomic, pairwise)", {}), ("whole response as one claim", {"claims": "whole"}),
                           ("3 most salient claims", {"claims": "salient", "k": 3}),
                           ("all documents in one call", {"labelling": "all_docs"})):
            r = run(server, 8, log_dir, **opts)
            r["variant"] = name
            r["call_saving_vs_full"] = 1 - r["grader_calls"] / full
            variants.append(r)
            print(json.dumps(r))
        results["variants_at_8_connections"] = variants
    RESULTS.mkdir(exist_ok=True)
    lines = [
        "# ConflictScore: concurrency and cheaper variants",
        "",
        f"Grader: local HTTP server answering after {args.delay} s; {len(CLAIM_COUNTS)} responses of "
        f"{', '.join(map(str, CLAIM_COUNTS))} claims x {n_docs} documents, one sample at a time. "
        f"Machine: shared 2-core CPU ({results['platform']}), load during the run noted below. "
        "`net` = wall minus the same run at zero delay (harness time). The harness work partly overlaps "
        "the waiting, so `net` is an approximation and can beat the ideal (efficiency > 100%).",
        "",
        "| max_connections | grader calls | wall (s) | zero-delay wall (s) | net (s) | sequential (s) | ideal (s) "
        "| speed-up vs sequential (wall / net) | efficiency vs ideal (wall / net) | peak concurrent requests |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(f"| {r['connections']} | {r['grader_calls']} | {r['wall_s']:.2f} | {r['zero_delay_wall_s']:.2f} | "
                     f"{r['net_s']:.2f} | {r['sequential_s']:.2f} | {r['ideal_s']:.2f} | "
                     f"{r['speedup_vs_sequential']:.2f}x / {r['net_speedup_vs_sequential']:.2f}x | "
                     f"{r['efficiency_vs_ideal']:.0%} / {r['net_efficiency_vs_ideal']:.0%} | "
                     f"{r['peak_concurrent_requests']} |")
    lines += ["", "Cheaper variants (max_connections 8):", "",
              "| variant | grader calls | call saving vs full | wall (s) |", "|---|---|---|---|"]
    for r in variants:
        lines.append(f"| {r['variant']} | {r['grader_calls']} | {r['call_saving_vs_full']:.0%} | {r['wall_s']:.2f} |")
    load = os.getloadavg()
    results["load_average_at_end"] = load
    lines.append(f"\nLoad average at the end of the run: {load[0]:.1f} (1 min), {load[2]:.1f} (15 min) on 2 cores.")
    (RESULTS / "conflictscore_concurrency.json").write_text(json.dumps(results, indent=2))
    (RESULTS / "conflictscore_concurrency.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
