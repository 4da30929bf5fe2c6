"""How every reader's time grows with padded input (issue 42, "linear time").

For each declared parser (``components.manager.reply_readers().parsers``: the
core's and every installed unit's, issue 47), on each family
below, the thread CPU time (``time.thread_time``, best of ``--repeat`` calls)
at 2,000 and at 20,000 characters, and their ratio: a linear reader costs
about 10x for 10x the input. Families: the answer markers of the issue
(``Answer:``, ``Verdict``, ``<a>``, ``(A``) followed by 2,000 and then 20,000
spaces, as written (``literal``), then ``B`` (``+ B``: at 20,000 spaces
the 20,000-character cap cuts off the marker or the letter), and padded to the size with a closing ``x``
(``padded``, the shape of :func:`~conflict_eval.answers.fuzz.scaling_inputs`),
plus the families that were the worst before issue 42's fixes (``</a>`` and
``<a>B</a>`` repeated, ``Final answer:`` / ``the answer is`` + spaces).

    python benchmarks/reader_growth.py [--repeat 5] [--only NAME ...] [--json OUT] [--before BEFORE.json]

Writes ``benchmarks/results/reader_growth.md`` (with ``--before``: a
before/after column pair from a JSON an earlier run wrote with ``--json``).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
from pathlib import Path

from conflict_eval.answers.fuzz import best_cpu_time
from conflict_eval.components.manager import reply_readers

RESULTS = Path(__file__).parent / "results"
MARKERS = ("Answer:", "Verdict", "<a>", "(A", "Final answer:", "the answer is")
UNITS = ("</a>", "<a>B</a>")
SIZES = (2_000, 20_000)


def families(size: int) -> dict[str, str]:
    out = {}
    for marker in MARKERS:
        out[f"{marker} + spaces (literal)"] = marker + " " * size
        out[f"{marker} + spaces + B"] = marker + " " * size + "B"
        out[f"{marker} + spaces (padded)"] = marker + " " * (size - len(marker) - 1) + "x"
    for unit in UNITS:
        out[f"{unit} repeated"] = unit * (size // len(unit))
    return out


def measure(repeat: int, only: list[str]) -> dict[str, dict]:
    small, large = families(SIZES[0]), families(SIZES[1])
    out: dict[str, dict] = {}
    gc.disable()
    try:
        for entry in reply_readers().parsers:
            if only and entry.name not in only:
                continue
            entry.function()
            worst = None
            for family in large:
                t_small = best_cpu_time(entry, small[family], repeat, limit=30.0)
                t_large = best_cpu_time(entry, large[family], repeat, limit=30.0)
                ratio = t_large / max(t_small, 1e-7)
                if worst is None or ratio > worst["ratio"]:
                    worst = {"family": family, "small_ms": t_small * 1e3, "large_ms": t_large * 1e3, "ratio": ratio}
            out[entry.name] = worst
            print(f"{entry.name:40s} {worst['ratio']:5.1f}x  {worst['family']}", flush=True)
    finally:
        gc.enable()
    return out


def render(after: dict[str, dict], before: dict[str, dict] | None, repeat: int) -> str:
    one, five, _ = os.getloadavg()
    lines = [
        "# Reader time growth on padded input (issue 42)",
        "",
        "Thread CPU time, best of %d calls, at 2,000 and 20,000 characters; the worst family per "
        "reader (`python benchmarks/reader_growth.py`; families in its docstring). A linear reader "
        "is about 10x. Load average while measuring: %.2f (1 min), %.2f (5 min), on 2 shared cores."
        % (repeat, one, five),
        "",
    ]
    if before:
        lines += ["*Before*: the same script on the code before the change it measures (``--before``, the JSON an "
                  "earlier run wrote with ``--json``); *after*: the code as it is. The `+ B` families put a letter "
                  "after the spaces: at 20,000 spaces the 20,000-character cap cuts it (or the marker) off, so "
                  "without `MAX_GAP` the two sizes take different reading paths. Ratios well under 10x come from "
                  "readers that cap their input lower (ConflictScore's choice readers read 8,000 characters) or "
                  "stop early.", ""]
        lines += ["| reader | before: worst family | before | after: worst family | after 2,000 -> 20,000 | after |",
                  "| --- | --- | ---: | --- | ---: | ---: |"]
    else:
        lines += ["| reader | worst family | 2,000 -> 20,000 | ratio |", "| --- | --- | ---: | ---: |"]
    for name, row in after.items():
        cell = f"{row['small_ms']:.2f} -> {row['large_ms']:.2f} ms"
        if before:
            b = before.get(name)
            was = f"`{b['family']}` | {b['ratio']:.1f}x" if b else "- | -"
            lines.append(f"| {name} | {was} | `{row['family']}` | {cell} | {row['ratio']:.1f}x |")
        else:
            lines.append(f"| {name} | `{row['family']}` | {cell} | {row['ratio']:.1f}x |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--json", type=Path, help="also write the measurements here")
    parser.add_argument("--before", type=Path, help="measurements of an earlier run (--json) to compare")
    parser.add_argument("--no-md", action="store_true", help="do not write the markdown table")
    args = parser.parse_args()
    after = measure(args.repeat, args.only)
    if args.json:
        args.json.write_text(json.dumps(after, indent=1))
    if not args.no_md:
        before = json.loads(args.before.read_text()) if args.before else None
        (RESULTS / "reader_growth.md").write_text(render(after, before, args.repeat))


if __name__ == "__main__":
    main()
