"""Retrieval at scale: persistent indexes vs today's in-memory path.

    python benchmarks/retrieval_scale.py [--sizes 10000,100000,1000000] [--work DIR]

Each measurement runs in its own subprocess (wall time and peak RSS via
``resource.getrusage`` of that process). The corpus is SYNTHETIC: passages
of 40-120 words drawn from a Zipf-distributed vocabulary of 50,000 made-up
words (a title of 2-3 words each); queries are 3-6 words drawn the same way.
Dense at 10k uses real all-MiniLM-L6-v2 embeddings; the 100k/1M vector-index
rows use SYNTHETIC random unit vectors (384-d), to time the vector index
alone; the embedding throughput row is measured to extrapolate the embedding
cost. Results: ``benchmarks/results/retrieval_scale.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
VOCAB = 50_000


def _words(rng: np.random.Generator, n: int) -> list[str]:
    ids = np.minimum(rng.zipf(1.15, size=n), VOCAB) - 1
    return [_word(int(i)) for i in ids]


def _word(i: int) -> str:
    letters = "bcdfghjklmnprstvz"
    vowels = "aeiou"
    out = []
    i += 1
    while i:
        i, r = divmod(i, 85)
        out.append(letters[r % 17] + vowels[r // 17])
    return "".join(out)


def make_corpus(path: Path, n: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            title = " ".join(_words(rng, int(rng.integers(2, 4)))).title()
            text = " ".join(_words(rng, int(rng.integers(40, 121))))
            f.write(json.dumps({"id": f"s{i}", "title": title, "text": text}) + "\n")


def make_queries(n: int, seed: int = 1) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(_words(rng, int(rng.integers(3, 7)))) for _ in range(n)]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def dir_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6


def latencies(search, search_many, queries: list[str], k: int = 10, batch: int = 32) -> dict:
    search(queries[0], k)  # warm
    single = []
    for q in queries:
        t = time.perf_counter()
        search(q, k)
        single.append((time.perf_counter() - t) * 1000)
    batched = []
    for i in range(0, len(queries) - batch + 1, batch):
        t = time.perf_counter()
        search_many(queries[i:i + batch], k)
        batched.append((time.perf_counter() - t) * 1000)
    q = statistics.quantiles
    return {"single_p50_ms": round(statistics.median(single), 2), "single_p99_ms": round(q(single, n=100)[98], 2),
            "batch_size": batch, "batch_p50_ms": round(statistics.median(batched), 2),
            "batch_p99_ms": round(max(batched) if len(batched) < 100 else q(batched, n=100)[98], 2),
            "batch_per_query_ms": round(statistics.median(batched) / batch, 3), "queries": len(queries)}


# --------------------------------------------------------------------------
# child jobs (one per subprocess)


def job_build(corpus: str, out: str, backend: str, exact: bool) -> dict:
    from conflict_eval.retrieval import build_index

    t = time.perf_counter()
    m = build_index(corpus, out, backend=backend, exact=exact, overwrite=True, progress=False)
    return {"build_s": round(time.perf_counter() - t, 2), "peak_rss_mb": round(peak_rss_mb(), 1),
            "index_mb": round(dir_mb(Path(out)), 1), "passages": m["passages"]}


def job_query_index(out: str, nq: int) -> dict:
    from conflict_eval.retrieval import open_index

    t = time.perf_counter()
    ix = open_index(out)
    ix.search("warm up", 1)
    load = time.perf_counter() - t
    res = latencies(ix.search, ix.search_many, make_queries(nq))
    return {"load_s": round(load, 2), **res, "peak_rss_mb": round(peak_rss_mb(), 1)}


def job_in_memory(corpus: str, backend: str, nq: int) -> dict:
    """Today's path: read the corpus file and index it in memory in this process."""
    from conflict_eval.retrieval.sources import TextSource

    t = time.perf_counter()
    src = TextSource(corpus, retriever=backend)
    ready = time.perf_counter() - t
    r = src.searcher.retriever
    res = latencies(r.search, r.search_many, make_queries(nq))
    return {"ready_s": round(ready, 2), **res, "peak_rss_mb": round(peak_rss_mb(), 1)}


