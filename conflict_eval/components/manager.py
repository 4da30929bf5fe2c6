"""The plugin manager: finds plugins, merges what they register, looks names up.

Built-in plugins are registered in code, from :data:`DEFAULT_PLUGINS` (as
datasette lists its default plugins), before the third-party plugins, which
load from the ``conflict_eval`` entry-point group. Plugins that are not
packaged load next to them from

* ``CONFLICT_EVAL_PLUGINS``: ``os.pathsep``-separated Python files (``x.py``,
  or a package directory with an ``__init__.py``) or importable module names;
  read by every process, so it works inside ``inspect eval conflict_eval/run``;
* ``conflict-eval --plugin PATH_OR_MODULE`` (repeatable), via
  :func:`add_plugin_source`.

Tests and notebooks can add a plugin object at run time with
:func:`register_plugin`. Every component records where its plugin came from
(:attr:`Component.origin`).

Errors are loud and specific:

* a hook implementation that matches no hook spec (a misspelled hook name)
  raises :class:`PluginError` naming the plugin and the hook;
* a name registered twice raises :class:`PluginError` naming both plugins;
* a plugin that calls ``sys.exit`` while importing or in a hook raises
  :class:`PluginError` naming it (instead of ending the process silently);
* a ``--plugin`` / ``CONFLICT_EVAL_PLUGINS`` source that implements no hook
  (``--plugin os``) gives a :class:`PluginWarning`;
* looking up an unknown name raises :class:`UnknownComponentError` listing
  what is installed.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import os
import sys
import threading
import warnings
from pathlib import Path
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pluggy

from conflict_eval.components import hookspecs
from conflict_eval.components.markers import PROJECT_NAME

Kind = Literal["method", "dataset", "metric", "source"]
KINDS: tuple[Kind, ...] = ("method", "dataset", "metric", "source")
ENV_VAR = "CONFLICT_EVAL_PLUGINS"
_HOOKS: dict[Kind, str] = {
    "method": "conflict_eval_register_methods",
    "dataset": "conflict_eval_register_datasets",
    "metric": "conflict_eval_register_metrics",
    "source": "conflict_eval_register_sources",
}
#: Hooks that extend a part of the core rather than register a kind of component.
EXTENSION_HOOKS: tuple[str, ...] = ("conflict_eval_add_cli_commands", "conflict_eval_lmeval_exports",
                                    "conflict_eval_reply_readers")


#: The built-in plugins, registered in code as datasette registers its default plugins:
#: plugin name -> module. A new built-in is one line here (and its registry.yaml entries),
#: with no pyproject.toml entry point and no reinstall; third-party plugins keep the
#: ``conflict_eval`` entry-point group. Modules are named as strings: the core reaches
#: plugins through this list and the plugin manager, never by an import statement.
DEFAULT_PLUGINS: dict[str, str] = {
    "demo": "conflict_eval.plugins.demo",
    "end_to_end": "conflict_eval.plugins.end_to_end",
    "polluted_kb": "conflict_eval.plugins.polluted_kb",
    "conflict_exposure": "conflict_eval.plugins.conflict_exposure",
    "standard_rag": "conflict_eval.plugins.standard_rag",
    "robustrag": "conflict_eval.plugins.robustrag",
    "astuterag": "conflict_eval.plugins.astuterag",
    "microact": "conflict_eval.plugins.microact",
    "choice_accuracy": "conflict_eval.scorers.choice_accuracy",
    "text_match": "conflict_eval.scorers.text_match",
    "user_needs": "conflict_eval.plugins.user_needs",
    "user_need_accuracy": "conflict_eval.scorers.user_needs",
    "atomr": "conflict_eval.plugins.atomr",
    "knowledge_sources": "conflict_eval.plugins.knowledge_sources",
    "conflictscore": "conflict_eval.scorers.conflictscore",
    "conflictbench": "conflict_eval.plugins.conflictbench",
    "kre": "conflict_eval.plugins.kre",
    "conflictbank": "conflict_eval.plugins.conflictbank",
    "baselines": "conflict_eval.plugins.baselines",
    "ramdocs": "conflict_eval.plugins.ramdocs",
    "madam_rag": "conflict_eval.plugins.madam_rag",
    "conflictqa": "conflict_eval.plugins.conflictqa",
    "truthfulqa": "conflict_eval.plugins.truthfulqa",
    "microact_metrics": "conflict_eval.scorers.microact",
    "atomr_metrics": "conflict_eval.scorers.atomr",
    "ramdocs_metrics": "conflict_eval.scorers.ramdocs",
    "conflictqa_metrics": "conflict_eval.scorers.conflictqa",
    "conflict_exposure_metrics": "conflict_eval.scorers.conflict_exposure",
}
BUILTIN_DISTRIBUTION = "conflict-eval"
"""The distribution named on a built-in component (as an entry point of this package had)."""


class PluginError(RuntimeError):
    """A plugin is broken or conflicts with another plugin."""


class PluginWarning(UserWarning):
    """A plugin source that loads but registers nothing (``--plugin os``)."""


class UnknownComponentError(LookupError):
    """A method, dataset or metric name that no installed plugin registers."""

    def __str__(self) -> str:  # LookupError would quote the message
        return str(self.args[0])


@dataclass(frozen=True)
class Component:
    """One registered method, dataset or metric."""

    kind: Kind
    name: str
    factory: Callable[..., Any]
    plugin: str
    """Name of the plugin (entry-point name) that registered it."""
    distribution: str | None
    """Distribution (pip package) the plugin came from, if any."""
    origin: str = "entry point"
    """Where the plugin came from: ``entry point``, ``file PATH`` (and by which
    setting), ``module NAME`` or ``registered at run time``."""

    def parameters(self) -> dict[str, inspect.Parameter]:
        """The factory's keyword parameters, by name."""
        return dict(inspect.signature(self.factory).parameters)


