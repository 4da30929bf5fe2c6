"""Convert ConflictingQA's ``data.pkl`` once to JSON Lines.

    python -m conflict_eval.plugins.conflictbench.convert_conflictingqa data.pkl conflictingqa.jsonl --trust-pickle

The authors ship ConflictingQA as a pickled pandas DataFrame in an unversioned
Google Drive folder, so there is no hash we could pin. Unpickling runs any
code the file contains; the dataset loader therefore never unpickles. This
command does it once, only with ``--trust-pickle`` (run it where you are
willing to expose the machine to the file, e.g. a throwaway container), and
writes every row as one JSON object, which ``conflictbench_conflictingqa``
reads with ``-T path=``. It prints the SHA-256 of the pickle and of the JSONL
so that you can record which copy you converted.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from conflict_eval.records.download import sha256_file
from conflict_eval.records.errors import TaskArgument
from conflict_eval.runs.arguments import argument_text

REQUIRED_COLUMNS = ("search_query", "text_window", "stance")


def _json_value(value: Any) -> Any:
    """Plain JSON values: NaN/NA become null, numpy scalars Python numbers."""
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    if hasattr(value, "item"):  # numpy scalar
        return _json_value(value.item())
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError):
        pass
    return str(value)


def convert(pickle_path: Path, out: Path) -> int:
    """Unpickle ``pickle_path`` (a DataFrame) and write it as JSON Lines; return the row count."""
    import pandas as pd

    frame = pd.read_pickle(pickle_path)  # noqa: S301 -- only reached with --trust-pickle
    if not isinstance(frame, pd.DataFrame):
        raise ValueError(f"{pickle_path}: expected a pickled pandas DataFrame, got {type(frame).__name__}")
    missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{pickle_path}: missing column(s) {', '.join(missing)}; have {list(frame.columns)}")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        for rec in frame.to_dict(orient="records"):
            f.write(json.dumps({str(k): _json_value(v) for k, v in rec.items()}, ensure_ascii=False) + "\n")
    tmp.replace(out)
    return len(frame)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m conflict_eval.plugins.conflictbench.convert_conflictingqa",
        description="Convert ConflictingQA's data.pkl to JSON Lines once (unpickling runs the file's code).")
    parser.add_argument("pickle", type=Path, help="the authors' data.pkl")
    parser.add_argument("out", type=Path, help="JSON Lines file to write")
    parser.add_argument("--trust-pickle", action="store_true",
                        help="confirm that you trust the pickle's origin: loading it runs any code it contains")
    args = parser.parse_args(argv)
    if not args.pickle.is_file():
        print(f"error: no such file {args.pickle}", file=sys.stderr)
        return 2
    digest = sha256_file(args.pickle)
    if not args.trust_pickle:
        print(f"error: {args.pickle} (sha256 {digest}) is a pickle; loading it runs any code it contains. "
              "Rerun with --trust-pickle if you trust where it came from.", file=sys.stderr)
        return 2
    try:
        n = convert(args.pickle, args.out)
    except Exception as exc:  # noqa: BLE001 -- one-line report of whatever the file held
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.pickle} (sha256 {digest}) -> {args.out}: {n} rows (sha256 {sha256_file(args.out)})")
    print(f"use it with: {argument_text(TaskArgument('path', str(args.out)), 'any')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