def job_vectors(n: int, kind: str, out: str, nq: int) -> dict:
    """Vector index only, on synthetic random unit vectors (384-d)."""
    import faiss

    rng = np.random.default_rng(0)
    t = time.perf_counter()
    index = faiss.IndexFlatIP(384) if kind == "flat" else faiss.IndexHNSWFlat(384, 32, faiss.METRIC_INNER_PRODUCT)
    if kind != "flat":
        index.hnsw.efConstruction = 80
    for start in range(0, n, 50_000):
        x = rng.standard_normal((min(50_000, n - start), 384), dtype=np.float32)
        x /= np.linalg.norm(x, axis=1, keepdims=True)
        index.add(x)
    build = time.perf_counter() - t
    faiss.write_index(index, out)
    size = os.path.getsize(out) / 1e6
    if kind != "flat":
        index.hnsw.efSearch = 128
    qs = rng.standard_normal((nq, 384), dtype=np.float32)
    qs /= np.linalg.norm(qs, axis=1, keepdims=True)
    res = latencies(lambda q, k: index.search(q[None], k), lambda b, k: index.search(np.stack(b), k), list(qs))
    os.remove(out)
    return {"build_s": round(build, 2), "index_mb": round(size, 1), **res, "peak_rss_mb": round(peak_rss_mb(), 1)}


def job_embed(n: int, corpus: str) -> dict:
    from conflict_eval.retrieval.sources import read_passages
    from conflict_eval.retrieval import DenseRetriever

    texts = [f"{d.title}\n{d.text}" for d in read_passages(corpus)[:n]]
    enc = DenseRetriever(batch_size=64)
    enc.encode(texts[:64])
    t = time.perf_counter()
    enc.encode(texts)
    s = time.perf_counter() - t
    return {"passages": len(texts), "mean_words": round(sum(len(t.split()) for t in texts) / len(texts), 1),
            "seconds": round(s, 2), "passages_per_s": round(n / s, 1),
            "peak_rss_mb": round(peak_rss_mb(), 1)}


def child(argv: list[str]) -> None:
    job, args = argv[0], json.loads(argv[1])
    out = globals()[f"job_{job}"](**args)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    out["cpu_s"] = round(ru.ru_utime + ru.ru_stime, 2)  # whole child process, load-independent-ish
    print(json.dumps(out))


def run(job: str, timeout: float = 3600, **args) -> dict:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", job, json.dumps(args)], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)
    if proc.returncode:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit {proc.returncode}"}
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    out["process_s"] = round(time.perf_counter() - t, 2)
    out["load_avg"] = round(os.getloadavg()[0], 2)
    print(job, args, out, flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--work", default="/tmp/retrieval_scale")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--in-memory-max", type=int, default=100_000)
    ap.add_argument("--dense-sizes", default="10000")
    ap.add_argument("--vector-sizes", default="100000,1000000")
    ap.add_argument("--hnsw-max", type=int, default=200_000)
    ap.add_argument("--only", default="bm25,inmem,dense,vectors,embed")
    ap.add_argument("--dense-exact", action="store_true")
    ap.add_argument("--out", default=str(RESULTS / "retrieval_scale.json"))
    ap.add_argument("--dense-in-memory", action="store_true")
    ap.add_argument("--embed-n", type=int, default=500)
    ap.add_argument("--embed-corpus", default=str(ROOT.parent / "shared" / "data" / "hotpotqa_ircot" / "sample.jsonl"),
                    help="real passages for the embedding throughput row (IRCoT HotpotQA paragraphs)")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    only = set(args.only.split(","))
    results: dict = {"uptime_start": os.popen("uptime").read().strip(), "rows": []}
    jpath = Path(args.out)
    if jpath.exists():
        results["rows"] = json.loads(jpath.read_text())["rows"]

    def save(row: dict) -> None:
        results["rows"] = [r for r in results["rows"] if (r["what"], r["n"]) != (row["what"], row["n"])] + [row]
        jpath.write_text(json.dumps(results, indent=1) + "\n")

    for n in [int(s) for s in args.sizes.split(",") if s]:
        corpus = work / f"corpus_{n}.jsonl"
        if not corpus.exists():
            make_corpus(corpus, n)
        if "bm25" in only:
            b = run("build", corpus=str(corpus), out=str(work / f"bm25_{n}"), backend="bm25", exact=False)
            q = run("query_index", out=str(work / f"bm25_{n}"), nq=args.queries)
            save({"what": "bm25 index", "n": n, "build": b, "query": q})
        if "inmem" in only and n <= args.in_memory_max:
            save({"what": "bm25 in memory (today)", "n": n,
                  "query": run("in_memory", corpus=str(corpus), backend="bm25", nq=args.queries)})
    for n in [int(s) for s in args.dense_sizes.split(",") if s]:
        if "dense" not in only:
            break
        corpus = work / f"corpus_{n}.jsonl"
        if not corpus.exists():
            make_corpus(corpus, n)
        for exact in (False, True) if args.dense_exact else (False,):
            name = f"dense_{'flat' if exact else 'hnsw'}_{n}"
            b = run("build", corpus=str(corpus), out=str(work / name), backend="dense", exact=exact)
            q = run("query_index", out=str(work / name), nq=args.queries)
            save({"what": f"dense index ({'exact' if exact else 'HNSW'})", "n": n, "build": b, "query": q})
        if args.dense_in_memory:
            save({"what": "dense in memory (today)", "n": n,
                  "query": run("in_memory", corpus=str(corpus), backend="dense", nq=args.queries)})
    if "vectors" in only:
        for n in [int(s) for s in args.vector_sizes.split(",") if s]:
            for kind in ("flat", "hnsw"):
                if kind == "hnsw" and n > args.hnsw_max:
                    continue
                save({"what": f"vector index only, synthetic vectors ({kind})", "n": n,
                      "build": run("vectors", n=n, kind=kind, out=str(work / f"v_{kind}_{n}.faiss"),
                                   nq=args.queries)})
    if "embed" in only and args.embed_n:
        save({"what": "embedding throughput (all-MiniLM-L6-v2, CPU, real HotpotQA paragraphs)", "n": args.embed_n,
              "build": run("embed", n=args.embed_n, corpus=args.embed_corpus)})
    results["uptime_end"] = os.popen("uptime").read().strip()
    jpath.write_text(json.dumps(results, indent=1) + "\n")


