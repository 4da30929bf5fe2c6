"""conflict-eval: knowledge-conflict methods, benchmarks and metrics for Inspect AI.

Public API (stable): the plugin marker :data:`hookimpl`, the canonical
records, the component lookups, :func:`compose_task` and
:func:`declares_metric` (a dataset factory's own metric). Importing this
package never imports torch.
"""

from conflict_eval.components.markers import hookimpl, hookspec
from conflict_eval.components.compose import compose_task, declares_metric
from conflict_eval.components.manager import (
    Component,
    PluginError,
    UnknownComponentError,
    components,
    get_dataset,
    get_method,
    get_metric,
    register_plugin,
    unregister_plugin,
)
from .records import (
    BadField,
    ConflictQA,
    DatasetError,
    Passage,
    Row,
    build_dataset,
    convert_rows,
    read_json_or_jsonl,
    read_jsonl,
    to_sample,
    write_jsonl,
)

__version__ = "0.1.0"

__all__ = [
    "BadField",
    "Component",
    "ConflictQA",
    "DatasetError",
    "Passage",
    "PluginError",
    "Row",
    "UnknownComponentError",
    "build_dataset",
    "components",
    "compose_task",
    "convert_rows",
    "declares_metric",
    "get_dataset",
    "get_method",
    "get_metric",
    "hookimpl",
    "hookspec",
    "read_json_or_jsonl",
    "read_jsonl",
    "write_jsonl",
    "register_plugin",
    "to_sample",
    "unregister_plugin",
]
