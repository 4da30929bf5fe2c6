"""``conflict-eval atomr check-trees FILE... [--json]``: can AtomR execute these plans?

    conflict-eval atomr check-trees ../shared/data/atomr_released_trees/*.jsonl
    conflict-eval atomr check-trees my_planner_trees.jsonl --json

A FILE is a JSONL file whose lines are ``{"question": ..., "reasoning_tree":
...}`` records (the AtomR authors' released ``*_trees.jsonl``; a tree is the
decoded object or the planner's reply text), bare trees, or planner replies
as JSON strings; or a JSON file mapping questions to trees, or a list of
such records. For each file it prints the trees parsed, the trees rejected,
the rejection reasons with counts, and the nodes that would degrade to
Direct RAG. ``--json`` prints one object ``{"parsed": N, "rejected": N,
"reasons": {reason: count}}`` summed over the files.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterator


class TreesFileError(ValueError):
    pass


def _reason_key(message: str) -> str:
    """A rejection reason without its specifics (quoted text, numbers), for counting."""
    text = re.sub(r"'[^']{0,200}'|\"[^\"]{0,200}\"", "'…'", message[:300])
    text = re.sub(r"\d+", "N", text)
    return text[:160]


def iter_trees(path: str) -> Iterator[tuple[str, Any]]:
    """``(where, tree)`` for every tree in ``path`` (see the module docstring)."""
    f = Path(path)
    if not f.is_file():
        raise TreesFileError(f"{path}: no such file")
    text = f.read_text(encoding="utf-8-sig", errors="replace")
    if not text.strip():
        raise TreesFileError(f"{path}: the file is empty")
    try:
        whole = json.loads(text)
    except json.JSONDecodeError:
        whole = None
    except RecursionError:
        raise TreesFileError(f"{path}: JSON nested too deeply") from None
    if isinstance(whole, dict) and "reasoning_tree" not in whole:
        if whole and all(isinstance(v, (dict, str)) for v in whole.values()) and \
                all(isinstance(v, dict) for v in whole.values()):
            for q, t in whole.items():  # {question: tree}
                yield f"{path} question {q[:60]!r}", t
        else:
            yield f"{path}", whole  # one tree
        return
    if isinstance(whole, list):
        rows = [(f"{path} record {i + 1}", r) for i, r in enumerate(whole)]
    elif whole is not None:
        rows = [(f"{path}", whole)]
    else:
        rows = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rows.append((f"{path} line {n}", json.loads(line)))
            except (json.JSONDecodeError, RecursionError):
                rows.append((f"{path} line {n}", line))  # a raw planner reply on one line
    for where, r in rows:
        yield where, (r["reasoning_tree"] if isinstance(r, dict) and "reasoning_tree" in r else r)


def check_file(path: str) -> dict[str, Any]:
    from .parse import try_parse_tree

    parsed = rejected = 0
    reasons: Counter[str] = Counter()
    degraded: Counter[str] = Counter()
    degraded_trees = 0
    for _, tree_input in iter_trees(path):
        tree, error = try_parse_tree(tree_input)
        if tree is None:
            rejected += 1
            reasons[_reason_key(error or "")] += 1
            continue
        parsed += 1
        bad = tree.degraded()
        if bad:
            degraded_trees += 1
        for n in bad:
            degraded[_reason_key(n.problem or "")] += 1
    return {"parsed": parsed, "rejected": rejected, "reasons": dict(reasons),
            "degraded_nodes": dict(degraded), "trees_with_degraded_nodes": degraded_trees}


def _check_trees(args: argparse.Namespace) -> int:
    total = {"parsed": 0, "rejected": 0, "reasons": Counter()}
    per_file = []
    for path in args.files:
        try:
            result = check_file(path)
        except TreesFileError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        per_file.append((path, result))
        total["parsed"] += result["parsed"]
        total["rejected"] += result["rejected"]
        total["reasons"].update(result["reasons"])
    if args.json:
        from conflict_eval.cli.options import print_json

        print_json(args, {"parsed": total["parsed"], "rejected": total["rejected"],
                          "reasons": dict(total["reasons"].most_common())}, ensure_ascii=False)
        return 0
    for path, r in per_file:
        n = r["parsed"] + r["rejected"]
        rate = f"{100 * r['parsed'] / n:.1f}%" if n else "-"
        print(f"{path}: {n} trees, parsed {r['parsed']} ({rate}), rejected {r['rejected']}")
        for reason, count in Counter(r["reasons"]).most_common():
            print(f"  rejected {count:5d}  {reason}")
        if r["degraded_nodes"]:
            print(f"  {r['trees_with_degraded_nodes']} parsed trees have nodes that degrade to Direct RAG:")
            for reason, count in Counter(r["degraded_nodes"]).most_common():
                print(f"  degraded {count:5d}  {reason}")
    if len(per_file) > 1:
        n = total["parsed"] + total["rejected"]
        print(f"total: {n} trees, parsed {total['parsed']}, rejected {total['rejected']}")
    return 0


def add_cli_commands(sub) -> None:
    p = sub.add_parser("atomr", help="AtomR tools: check planner trees before a run")
    cmds = p.add_subparsers(dest="atomr_command", required=True)
    c = cmds.add_parser("check-trees", help="parse reasoning-tree files; print parsed/rejected and why")
    c.add_argument("files", nargs="+", metavar="FILE")
    c.add_argument("--json", action="store_true", help="print one JSON object summed over the files")
    c.set_defaults(fn=_check_trees)