def _fmt(v, unit=""):
    return "-" if v is None else (f"{v:,.2f}{unit}" if isinstance(v, float) else f"{v:,}{unit}")


def report(paths: list[Path]) -> str:
    """Markdown tables from the JSON results (the prose is written by hand)."""
    rows = [r for p in paths if p.exists() for r in json.loads(p.read_text())["rows"]]
    out = ["| what | passages | build / ready (s) | index on disk (MB) | peak RSS build (MB) | open (s) | "
           "single p50 / p99 (ms) | batch of 32 p50 / p99 (ms) | per query in batch (ms) | peak RSS query (MB) | load avg |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["what"], r["n"])):
        b, q = r.get("build") or {}, r.get("query") or {}
        if "error" in b or "error" in q:
            out.append(f"| {r['what']} | {r['n']:,} | error: {b.get('error') or q.get('error')} |||||||||")
            continue
        if r["what"].startswith("embedding"):
            out.append(f"| {r['what']} | {b['passages']:,} (mean {b['mean_words']} words) | {b['seconds']} "
                       f"(= {b['passages_per_s']} passages/s) | - | {b['peak_rss_mb']} | - | - | - | - | - | {b['load_avg']} |")
            continue
        lat = q or b
        build_s = b.get("build_s", q.get("ready_s"))
        out.append(
            f"| {r['what']} | {r['n']:,} | {_fmt(build_s)} | {_fmt(b.get('index_mb'))} | "
            f"{_fmt(b.get('peak_rss_mb') if 'build_s' in b and 'single_p50_ms' not in b else None)} | "
            f"{_fmt(q.get('load_s'))} | {lat.get('single_p50_ms')} / {lat.get('single_p99_ms')} | "
            f"{lat.get('batch_p50_ms')} / {lat.get('batch_p99_ms')} | {lat.get('batch_per_query_ms')} | "
            f"{_fmt(lat.get('peak_rss_mb'))} | {max(b.get('load_avg', 0), q.get('load_avg', 0))} |")
    return "\n".join(out)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
    elif len(sys.argv) > 1 and sys.argv[1] == "--report":
        print(report([RESULTS / f"retrieval_scale{s}.json" for s in ("", "_dense", "_vectors")]))
    else:
        main()
