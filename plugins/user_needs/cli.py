"""``conflict-eval user-needs ...``: URAQ generation, pre-screening, curves.

    conflict-eval user-needs generate --model openai/gpt-4o-mini --n 300 --out data/uraq.jsonl
    conflict-eval user-needs prescreen data/uraq.jsonl --model M1 --model M2 --out data/uraq_known.jsonl
    conflict-eval user-needs curves logs/*.eval --out results/user_needs
"""

from __future__ import annotations

import argparse
import asyncio
import json


def _generate(args: argparse.Namespace) -> int:
    from conflict_eval.records import TaskArgument
    from conflict_eval.runs.arguments import argument_text

    from .generator import generate_uraq

    rows, report = generate_uraq(args.model, args.out, n_statements=args.n, per_call=args.per_call,
                                 hops=args.hops, threshold=args.threshold, temperature=args.temperature,
                                 max_tokens=args.max_tokens)
    print(f"wrote {len(rows)} questions to {args.out} (settings: {args.out}.settings.json; "
          f"all {len(report.pool)} generated statements: {args.out}.pool.jsonl; use them with "
          f"{argument_text(TaskArgument('distractors', f'{args.out}.pool.jsonl'), 'any')})")
    print(json.dumps(report.as_dict(), indent=1))
    return 0


def _prescreen(args: argparse.Namespace) -> int:
    from conflict_eval.records import read_jsonl

    from .generator import aprescreen, write_jsonl

    rows = []
    for loc, row in read_jsonl(args.path):
        if isinstance(row, Exception) or not isinstance(row, dict):
            raise ValueError(f"{args.path} {loc}: not a JSON object")
        rows.append(row)
    kept, report = asyncio.run(aprescreen(rows, args.model))
    write_jsonl(kept, args.out, {"source": str(args.path), "prescreen_models": args.model,
                                 "report": report.as_dict()})
    print(f"kept {len(kept)} of {len(rows)} questions known to {', '.join(args.model)}; wrote {args.out}")
    return 0


def _curves(args: argparse.Namespace) -> int:
    from conflict_eval.scorers.user_needs.curves import write_curves

    for model, png in write_curves(args.logs, args.out, name=args.name).items():
        split = json.loads(png.with_suffix(".refusal_split.json").read_text(encoding="utf-8"))
        share = split["refusal_share"]
        print(f"{model}: {png} (+ .md, .json, .refusal_split.json); Table 2 refusal split: "
              f"{split['refusals']} refusals, {split['hallucinations']} hallucinations "
              f"({split['near_refusals']} near-refusals) of {split['cases']} cases, refusal share "
              + ("n/a" if share is None else f"{share:.3f}"))
    return 0


def add_cli_commands(sub) -> None:
    p = sub.add_parser("user-needs", help="URAQ generation, pre-screening and accuracy curves (user needs)")
    cmds = p.add_subparsers(dest="user_needs_command", required=True)

    g = cmds.add_parser("generate", help="generate URAQ-style data (Appendix A) with any Inspect model")
    g.add_argument("--model", required=True)
    g.add_argument("--n", type=int, default=50, help="knowledge statements to generate")
    g.add_argument("--per-call", type=int, default=25)
    g.add_argument("--hops", type=int, default=4, help="reasoning steps of the kept question")
    g.add_argument("--threshold", type=float, default=0.5, help="cosine above which a statement is a duplicate")
    g.add_argument("--temperature", type=float, default=0.7, help="for knowledge generation")
    g.add_argument("--max-tokens", type=int, default=None, help="per call (default: the model's)")
    g.add_argument("--out", required=True)
    g.set_defaults(fn=_generate)

    s = cmds.add_parser("prescreen", help="keep questions whose single-hop fact every model knows")
    s.add_argument("path")
    s.add_argument("--model", action="append", required=True, help="repeat for several models")
    s.add_argument("--out", required=True)
    s.set_defaults(fn=_prescreen)

    c = cmds.add_parser("curves", help="accuracy vs number of contexts: table and PNG from eval logs")
    c.add_argument("logs", nargs="+")
    c.add_argument("--out", required=True)
    c.add_argument("--name", default="user_needs")
    c.set_defaults(fn=_curves)
