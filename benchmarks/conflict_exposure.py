"""Conflict Exposure: corpus build time, retrieval latency, and LLM calls/tokens per question.

Run on demand::

    python benchmarks/conflict_exposure.py [--questions 3] [--max-tokens 32] \
        [--kb KB.json] [--dense-docs N] [--method-retriever bm25]

1. **Corpus**: load the shared HotpotQA sample (333 records, IRCoT format) and
   pool its paragraphs; then build a polluted KB (all three types) for
   ``--questions`` questions with the real offline model
   (``conflict_eval/smollm2``), timing both.
2. **Retrieval**: index the polluted corpus (pollution ``all``) with BM25 and
   the dense all-MiniLM-L6-v2 backend; time the index and the per-query
   latency over the first 100 questions (one ``search`` call each, k=5), and
   the word-embedding question rewriting. ``--dense-docs N`` indexes only the
   first N documents densely (on a loaded shared machine the full corpus can
   take half an hour on CPU); documents/s is reported either way.
3. **Cost per question**: every method and variant on the questions of the KB
   (``--kb`` reuses an existing KB file, else the one just built) with the
   offline model, greedy, ``--max-tokens`` per call, retrieval with
   ``--method-retriever`` (calls and tokens do not depend on it); LLM calls and
   tokens per sample read from the Inspect logs with
   :mod:`conflict_eval.report.accounting`. ACC/KRC on so few questions with a 135M
   model say only that the pipeline runs, nothing about the methods.

4. **Negatives** (``--negatives``, or only this with ``--negatives-only``):
   each of Conflict Exposure, RobustRAG (LLM aggregation) and AstuteRAG with
   ``negatives=true``, once with the two samples of a question sharing their
   calls (the default) and once with ``share_calls=false`` (what every
   negatives run cost before); calls, tokens and wall time per *question*,
   read from the logs. ``--negatives-model scripted`` uses the zero-latency
   scripted model (calls and tokens only, no meaningful time).

Everything is offline. Writes ``benchmarks/results/conflict_exposure.{json,md}``
(``--negatives-only``: ``conflict_exposure_negatives.{json,md}``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("CONFLICT_EVAL_OFFLINE", "1")

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO.parent / "shared" / "data" / "hotpotqa_ircot" / "sample.jsonl"
RESULTS = REPO / "benchmarks" / "results"
MODEL = "conflict_eval/smollm2"

VARIANTS = [
    ("standard_rag", "standard_rag", {}),
    ("conflict_exposure", "conflict_exposure", {}),
    ("w/o conflict exposure", "conflict_exposure", {"exposure": False}),
    ("w/o expansion", "conflict_exposure", {"expansion": "none"}),
    ("ReAns (no exposure)", "conflict_exposure", {"expansion": "reans", "exposure": False}),
    ("ReKnow (no exposure)", "conflict_exposure", {"expansion": "reknow", "exposure": False}),
    ("robustrag (llm)", "robustrag", {"aggregation": "llm"}),
    ("robustrag (keyword)", "robustrag", {"aggregation": "keyword"}),
    ("astuterag", "astuterag", {}),
]


def timed(fn, *args, **kwargs):
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--questions", type=int, default=3)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--kb", help="evaluate the methods on this KB file instead of the one built here")
    ap.add_argument("--dense-docs", type=int, help="index only the first N documents densely")
    ap.add_argument("--method-retriever", default="bm25", choices=["bm25", "dense"])
    ap.add_argument("--negatives", action="store_true", help="also measure negatives=true with/without sharing")
    ap.add_argument("--negatives-only", action="store_true", help="only the negatives measurement (needs --kb)")
    ap.add_argument("--negatives-model", default=MODEL, help="model for the negatives measurement")
    args = ap.parse_args()
    if args.negatives_only:
        if not args.kb:
            ap.error("--negatives-only needs --kb KB.json")
        out = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
               "model": args.negatives_model, "max_tokens": args.max_tokens, "kb": Path(args.kb).name,
               "questions": args.questions, "method_retriever": args.method_retriever,
               "negatives": negatives(Path(args.kb), args)}
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "conflict_exposure_negatives.json").write_text(json.dumps(out, indent=1) + "\n")
        (RESULTS / "conflict_exposure_negatives.md").write_text(render_negatives(out))
        return

    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from conflict_eval.report.accounting import log_costs, summarise
    from conflict_eval.plugins.conflict_exposure.rewrite import default_rewriter
    from conflict_eval.plugins.polluted_kb.build import build_polluted_kb, load_hotpotqa, pool_corpus
    from conflict_eval.kb.format import save_kb
    from conflict_eval.retrieval import make_retriever

    out: dict = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
                 "source": str(SOURCE.relative_to(REPO.parent)), "model": MODEL,
                 "questions": args.questions, "max_tokens": args.max_tokens,
                 "method_retriever": args.method_retriever}

    # 1. corpus
    records, t_load = timed(load_hotpotqa, SOURCE)
    (clean, _, dupes), t_pool = timed(pool_corpus, records)
    kb, t_build = timed(build_polluted_kb, SOURCE, MODEL, limit=args.questions)
    tmp = Path(tempfile.mkdtemp())
    kb_path = save_kb(kb, tmp / "kb.json")
    injected = [d for d in kb.documents if d.origin != "clean"]
    out["corpus"] = {
        "records": len(records), "clean_documents": len(clean), "duplicate_paragraphs": dupes,
        "load_seconds": round(t_load, 3), "pool_seconds": round(t_pool, 3),
        "kb_build_seconds_with_model": round(t_build, 2),
        "kb_build_seconds_per_question": round(t_build / args.questions, 2),
        "injected_documents": {t: sum(d.origin == t for d in injected) for t in ("I", "II", "III")},
        "targets": {q.id: q.target for q in kb.questions},
        "failures": {q.id: q.failures for q in kb.questions if q.failures},
        "kb_file_bytes": kb_path.stat().st_size,
    }
    print(json.dumps(out["corpus"], indent=1))
    if args.kb:
        kb_path = Path(args.kb)
        out["methods_kb"] = str(kb_path)

    # 2. retrieval
    corpus = [{"id": d.id, "text": d.text, "title": d.title} for d in kb.corpus("all")]
    queries = [r.question for r in records[:100]]
    out["retrieval"] = {"corpus_documents": len(corpus), "queries": len(queries), "k": 5}
    for name in ("bm25", "dense"):
        r = make_retriever(name)
        docs = corpus
        if name == "dense":
            _, t_model = timed(lambda: r.model)
            out["retrieval"]["dense_model_load_seconds"] = round(t_model, 2)
            docs = corpus[: args.dense_docs] if args.dense_docs else corpus
        _, t_index = timed(r.index, docs)
        lat = []
        for q in queries:
            _, t = timed(r.search, q, 5)
            lat.append(t * 1000)
        _, t_batch = timed(r.search_many, queries, 5)
        out["retrieval"][name] = {
            "indexed_documents": len(docs), "documents_per_second": round(len(docs) / t_index, 1),
            "index_seconds": round(t_index, 2), "query_ms_mean": round(statistics.mean(lat), 2),
            "query_ms_median": round(statistics.median(lat), 2),
            "batch_ms_per_query": round(t_batch * 1000 / len(queries), 2),
        }
    rw, t_rw_load = timed(default_rewriter)
    _, t_rw = timed(lambda: [rw.rewrite(q) for q in queries])
    out["retrieval"]["rewrite"] = {"load_seconds": round(t_rw_load, 2),
                                   "ms_per_question": round(t_rw * 1000 / len(queries), 2),
                                   "example": [queries[0], rw.rewrite(queries[0])]}
    print(json.dumps(out["retrieval"], indent=1))

    # 3. cost per question
    out["methods"] = {}
    for label, method, options in VARIANTS:
        t = time.perf_counter()
        [log] = inspect_eval("conflict_eval/conflict_exposure",
                             task_args={"path": str(kb_path), "method": method,
                                        "retriever": args.method_retriever, **options},
                             model=MODEL, max_tokens=args.max_tokens, log_dir=str(tmp / "logs"),
                             display="none")
        seconds = time.perf_counter() - t
        log = read_eval_log(log.location)
        costs = log_costs(log)
        scores = {s.name: list(s.metrics.values())[0].value for s in (log.results.scores if log.results else [])}
        out["methods"][label] = {"method": method, "options": options, "status": log.status,
                                 "cost": summarise(costs), "calls_per_sample": [c.calls for c in costs],
                                 "wall_seconds": round(seconds, 1), "scores": scores}
        print(label, json.dumps(out["methods"][label]))

    if args.negatives:
        out["negatives"] = negatives(kb_path, args)

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "conflict_exposure.json").write_text(json.dumps(out, indent=1) + "\n")
    (RESULTS / "conflict_exposure.md").write_text(render(out) + (render_negatives(out) if "negatives" in out else ""))


NEGATIVE_METHODS = [("conflict_exposure", "conflict_exposure", {}),
                    ("robustrag (llm)", "robustrag", {"aggregation": "llm"}),
                    ("astuterag", "astuterag", {})]


def negatives(kb_path: Path, args) -> dict:
    """negatives=true per question, with and without shared calls (same KB, model and questions)."""
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from conflict_eval.report.accounting import log_costs

    model = args.negatives_model
    if model == "scripted":
        model = "scripted/bench"
    tmp = Path(tempfile.mkdtemp())
    result: dict = {}
    for label, method, options in NEGATIVE_METHODS:
        result[label] = {}
        for share in (False, True):
            t = time.perf_counter()
            [log] = inspect_eval("conflict_eval/conflict_exposure",
                                 task_args={"path": str(kb_path), "method": method, "negatives": True,
                                            "share_calls": share, "retriever": args.method_retriever,
                                            **options},
                                 model=model, max_tokens=args.max_tokens, limit=2 * args.questions,
                                 log_dir=str(tmp / "logs"), display="none",
                                 **({"model_args": {"reply": "Yes"}} if model.startswith("scripted/") else {}))
            seconds = time.perf_counter() - t
            log = read_eval_log(log.location)
            costs = log_costs(log)
            questions = len({c.sample_id.removesuffix(":neg") for c in costs}) if costs else 0
            row = {"status": log.status, "samples": len(costs), "questions": questions,
                   "calls_per_question": sum(c.calls for c in costs) / questions if questions else None,
                   "tokens_per_question": sum(c.total_tokens for c in costs) / questions if questions else None,
                   "wall_seconds_per_question": round(seconds / questions, 1) if questions else None,
                   "calls_per_sample": {c.sample_id: c.calls for c in costs}}
            result[label]["shared" if share else "independent"] = row
            print(label, "shared" if share else "independent", json.dumps(row))
        ind, sh = result[label]["independent"], result[label]["shared"]
        if ind["calls_per_question"] and sh["calls_per_question"] is not None:
            result[label]["calls_saved_per_question"] = ind["calls_per_question"] - sh["calls_per_question"]
    return result


def render_negatives(out: dict) -> str:
    lines = ["", "## negatives=true: calls per question, shared vs independent", "",
             f"Model `{out.get('negatives_model', out['model'])}`, KB `{out.get('kb', out.get('methods_kb', 'built above'))}`, "
             f"{out['questions']} question(s) = {2 * out['questions']} samples per run, "
             f"max_tokens {out['max_tokens']}. *Independent* is `-T share_calls=false` (each sample "
             "runs the whole method, as every negatives run did before); *shared* is the default.", "",
             "| method | calls/question independent | calls/question shared | saved | tokens independent | "
             "tokens shared | s/question independent | s/question shared |",
             "|---|---|---|---|---|---|---|---|"]
    for label, r in out["negatives"].items():
        i, s = r["independent"], r["shared"]
        lines.append(f"| {label} | {i['calls_per_question']:.1f} | {s['calls_per_question']:.1f} | "
                     f"{r.get('calls_saved_per_question', float('nan')):.1f} | {i['tokens_per_question']:.0f} | "
                     f"{s['tokens_per_question']:.0f} | {i['wall_seconds_per_question']} | "
                     f"{s['wall_seconds_per_question']} |")
    lines += ["", "Calls and tokens are read from the logs' model events (conflict_eval.report.accounting): a call "
              "reused by the sibling sample makes no model event and costs nothing.", ""]
    return "\n".join(lines)


def render(out: dict) -> str:
    c, r = out["corpus"], out["retrieval"]
    lines = [
        "# Conflict Exposure benchmark",
        "",
        f"Source `{out['source']}`, model `{out['model']}`, {out['questions']} polluted questions, "
        f"max_tokens {out['max_tokens']}, {out['machine']['cpus']} CPUs (shared with other jobs: "
        "timings are only as good as the machine was quiet). Written by `python benchmarks/conflict_exposure.py`.",
        "",
        "## Corpus",
        "",
        f"- {c['records']} HotpotQA records -> {c['clean_documents']} pooled clean paragraphs "
        f"({c['duplicate_paragraphs']} duplicates dropped); load {c['load_seconds']} s, pool {c['pool_seconds']} s",
        f"- polluted KB for {out['questions']} questions with the offline model: {c['kb_build_seconds_with_model']} s "
        f"({c['kb_build_seconds_per_question']} s per question); injected I/II/III = "
        f"{c['injected_documents']['I']}/{c['injected_documents']['II']}/{c['injected_documents']['III']}; "
        f"file {c['kb_file_bytes']} bytes",
        "",
        "## Retrieval (pollution `all`, k=5, first 100 questions)",
        "",
        "| backend | indexed docs | index (s) | docs/s | query mean (ms) | query median (ms) | batched (ms/query) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in ("dense", "bm25"):
        x = r[name]
        lines.append(f"| {name} | {x['indexed_documents']} | {x['index_seconds']} | {x['documents_per_second']} | "
                     f"{x['query_ms_mean']} | {x['query_ms_median']} | {x['batch_ms_per_query']} |")
    lines += [
        "",
        f"Corpus: {r['corpus_documents']} documents. Dense model load {r.get('dense_model_load_seconds')} s. "
        f"Word-embedding rewriting: load {r['rewrite']['load_seconds']} s, "
        f"{r['rewrite']['ms_per_question']} ms per question.",
        "",
        "## LLM calls and tokens per question",
        "",
        f"KB `{out.get('methods_kb', 'built above')}`, retrieval `{out['method_retriever']}`; "
        f"samples per method: {next(iter(out['methods'].values()))['cost']['n'] if out['methods'] else 0}.",
        "",
        "| method | calls | input tokens | output tokens | total tokens | seconds/sample | ACC | KRC |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, m in out["methods"].items():
        s = m["cost"]
        lines.append(f"| {label} | {s['calls']:.1f} | {s['input_tokens']:.0f} | {s['output_tokens']:.0f} | "
                     f"{s['total_tokens']:.0f} | {s.get('seconds') or 0:.1f} | "
                     f"{m['scores'].get('accuracy', float('nan')):.2f} | "
                     f"{m['scores'].get('knowledge_recall', float('nan')):.2f} |")
    lines += ["", "ACC/KRC on a handful of questions with a 135M model only show that the pipeline runs.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