_lock = threading.RLock()
_manager: pluggy.PluginManager | None = None
_manager_env: str | None = None
_extra_plugins: list[tuple[object, str]] = []
_cli_sources: list[str] = []
_origins: dict[str, str] = {}
_components: dict[Kind, dict[str, Component]] | None = None


def _load_source(spec: str, setting: str) -> tuple[object, str, str]:
    """Import a plugin given as a file, package directory or module name.

    Returns ``(module, plugin name, origin)``; raises :class:`PluginError`
    naming the setting and the entry on any problem.
    """
    looks_like_path = spec.endswith(".py") or os.sep in spec or (os.altsep and os.altsep in spec)
    path = Path(spec).expanduser()
    if path.is_dir() and (path / "__init__.py").is_file():
        path = path / "__init__.py"
    if path.is_file() and path.suffix == ".py":
        path = path.resolve()
        name = path.parent.name if path.name == "__init__.py" else path.stem
        digest = hashlib.sha256(str(path).encode("utf-8")).hexdigest()[:10]
        module_name = f"conflict_eval_file_plugin_{name}_{digest}"
        module = sys.modules.get(module_name)
        if module is None:
            location = {"submodule_search_locations": [str(path.parent)]} if path.name == "__init__.py" else {}
            mspec = importlib.util.spec_from_file_location(module_name, path, **location)
            if mspec is None or mspec.loader is None:
                raise PluginError(f"{setting}: cannot load plugin file {spec!r}")
            module = importlib.util.module_from_spec(mspec)
            sys.modules[module_name] = module
            try:
                mspec.loader.exec_module(module)
            except SystemExit as exc:
                del sys.modules[module_name]
                raise PluginError(f"{setting}: plugin file {spec!r} called sys.exit({exc.code!r}) "
                                  "while being imported; a plugin must not end the process") from None
            except Exception as exc:
                del sys.modules[module_name]
                raise PluginError(f"{setting}: plugin file {spec!r} failed to import: "
                                  f"{type(exc).__name__}: {exc}") from exc
        return module, name, f"file {path}, via {setting}"
    if looks_like_path:
        raise PluginError(f"{setting}: no such plugin file {spec!r} (expected a .py file, a package "
                          "directory or an importable module name)")
    try:
        module = importlib.import_module(spec)
    except SystemExit as exc:
        raise PluginError(f"{setting}: plugin module {spec!r} called sys.exit({exc.code!r}) while being "
                          "imported; a plugin must not end the process") from None
    except ImportError as exc:
        raise PluginError(f"{setting}: cannot import plugin module {spec!r}: {exc}") from exc
    except Exception as exc:
        raise PluginError(f"{setting}: plugin module {spec!r} failed to import: "
                          f"{type(exc).__name__}: {exc}") from exc
    return module, spec, f"module {spec}, via {setting}"


def _source_specs() -> list[tuple[str, str]]:
    env = [s.strip() for s in os.environ.get(ENV_VAR, "").split(os.pathsep) if s.strip()]
    return [(s, ENV_VAR) for s in env] + [(s, "--plugin") for s in _cli_sources]


