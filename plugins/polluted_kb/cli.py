"""``conflict-eval build-polluted-kb``: a polluted HotpotQA knowledge base
(Conflict Exposure §4.2-4.4, Figure 3), grafted onto the command line."""

from __future__ import annotations

import argparse
from pathlib import Path

from conflict_eval.cli.options import DEFAULT_MODEL


def cmd_build_polluted_kb(args: argparse.Namespace) -> int:
    """Build a polluted HotpotQA knowledge base (Conflict Exposure §4.2-4.4, Figure 3)."""
    from conflict_eval.plugins.polluted_kb.build import build_polluted_kb, default_source
    from conflict_eval.kb.format import save_kb

    types = tuple(t.strip() for t in args.types.split(",")) if args.types != "all" else ("I", "II", "III")
    source = Path(args.source) if args.source else default_source()
    if not source.is_file():
        raise SystemExit(f"error: no such file {source}")
    kb = build_polluted_kb(source, args.model, types=types, limit=args.limit, shuffle=args.shuffle,
                           seed=args.seed, prescreen=args.prescreen, k=args.k, retriever=args.retriever,
                           corpus=args.corpus)
    save_kb(kb, args.out)
    from conflict_eval.plugins.polluted_kb.build import build_report

    r = build_report(kb)
    print(f"{args.out}: {r['clean_documents']} clean + {r['injected_documents']} injected documents, "
          f"{r['questions']} questions ({r['questions'] - r['with_target']} without a misinformation target)")
    if kb.meta.corpus:
        c = kb.meta.corpus
        print(f"clean corpus from {c['kind']} {c['name']} ({c['passages']} passages); supporting paragraphs "
              f"found by text {c['supporting_by_text']}, by title {c['supporting_by_title']}, "
              f"added {c['supporting_added']}")
    print("targets rejected as too close to the gold answer: "
          + ", ".join(f"{n} {why} it" for why, n in r["target_rejected"].items())
          + f"; other target failures: {r['target_failed']}"
          + (f" ({', '.join(f'{n} {why}' for why, n in r['target_failed_reasons'].items())})"
             if r["target_failed_reasons"] else ""))
    if args.prescreen:
        print(f"pre-screening kept {sum(1 for q in kb.questions if q.prescreen and q.prescreen.kept)}")
    return 0


def add_cli_commands(sub) -> None:
    """Register ``build-polluted-kb``."""
    p = sub.add_parser("build-polluted-kb",
                       help="build a polluted HotpotQA knowledge base (Conflict Exposure, Figure 3)")
    p.add_argument("--source", help="HotpotQA JSONL in IRCoT format (default: pinned upstream download)")
    p.add_argument("--model", default=DEFAULT_MODEL, help="model that writes the misinformation")
    p.add_argument("--types", default="all", help="pollution types: all, or a comma list of I,II,III")
    p.add_argument("--limit", type=int, help="number of questions to pollute")
    p.add_argument("--shuffle", action="store_true", help="pick the questions after a seeded shuffle")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--prescreen", action="store_true", help="§4.2 pre-screening on the clean corpus")
    p.add_argument("--k", type=int, default=5, help="documents retrieved when pre-screening")
    p.add_argument("--retriever", default="dense", choices=["dense", "bm25"])
    p.add_argument("--corpus", help="clean corpus: an index directory from `conflict-eval index build` or a "
                                    "corpus file it reads (e.g. BEIR HotpotQA corpus.jsonl, as in §4.2); "
                                    "default: pool the source's own paragraphs")
    p.add_argument("--out", required=True, help="KB file to write (JSON)")
    p.set_defaults(fn=cmd_build_polluted_kb)
