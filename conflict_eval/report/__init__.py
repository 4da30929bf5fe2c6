"""Reporting: a model x task leaderboard, per-task details, paired comparisons
and a reproducibility block from any number of Inspect logs.

    conflict-eval leaderboard LOG_DIR [LOG_DIR ...] --out leaderboard/
        [--allow-incomplete] [--model-cost-config costs.yaml] [--prices prices.yaml] [--bootstrap 1000]

Modules, in the direction they depend on each other:

* :mod:`.accounting` -- model calls and tokens per sample, counted from the logs' model events;
* prices come from :mod:`conflict_eval.pricing` (one ladder for the page, the estimate and the budget);
* :mod:`.grouping` -- the three grouping keys (task label, sample group, row key) and path display;
* :mod:`.logs` -- reading logs through ``inspect_ai.analysis``, de-duplication, completeness;
* :mod:`.manifest` -- the tasks a log folder was set out to hold (``eval-set.json``), logged or not;
* :mod:`.stats` -- metrics, intervals (Wilson / bootstrap / Clopper-Pearson), paired comparisons, ties;
* :mod:`.provenance` -- dataset hashes, versions, endpoints, results hash, reproduce commands;
* :mod:`.build` -- :func:`build_leaderboard`, :func:`write_leaderboard`;
* one module per output format: :mod:`.markdown`, :mod:`.tables` (CSV, JSON), :mod:`.html` (+ :mod:`.svg`).

The ``leaderboard`` command lives in :mod:`conflict_eval.cli.leaderboard`.
"""

from .build import IncompleteLogsError, build_leaderboard, write_leaderboard
from .format import model_colours
from .html import to_html
from .markdown import to_markdown
from .tables import conflict_types_csv, paired_csv, to_csv, to_json
from .grouping import canonical_task_name, sample_group, short_heads, task_key
from .logs import SampleRecord, deduplicate, read_records, score_values
from .commands import reproduce_command
from .provenance import provenance
from .stats import Comparison, MetricSummary, Row, aggregate, paired_comparisons, summarise_metric

__all__ = [
    "Comparison", "IncompleteLogsError", "MetricSummary", "Row", "SampleRecord", "aggregate", "build_leaderboard",
    "canonical_task_name", "deduplicate",
    "model_colours", "paired_comparisons", "provenance", "read_records", "reproduce_command", "sample_group",
    "score_values", "short_heads", "summarise_metric", "task_key",
    "write_leaderboard", "to_html", "to_markdown", "to_csv", "to_json", "conflict_types_csv", "paired_csv",
]
