"""AtomR cost: LLM and retriever calls per question, and retrieval latency per source.

Run on demand (not in CI)::

    python benchmarks/atomr_calls.py [--n 20] [--model conflict_eval/smollm2]
        [--tree-tokens 512] [--operator-tokens 256] [--methods atomr,atomr_standard_rag]
        [--plans ../shared/data/atomr_released_trees/hotpotqa_trees.jsonl --keep-others]

Part 1 (AtomR Table 5): runs ``conflict_eval/atomr`` on the first ``n``
HotpotQA items of ``../shared/data/hotpotqa_ircot/sample.jsonl`` (text source:
BM25 over all records' paragraphs) with the offline model, for each method,
and reports per question: LLM calls (ModelEvents, via
``conflict_eval.report.accounting``), calls by step, retriever calls per source,
tokens, planner fallbacks, parse failures, token F1, and the repeated calls
AtomR no longer sends (``AtomRStore.reused_replies``: an answer prompt
already sent in the sample, e.g. Direct RAG after an Unknown Relate, whose
Figure 9 prompt is the Relate prompt; before, each was one more LLM call).
With ``--plans FILE`` AtomR replays the authors' released trees instead of
planning (the row is labelled ``atomr (released trees)``; the first ``n``
HotpotQA items that have a released tree), so the operators, fallbacks and
their repeats are exercised even with a model that cannot plan.

Part 2: retrieval latency per source, offline: ``text`` (BM25 over the
HotpotQA corpus, queried with the HotpotQA questions), ``kg`` (BlendQA triple
store, queried with BlendQA's bridging entity names plus "instance of"),
``web`` (CRAG example pages, queried with CRAG questions), k = 3; index build
time and median / p90 / mean query time.

Writes ``benchmarks/results/atomr_calls.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

from _common import DATA, REPO, RESULTS  # noqa: E402  (sets the offline environment)


UNKNOWN_REPLY = "So the answer is: (1) Paraphrase Answer: Unknown; (2) Answer List: []"
KNOWN_REPLY = 'So the answer is: (1) Paraphrase Answer: X; (2) Answer List: ["X"]'


def run_chunk(method: str, start: int, end: int, model: str, tree_tokens: int, operator_tokens: int,
              log_dir: str, plans: str | None = None, ids: list[str] | None = None) -> list[dict]:
    """Per-question rows for items ``start .. end-1`` (one Inspect eval); of ``ids`` when given."""
    from inspect_ai import eval as inspect_eval

    from conflict_eval.report.accounting import sample_cost

    if model == "scripted-unknown":  # every call answers Unknown (the case where fallbacks repeat prompts)
        from conflict_eval.testing import scripted_model

        model = scripted_model(lambda prompt: UNKNOWN_REPLY)
    elif model == "scripted-relate-unknown":  # Figure 9 prompts (Relate, Direct RAG) Unknown, others answer
        from conflict_eval.testing import scripted_model

        model = scripted_model(lambda prompt: UNKNOWN_REPLY if prompt.startswith("Please answer the question")
                               else KNOWN_REPLY)
    [log] = inspect_eval("conflict_eval/atomr", task_args={
        "dataset": "hotpotqa", "method": method, "path": str(DATA / "hotpotqa_ircot" / "sample.jsonl"),
        "tree_tokens": tree_tokens, "operator_tokens": operator_tokens, **({"plans": plans} if plans else {})},
        model=model, log_dir=log_dir, display="none", max_connections=1,
        **({"sample_id": ids[start:end]} if ids else {"limit": (start, end)}))
    if log.status != "success":
        raise SystemExit(f"{method}: eval failed: {log.error}")
    rows = []
    for s in log.samples:
        cost = sample_cost(s)
        store = s.store
        prefix = "AtomRStore" if method == "atomr" else "AtomRBaselineStore"
        rows.append({
            "id": s.id, "llm_calls": cost.calls,
            "llm_calls_by_step": store.get(f"{prefix}:llm_calls") or {"answer": cost.calls},
            "retriever_calls": store.get(f"{prefix}:retriever_calls") or {},
            "input_tokens": cost.input_tokens, "output_tokens": cost.output_tokens,
            "reused_replies": store.get("AtomRStore:reused_replies") or {},
            "plan_source": store.get("AtomRStore:plan_source"),
            "planner_fallback": store.get("AtomRStore:planner_fallback"),
            "plan_error": store.get("AtomRStore:plan_error"),
            "parse_failures": store.get("AtomRStore:parse_failures") or (
                {"answer": 1} if store.get("AtomRBaselineStore:parse_error") else {}),
            "prediction": s.output.completion,
            "f1": s.scores["atomr_qa"].value["f1"], "seconds": cost.seconds,
        })
    return rows


def with_released_tree(plans: str, relate: bool = False) -> list[str]:
    """Ids of the HotpotQA sample's items (in file order) whose question has a
    tree in ``plans`` (with ``relate``: a tree with a Relate leaf, where the
    Direct-RAG fallback can repeat the operator's prompt)."""
    def key(q: str) -> str:
        return " ".join(q.casefold().split())

    with open(plans, encoding="utf-8") as f:
        records = [json.loads(line) for line in f if line.strip()]
    planned = {key(r["question"]) for r in records
               if not relate or "relate(" in json.dumps(r["reasoning_tree"]).lower()}
    with open(DATA / "hotpotqa_ircot" / "sample.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r["question_id"] for r in rows if key(r["question_text"]) in planned]


def summarise(method: str, rows: list[dict], wall: float) -> dict:
    def mean(xs):
        return statistics.mean(xs) if xs else 0.0

    steps: dict[str, float] = {}
    for r in rows:
        for k, v in r["llm_calls_by_step"].items():
            steps[k] = steps.get(k, 0) + v / len(rows)
    sources = sorted({k for r in rows for k in r["retriever_calls"]})
    return {
        "method": method, "n": len(rows), "wall_seconds": round(wall, 1),
        "llm_calls_per_question": mean([r["llm_calls"] for r in rows]),
        "llm_calls_by_step_per_question": {k: round(v, 3) for k, v in sorted(steps.items())},
        "retriever_calls_per_question": {s: mean([r["retriever_calls"].get(s, 0) for r in rows]) for s in sources},
        "input_tokens_per_question": mean([r["input_tokens"] for r in rows]),
        "output_tokens_per_question": mean([r["output_tokens"] for r in rows]),
        "repeated_calls_not_sent_per_question": mean([sum(r.get("reused_replies", {}).values()) for r in rows]),
        "planner_fallback_rate": mean([1.0 if r["planner_fallback"] else 0.0 for r in rows]),
        "parse_failures_per_question": mean([sum(r["parse_failures"].values()) for r in rows]),
        "f1": mean([r["f1"] for r in rows]),
        "samples": rows,
    }


def latency(name: str, build, queries: list[str], k: int = 3) -> dict:
    t0 = time.perf_counter()
    src = build()
    build_s = time.perf_counter() - t0
    times, hits = [], []
    for q in queries:
        t = time.perf_counter()
        hits.append(len(src.search(q, k)))
        times.append((time.perf_counter() - t) * 1000)
    times.sort()
    return {"source": name, "index_seconds": round(build_s, 3), "queries": len(queries),
            "median_ms": round(statistics.median(times), 3),
            "p90_ms": round(times[int(0.9 * (len(times) - 1))], 3),
            "mean_ms": round(statistics.mean(times), 3),
            "mean_hits": round(statistics.mean(hits), 2),
            "size": getattr(src, "size", None)}


def retrieval_latency() -> list[dict]:
    from conflict_eval.retrieval.sources import KGSource, TextSource, WebPagesSource

    hot = DATA / "hotpotqa_ircot" / "sample.jsonl"
    blend = DATA / "blendqa" / "sample.jsonl"
    crag = DATA / "crag_example" / "sample.jsonl"
    hq = [json.loads(line)["question_text"] for line in hot.open(encoding="utf-8")]
    bq = [json.loads(line)["entity"] + " instance of" for line in blend.open(encoding="utf-8")]
    cq = [json.loads(line)["query"] for line in crag.open(encoding="utf-8")]
    return [
        latency("text (BM25, HotpotQA corpus)", lambda: TextSource(hot, "bm25"), hq),
        latency("kg (BlendQA triple store)", lambda: KGSource(blend), bq),
        latency("web (CRAG pre-fetched pages, BM25)", lambda: WebPagesSource(crag), cq * 10),
    ]


def to_markdown(result: dict) -> str:
    lines = [
        "# AtomR: LLM and retriever calls per question, retrieval latency per source",
        "",
        f"Model per row (default `{result['model']}`), the first HotpotQA items of the IRCoT sample "
        f"({result['methods'][-1]['n'] if result['methods'] else 0} done of {result['n_planned']} planned), text source only "
        f"(BM25, k=3), budgets tree {result['tree_tokens']} / operator {result['operator_tokens']} tokens "
        "(retries 1.5x / 2x). Machine: " + result["machine"] + ".",
        "",
        "| method | model | n | LLM calls / q | repeated calls not sent / q | LLM calls by step / q | retriever calls / q | input tok / q | output tok / q | planner fallback | parse failures / q | F1 | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in result["methods"]:
        steps = ", ".join(f"{k} {v:.2f}" for k, v in m["llm_calls_by_step_per_question"].items())
        rc = ", ".join(f"{k} {v:.2f}" for k, v in m["retriever_calls_per_question"].items()) or "0"
        reused = m.get("repeated_calls_not_sent_per_question")
        lines.append(f"| {m['method']} | {m.get('model', result['model'])} | {m['n']} | "
                     f"{m['llm_calls_per_question']:.2f} | "
                     f"{'n/a (not measured)' if reused is None else f'{reused:.2f}'} | {steps} | {rc} | "
                     f"{m['input_tokens_per_question']:.0f} | {m['output_tokens_per_question']:.0f} | "
                     f"{m['planner_fallback_rate']:.2f} | {m.get('parse_failures_per_question', 0):.2f} | "
                     f"{m['f1']:.3f} | {m['wall_seconds']} |")
    lines += ["", "AtomR Table 5 (GPT-4o, 500 HotpotQA questions): 3629 LLM calls and 1978 text retriever "
              "calls in total, i.e. 7.26 LLM and 3.96 retriever calls per question.", "",
              "| source | index build s | queries | median ms | p90 ms | mean ms | mean hits | size |",
              "|---|---|---|---|---|---|---|---|"]
    for r in result["retrieval"]:
        lines.append(f"| {r['source']} | {r['index_seconds']} | {r['queries']} | {r['median_ms']} | "
                     f"{r['p90_ms']} | {r['mean_ms']} | {r['mean_hits']} | {r['size']} |")
    lines += ["", result["note"], ""]
    return "\n".join(lines)


def write(args, methods: list[dict], retrieval: list[dict]) -> None:
    result = {
        "model": args.model, "n_planned": args.n, "tree_tokens": args.tree_tokens,
        "operator_tokens": args.operator_tokens,
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs shared with other jobs, "
                   f"Python {platform.python_version()}",
        "methods": methods,
        "retrieval": retrieval,
        "note": ("SmolLM2-135M almost never writes a parseable JSON tree, so most questions take the planner "
                 "fallback (Direct RAG on the root); the call counts therefore show the cost floor of the "
                 "pipeline with this model, not the paper's tree sizes. Wall times are on a shared, "
                 "heavily loaded machine. atomr_standard_rag answers with its own 256-token budget (one "
                 "Figure 9 call after one retrieval). 'atomr (released trees)' replays the authors' "
                 "released HotpotQA trees (plans=FILE) on the first sample items that have one, so "
                 "operators and their Direct-RAG fallbacks run; 'repeated calls not sent' counts the "
                 "answer prompts already sent in the sample (the fallback after a Relate that answered "
                 "Unknown or unparseably repeats the Relate prompt byte for byte), each of which the "
                 "code before this change sent again: LLM calls before = LLM calls + that column. "
                 "Rows from runs before the column existed show n/a. With SmolLM2 the Relate operator "
                 "is rarely reached (its [i] arguments mostly refer to unanswered nodes, an operator "
                 "failure before any call), so no repeat occurred in its rows. The scripted rows replay "
                 "the same 18 released trees that have a Relate leaf with a model that answers every "
                 "Figure 9 prompt (Relate, Direct RAG) Unknown and the others with an answer, the case "
                 "the issue saw with a strong model: 5.72 calls per question are sent, 2.28 identical "
                 "ones are not (35 Direct-RAG fallbacks after an Unknown Relate and 6 Relate calls "
                 "identical to an earlier one in the sample, of 18 questions): 8.00 before, 28.5% "
                 "fewer. With every answer Unknown the Relate leaves are seldom reached (0.06)."),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "atomr_calls.json").write_text(json.dumps(result, indent=1) + "\n")
    (RESULTS / "atomr_calls.md").write_text(to_markdown(result))
    print(to_markdown(result), flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=20)
    p.add_argument("--chunk", type=int, default=5, help="questions per eval; results are written after each")
    p.add_argument("--model", default="conflict_eval/smollm2",
                   help="an Inspect model; or scripted-unknown (every answer Unknown) or "
                        "scripted-relate-unknown (Figure 9 prompts, i.e. Relate and Direct RAG, answer "
                        "Unknown, the others answer): scripted models, with --plans, that count the calls "
                        "the fallbacks repeat in those cases")
    p.add_argument("--methods", default="atomr,atomr_standard_rag")
    p.add_argument("--tree-tokens", type=int, default=512)
    p.add_argument("--operator-tokens", type=int, default=256)
    p.add_argument("--log-dir", default="logs/benchmarks")
    p.add_argument("--plans", help="replay these trees (e.g. the authors' released hotpotqa_trees.jsonl)")
    p.add_argument("--relate-trees", action="store_true",
                   help="with --plans: only items whose tree has a Relate leaf (where a fallback can repeat)")
    p.add_argument("--keep-others", action="store_true",
                   help="keep the results of methods not run now from the existing results file")
    args = p.parse_args(argv)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    retrieval = retrieval_latency()
    methods: list[dict] = []
    previous = RESULTS / "atomr_calls.json"
    label = (lambda m: f"{m} (released trees)") if args.plans else (lambda m: m)
    ids = with_released_tree(args.plans, args.relate_trees)[: args.n] if args.plans else None
    if args.relate_trees:
        label = lambda m: f"{m} (released trees with a Relate leaf)"  # noqa: E731
    if args.model.startswith("scripted-"):
        base, how = label, {"scripted-unknown": "every answer Unknown",
                            "scripted-relate-unknown": "Relate answers Unknown"}[args.model]
        label = lambda m: f"{base(m)}, scripted: {how}"  # noqa: E731
    if args.keep_others and previous.is_file():  # keep other methods' rows from an earlier run
        prev = json.loads(previous.read_text())
        methods = [m for m in prev["methods"] if m["method"] not in [label(x) for x in args.methods.split(",")]]
        for m in methods:
            m.setdefault("model", prev["model"])
    for method in args.methods.split(","):
        rows: list[dict] = []
        t0 = time.perf_counter()
        for start in range(0, args.n, args.chunk):
            rows += run_chunk(method, start, min(start + args.chunk, args.n), args.model,
                              args.tree_tokens, args.operator_tokens, args.log_dir, args.plans, ids)
            write(args, methods + [{**summarise(label(method), rows, time.perf_counter() - t0),
                                    "model": args.model}], retrieval)
        methods.append({**summarise(label(method), rows, time.perf_counter() - t0), "model": args.model})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
