"""Deprecated: use :mod:`conflict_eval.components.catalog` (this alias is kept for one release)."""

import importlib as _importlib, sys as _sys, warnings as _warnings

_warnings.warn("conflict_eval.registry_file is deprecated; import conflict_eval.components.catalog", DeprecationWarning, stacklevel=2)
_sys.modules[__name__] = _importlib.import_module("conflict_eval.components.catalog")
