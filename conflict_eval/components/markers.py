"""Pluggy markers for the ``conflict_eval`` plugin project.

Plugins import :data:`hookimpl` as ``from conflict_eval import hookimpl``.
"""

import pluggy

PROJECT_NAME = "conflict_eval"
"""Pluggy project name; also the setuptools entry-point group plugins use."""

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)