def _new_manager() -> pluggy.PluginManager:
    pm = pluggy.PluginManager(PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    for name, module in DEFAULT_PLUGINS.items():
        pm.register(importlib.import_module(module), name=name)
    # an older install's entry points of the same names are skipped by pluggy (name taken)
    pm.load_setuptools_entrypoints(PROJECT_NAME)
    origins = {name: "built-in" if name in DEFAULT_PLUGINS else "entry point"
               for name, _ in pm.list_name_plugin() if name is not None}
    loaded: set[int] = set()
    for spec, setting in _source_specs():
        module, name, origin = _load_source(spec, setting)
        if id(module) in loaded:  # the same file named twice
            continue
        if pm.get_plugin(name) is not None or pm.is_registered(module):
            raise PluginError(
                f"{setting}: plugin {name!r} from {spec!r} is already registered "
                f"(by {origins.get(name, 'another plugin')}; plugins: {', '.join(_plugin_names(pm))})"
            )
        pm.register(module, name=name)
        origins[name] = origin
        loaded.add(id(module))
        if not pm.get_hookcallers(module):
            warnings.warn(
                f"{setting}: {spec!r} implements none of the conflict_eval hooks "
                f"({', '.join((*_HOOKS.values(), *EXTENSION_HOOKS))}, each marked with @conflict_eval.hookimpl); "
                "it registers nothing", PluginWarning, stacklevel=2)
    for plugin, name in _extra_plugins:
        if pm.get_plugin(name) is not None or pm.is_registered(plugin):
            raise PluginError(
                f"plugin {name!r} is already registered "
                f"(plugins: {', '.join(_plugin_names(pm))})"
            )
        pm.register(plugin, name=name)
        origins[name] = "registered at run time"
    _check_hooks(pm)
    _origins.clear()
    _origins.update(origins)
    return pm


def _plugin_names(pm: pluggy.PluginManager) -> list[str]:
    return sorted(n for n, _ in pm.list_name_plugin() if n is not None)


def _check_hooks(pm: pluggy.PluginManager) -> None:
    """Fail on hook implementations that match no spec (e.g. a typo)."""
    known = {*_HOOKS.values(), *EXTENSION_HOOKS}
    problems = []
    for name, plugin in pm.list_name_plugin():
        for attr in dir(plugin):
            fn = getattr(plugin, attr, None)
            if callable(fn) and pm.parse_hookimpl_opts(plugin, attr) is not None:
                if attr not in known:
                    problems.append(
                        f"plugin {name!r} implements unknown hook {attr!r} "
                        f"(known hooks: {', '.join(sorted(known))})"
                    )
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        problems.append(f"plugin {exc.plugin!r}: {exc}")
    if problems:
        raise PluginError("; ".join(problems))


def plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager (entry points loaded on first use)."""
    global _manager, _manager_env, _components
    with _lock:
        env = os.environ.get(ENV_VAR, "")
        if _manager is None or env != _manager_env:
            _manager, _components = None, None
            _builtin_cache.clear()
            _manager = _new_manager()
            _manager_env = env
        return _manager


def add_plugin_source(spec: str) -> None:
    """Load plugins from a file, package directory or module name (``--plugin``)
    next to the entry-point ones; raises :class:`PluginError` if it cannot."""
    global _manager, _components
    with _lock:
        _cli_sources.append(spec)
        try:
            _manager, _components = None, None
            _builtin_cache.clear()
            components()
        except Exception:
            _cli_sources.pop()
            _manager, _components = None, None
            _builtin_cache.clear()
            raise


def clear_plugin_sources() -> None:
    """Forget every ``--plugin`` source (tests)."""
    global _manager, _components
    with _lock:
        _cli_sources.clear()
        _manager, _components = None, None
        _builtin_cache.clear()


def register_plugin(plugin: object, name: str) -> None:
    """Add a plugin at run time (tests, notebooks), as if it had an entry point.

    It takes part in the same duplicate and unknown-hook checks as installed
    plugins. Undo with :func:`unregister_plugin`.
    """
    global _manager, _components
    with _lock:
        _extra_plugins.append((plugin, name))
        try:
            _manager, _components = None, None
            _builtin_cache.clear()
            components()  # surface duplicates now, not at first lookup
        except Exception:
            _extra_plugins.pop()
            _manager, _components = None, None
            _builtin_cache.clear()
            raise


def unregister_plugin(name: str) -> None:
    """Remove a plugin added with :func:`register_plugin`."""
    global _manager, _components
    with _lock:
        _extra_plugins[:] = [(p, n) for p, n in _extra_plugins if n != name]
        _manager, _components = None, None
        _builtin_cache.clear()


def _distributions(pm: pluggy.PluginManager) -> dict[int, str]:
    """Distribution name by plugin id (each METADATA file is parsed once); the
    built-ins registered in code carry this package's name."""
    found = {id(p): dist.metadata["name"] for p, dist in pm.list_plugin_distinfo()}
    for name in DEFAULT_PLUGINS:
        plugin = pm.get_plugin(name)
        if plugin is not None:
            found[id(plugin)] = BUILTIN_DISTRIBUTION
    return found


def _collect(pm: pluggy.PluginManager, kind: Kind, impls: list | None = None) -> dict[str, Component]:
    hook = getattr(pm.hook, _HOOKS[kind])
    found: dict[str, Component] = {}
    distributions = _distributions(pm)
    # call each implementation on its own so every name keeps its plugin
    for impl in reversed(hook.get_hookimpls() if impls is None else impls):  # registration order
        plugin_name = pm.get_name(impl.plugin) or repr(impl.plugin)
        try:
            result = impl.function()
        except SystemExit as exc:
            raise PluginError(
                f"plugin {plugin_name!r} called sys.exit({exc.code!r}) in {_HOOKS[kind]}; "
                "a plugin must not end the process"
            ) from None
        except Exception as exc:
            raise PluginError(
                f"plugin {plugin_name!r} failed in {_HOOKS[kind]}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        if result is None:
            continue
        if not hasattr(result, "items"):
            raise PluginError(
                f"plugin {plugin_name!r}: {_HOOKS[kind]} must return a mapping "
                f"of name -> factory, got {type(result).__name__}"
            )
        for name, factory in result.items():
            if not isinstance(name, str) or not callable(factory):
                raise PluginError(
                    f"plugin {plugin_name!r}: {_HOOKS[kind]} entry {name!r} "
                    "must map a string to a callable factory"
                )
            if name in found:
                raise PluginError(
                    f"{kind} {name!r} is registered by two plugins: "
                    f"{found[name].plugin!r} and {plugin_name!r}"
                )
            found[name] = Component(
                kind, name, factory, plugin_name, distributions.get(id(impl.plugin)),
                _origins.get(plugin_name, "entry point"),
            )
    return dict(sorted(found.items()))


def _of_kind(kind: Kind) -> dict[str, Component]:
    """The components of one kind, collected on first use (a lookup of a
    method does not run every plugin's source hook, and so on)."""
    global _components
    with _lock:
        pm = plugin_manager()  # rebuilt when CONFLICT_EVAL_PLUGINS changed
        if _components is None:
            _components = {}
        if kind not in _components:
            _components[kind] = _collect(pm, kind)
        return _components[kind]


def components() -> dict[Kind, dict[str, Component]]:
    """Everything the installed plugins register, by kind and name."""
    return {kind: _of_kind(kind) for kind in KINDS}


def _is_builtin(distribution: str | None) -> bool:
    return distribution is not None and distribution.replace("-", "_").lower() == PROJECT_NAME


def _lookup_builtin(kind: Kind, name: str) -> Component | None:
    """Find a built-in ``name`` without importing every other plugin.

    ``registry.yaml`` says which built-in plugin registers each built-in name
    (a test keeps it true), so only that plugin's hook runs -- plus every
    other plugin's (third-party, file or run-time), so that one registering
    the same name is still the usual duplicate error.  None: not a listed
    built-in (the caller then collects everything).
    """
    from conflict_eval.components.catalog import entry

    listed = entry(kind, name)
    if not listed:
        return None
    pm = plugin_manager()
    distributions = _distributions(pm)
    impls = [
        impl
        for impl in getattr(pm.hook, _HOOKS[kind]).get_hookimpls()
        if pm.get_name(impl.plugin) == listed.get("plugin")
        or not _is_builtin(distributions.get(id(impl.plugin)))
    ]
    return _collect(pm, kind, impls).get(name)


_builtin_cache: dict[tuple[Kind, str], Component] = {}


def lookup(kind: Kind, name: str) -> Component:
    """The component ``name`` of ``kind``; unknown names list what is installed."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {KINDS}")
    with _lock:
        plugin_manager()  # rebuilt (and the cache below cleared) when CONFLICT_EVAL_PLUGINS changed
        if _components is None or kind not in _components:
            if (kind, name) not in _builtin_cache:
                component = _lookup_builtin(kind, name)
                if component is not None:
                    _builtin_cache[(kind, name)] = component
            if (kind, name) in _builtin_cache:
                return _builtin_cache[(kind, name)]
    registered = _of_kind(kind)
    if name not in registered:
        listing = ", ".join(f"{c.name} ({c.plugin})" for c in registered.values())
        close = did_you_mean(name, list(registered))
        hint = f" Did you mean {' or '.join(map(repr, close))}?" if close else ""
        raise UnknownComponentError(
            f"unknown {kind} {name!r}.{hint} Installed {kind}s: {listing or 'none'}"
        )
    return registered[name]


def did_you_mean(name: object, known: list[str], n: int = 3) -> list[str]:
    """Close matches for an unknown ``name`` (difflib), best first."""
    import difflib

    return difflib.get_close_matches(str(name), known, n=n, cutoff=0.6)


def get_method(name: str) -> Component:
    return lookup("method", name)


def get_dataset(name: str) -> Component:
    return lookup("dataset", name)


def get_metric(name: str) -> Component:
    return lookup("metric", name)


def get_source(name: str) -> Component:
    return lookup("source", name)


def add_plugin_commands(sub) -> None:
    """Every plugin's own ``conflict-eval`` sub-commands (hook ``conflict_eval_add_cli_commands``);
    a command name used twice is a :class:`PluginError` naming it."""
    import argparse

    try:
        plugin_manager().hook.conflict_eval_add_cli_commands(sub=sub)
    except argparse.ArgumentError as exc:  # a name taken by the core or another plugin
        raise PluginError(f"a plugin's conflict-eval command clashes with another: {exc}") from None


def lmeval_exports() -> dict[str, Callable[..., Any]]:
    """``{name: function}`` every plugin exports to lm-eval (hook ``conflict_eval_lmeval_exports``);
    a name exported twice is a :class:`PluginError` naming both plugins."""
    pm = plugin_manager()
    out: dict[str, Callable[..., Any]] = {}
    owner: dict[str, str] = {}
    for impl in reversed(pm.hook.conflict_eval_lmeval_exports.get_hookimpls()):  # registration order
        found = impl.function()
        if not isinstance(found, dict):
            raise PluginError(f"plugin {impl.plugin_name!r}: conflict_eval_lmeval_exports must return a mapping "
                              f"{{name: function}}, got {type(found).__name__}")
        for name, fn in found.items():
            if name in out:
                raise PluginError(f"lm-eval export {name!r} is exported by plugins {owner[name]!r} and "
                                  f"{impl.plugin_name!r}")
            out[name], owner[name] = fn, impl.plugin_name
    return out


def reply_readers():
    """Every reply reader: the core's own (``answers.fuzz.CORE_PARSERS``,
    ``answers.readers.CORE_CHAINS``) then each plugin's declaration (hook
    ``conflict_eval_reply_readers``), in registration order, as one
    :class:`~conflict_eval.answers.readers.ReplyReaders`. A parser entry without
    an ``owner`` gets its plugin's name; a parser or chain name declared twice
    is a :class:`PluginError` naming both owners."""
    from dataclasses import replace

    from conflict_eval.answers.fuzz import CORE_PARSERS
    from conflict_eval.answers.readers import CORE_CHAINS, ReplyReaders

    pm = plugin_manager()
    parsers, chains, shapes, tokens = list(CORE_PARSERS), list(CORE_CHAINS), [], []
    owners = {("parser", p.name): "the core" for p in parsers} | {("chain", c.name): "the core" for c in chains}
    for impl in pm.hook.conflict_eval_reply_readers.get_hookimpls():  # registration order
        found = impl.function()
        if not isinstance(found, ReplyReaders):
            raise PluginError(f"plugin {impl.plugin_name!r}: conflict_eval_reply_readers must return a "
                              f"conflict_eval.answers.readers.ReplyReaders, got {type(found).__name__}")
        for what, items in (("parser", found.parsers), ("chain", found.chains)):
            for item in items:
                if (what, item.name) in owners:
                    raise PluginError(f"reply {what} {item.name!r} is declared by {owners[(what, item.name)]} and "
                                      f"by plugin {impl.plugin_name!r}")
                owners[(what, item.name)] = f"plugin {impl.plugin_name!r}"
        parsers += [p if p.owner else replace(p, owner=impl.plugin_name) for p in found.parsers]
        chains += found.chains
        shapes += [Path(s) for s in found.shapes]
        tokens += [t for t in found.tokens if t not in tokens]
    return ReplyReaders(parsers=tuple(parsers), chains=tuple(chains), shapes=tuple(shapes), tokens=tuple(tokens))
