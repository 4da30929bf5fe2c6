"""What the model-running benchmark scripts share: offline settings and where things are.

Imported first by a script run as ``python benchmarks/NAME.py`` (its folder is on
``sys.path``), before anything reads these environment variables.
"""

from __future__ import annotations

import os
from pathlib import Path

for _name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "CONFLICT_EVAL_OFFLINE"):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("INSPECT_LOG_LEVEL", "warning")

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
RESULTS = REPO / "benchmarks" / "results"
