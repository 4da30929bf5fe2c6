"""``conflict-eval compare A B``: paired comparison of two sets of Inspect logs (:mod:`conflict_eval.report.compare`)."""

from __future__ import annotations


def cmd_compare(args) -> int:
    import sys

    from conflict_eval.report.compare import CompareError, compare, to_json, to_markdown

    try:
        report = compare(args.a, args.b, metric=args.metric, bootstrap=args.bootstrap, seed=args.seed,
                         alpha=args.alpha, adjustment=args.adjust, pair_anyway=args.pair_anyway)
    except CompareError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(to_json(report) if args.format == "json" else to_markdown(report), end="")
    return 0


def add_cli_commands(sub) -> None:
    """Register ``compare`` on an argparse sub-parser collection."""
    p = sub.add_parser("compare", help="paired comparison of two Inspect logs or log directories (any task): "
                                       "difference, exact or permutation paired test (Holm over the rows), "
                                       "bootstrap intervals beside it, missing ids and flips")
    p.add_argument("a", metavar="LOG_OR_DIR_A", help="an Inspect log file or a directory of logs (side A)")
    p.add_argument("b", metavar="LOG_OR_DIR_B", help="an Inspect log file or a directory of logs (side B)")
    p.add_argument("--metric", help="only this metric (a score key, 'scorer.key', or a scorer name)")
    p.add_argument("--format", choices=("md", "json"), default="md", help="output format (default md)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="B", help="bootstrap resamples (default 1000)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (the intervals only; never the verdict)")
    p.add_argument("--pair-anyway", action="store_true",
                   help="pair two logs whose dataset (name, sample content) or scorers differ (default: refuse)")
    from .leaderboard import add_verdict_options

    add_verdict_options(p)
    p.set_defaults(fn=cmd_compare)
