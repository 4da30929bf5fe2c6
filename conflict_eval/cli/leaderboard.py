"""``conflict-eval leaderboard``: a model x task leaderboard from Inspect logs (:mod:`conflict_eval.report`)."""

from __future__ import annotations


def cmd_leaderboard(args) -> int:
    from conflict_eval.report.build import IncompleteLogsError, write_leaderboard

    try:
        paths = write_leaderboard(args.log_dir, args.out, prices_path=args.prices,
                                  cost_config_path=args.model_cost_config, bootstrap=args.bootstrap,
                                  seed=args.seed, allow_incomplete=args.allow_incomplete,
                                  judge_gold=args.judge_gold, alpha=args.alpha, adjustment=args.adjust)
    except IncompleteLogsError as exc:
        import sys

        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(paths["md"].read_text(encoding="utf-8"))
    print("written:", ", ".join(str(p) for p in paths.values()))
    return 0


def add_verdict_options(p) -> None:
    """``--alpha`` and ``--adjust``, shared by ``leaderboard`` and ``compare`` (report.paired)."""
    p.add_argument("--alpha", type=float, default=0.05,
                   help="significance level of the paired tests (default 0.05)")
    p.add_argument("--adjust", choices=("holm", "none"), default="holm",
                   help="family correction over every comparison shown (default holm)")


def add_cli_commands(sub) -> None:
    """Register ``leaderboard`` on an argparse sub-parser collection."""
    p = sub.add_parser("leaderboard", help="model x task leaderboard (html, md, csv, json) from Inspect logs")
    p.add_argument("log_dir", nargs="+", help="log directories (searched recursively)")
    p.add_argument("--out", default="leaderboard", help="output directory (default ./leaderboard)")
    p.add_argument("--allow-incomplete", action="store_true",
                   help="show cells from incomplete or errored logs, marked done/total, and tasks the logs' "
                        "eval-set.json lists that never started, marked not started (default: refuse them)")
    p.add_argument("--model-cost-config", help="Inspect model cost file (YAML/JSON: model -> input, output, "
                   "input_cache_write, input_cache_read USD per 1M tokens) for runs Inspect did not price")
    p.add_argument("--prices", help="fallback price table YAML (USD per 1M tokens); default: the packaged one")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="B",
                   help="bootstrap resamples for the 95%% intervals of non-0/1 metrics (default 1000; 0: none)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    add_verdict_options(p)
    p.add_argument("--judge-gold", metavar="FILE", help="a benchmarks/judge_gold.py JSON result: each judge's "
                   "accuracy on the hand-labelled slice, shown beside the model-graded scores")
    p.set_defaults(fn=cmd_leaderboard)
