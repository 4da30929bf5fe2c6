"""Components: how methods, datasets and metrics are declared, found and put together.

What belongs here: the pluggy markers (``markers``), the hook specifications
plugins implement (``hookspecs``), the plugin manager and component lookups
(``manager``), the shipped ``registry.yaml`` reader (``catalog``) and the
composition of a method, a dataset and a metric into one Inspect task
(``compose``). Nothing here knows about a particular dataset or method.
"""
# Note: the attribute ``conflict_eval.components`` stays the public lookup
# function (``from conflict_eval import components``); reach these modules
# with ``from conflict_eval.components.manager import ...``.
