"""Compose a registered method, dataset and metric into one Inspect task.

Options are given flat (``-T max_turns=4 -T conflict_type=temporal``) and are
routed by name to every part whose factory accepts them; an option no part
accepts is an error that lists what each part accepts. This keeps
``conflict_eval/run`` generic while every factory still validates its own
options before any sample runs.

Which metric scores a dataset
-----------------------------
A dataset declares the metric(s) it is meant to be scored with by decorating
its factory with :func:`declares_metric`::

    from conflict_eval.components.compose import declares_metric

    @declares_metric("yes_no_accuracy", "knowledge_recall")
    def polluted_kb(path=None, ...):
        ...

``conflict_eval/run`` then scores it with those metrics unless
``-T scorer=`` names others. A declared name that no plugin registers is an
error (naming the dataset and its plugin), never a silent fallback. Datasets
that declare nothing keep the generic default (:func:`default_metric`):
``choice_accuracy`` for multiple choice, ``token_f1`` otherwise; the eval
metadata says which rule chose the scorer (``scorer_source``: ``given``,
``declared`` or ``default``). ``choice_accuracy`` on samples without options is
an error whichever way it was chosen.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from conflict_eval.components.catalog import dataset_record
from conflict_eval.components.manager import Component, did_you_mean, get_dataset, get_method, get_metric
from conflict_eval.records import ArgumentError, TaskArgument

DEFAULT_GENERATE_CONFIG: dict[str, Any] = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 512}
"""Greedy decoding with a 512-token budget per call (Micro-Act §7.1). Override with
Inspect's own ``--temperature`` / ``--max-tokens`` flags."""


def _accepts(component: Component) -> tuple[set[str], bool]:
    names, var_kw = set(), False
    for p in inspect.signature(component.factory).parameters.values():
        if p.kind is inspect.Parameter.VAR_KEYWORD:
            var_kw = True
        elif p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.add(p.name)
    return names, var_kw


def route_options(
    parts: Mapping[str, Component], options: Mapping[str, Any], strict: bool = True
) -> dict[str, dict[str, Any]]:
    """Split ``options`` among ``parts`` (``{"method": c, ...}``) by parameter name.

    An option goes to every part that names it. Parts whose factory takes
    ``**kwargs`` only receive options no other part names explicitly.
    """
    accepted = {role: _accepts(c) for role, c in parts.items()}
    routed: dict[str, dict[str, Any]] = {role: {} for role in parts}
    unknown = []
    for key, value in options.items():
        takers = [r for r, (names, _) in accepted.items() if key in names]
        if not takers:
            takers = [r for r, (_, var_kw) in accepted.items() if var_kw]
        if not takers:
            unknown.append(key)
        for role in takers:
            routed[role][key] = value
    if unknown and strict:
        lines = [
            f"  {role_label(role)} {parts[role].name!r}: {', '.join(sorted(names)) or '(no options)'}"
            for role, (names, _) in accepted.items()
        ]
        every = sorted({n for names, _ in accepted.values() for n in names})
        hints = [f"{k} (did you mean {' or '.join(map(repr, close))}?)" if (close := did_you_mean(k, every))
                 else k for k in sorted(unknown)]
        raise ValueError(
            f"unknown option(s) {', '.join(hints)}. Accepted options:\n"
            + "\n".join(lines)
        )
    return routed


def role_label(role: str) -> str:
    """How errors name a part: ``method``, ``dataset``, ``scorer`` (never ``metric0``)."""
    return "scorer" if role.startswith("metric") else role


def _version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("conflict-eval")
    except PackageNotFoundError:
        return None


DECLARED_METRICS_ATTR = "conflict_eval_metrics"
"""Attribute :func:`declares_metric` sets on a dataset factory (a tuple of metric names)."""


def declares_metric(*names: str):
    """Decorate a dataset factory with the metric(s) ``conflict_eval/run`` scores it with.

    ``names`` are registered metric names, in the order their scores are
    listed. ``-T scorer=`` still overrides them.
    """
    if not names or not all(isinstance(n, str) and n for n in names):
        raise ValueError(f"declares_metric needs one or more metric names, got {names!r}")

    def wrap(factory):
        setattr(factory, DECLARED_METRICS_ATTR, tuple(names))
        return factory

    return wrap


def declared_metrics(component: Component) -> tuple[str, ...] | None:
    """The metric names a dataset component declares (:func:`declares_metric`), or None."""
    names = getattr(component.factory, DECLARED_METRICS_ATTR, None)
    return tuple(names) if names else None


def _declared_parts(dataset: Component) -> dict[str, Component]:
    from conflict_eval.components.manager import UnknownComponentError

    parts = {}
    for i, metric_name in enumerate(declared_metrics(dataset) or ()):
        try:
            parts[f"metric{i}"] = get_metric(metric_name)
        except UnknownComponentError as err:
            raise ArgumentError(
                f"dataset {dataset.name!r} (plugin {dataset.plugin!r}) declares metric {metric_name!r}, "
                f"which no installed plugin registers ({err}); install its plugin or pass ",
                TaskArgument("scorer", "NAME")) from None
    return parts


def _check_fits(dataset_name: str, samples, scorer_names: list[str], source: str) -> None:
    """A scorer that cannot read these samples is an error, not a silent 0."""
    if "choice_accuracy" in scorer_names:
        first = next(iter(samples), None)
        if first is not None and not first.choices:
            raise ArgumentError(
                f"scorer 'choice_accuracy' ({source}) cannot score dataset {dataset_name!r}: "
                f"its samples have no answer options (sample {first.id!r}); pass another ",
                TaskArgument("scorer", "NAME"))


def default_metric(dataset) -> str:
    """``choice_accuracy`` for multiple-choice datasets, ``token_f1`` otherwise."""
    first = next(iter(dataset), None)
    return "choice_accuracy" if first is not None and first.choices else "token_f1"


def compose_task(
    method: str,
    dataset: str,
    scorer: str | list[str] | None = None,
    *,
    path: str | None = None,
    name: str | None = None,
    generate_config: Mapping[str, Any] | None = None,
    **options: Any,
):  # -> inspect_ai.Task
    """Build an Inspect ``Task`` from registered parts.

    Args:
        method: registered method name (a solver factory).
        dataset: registered dataset name.
        scorer: registered metric name(s); default: what the dataset
            declares (:func:`declares_metric`), else :func:`default_metric`.
        path: a local file in the dataset's upstream format, instead of the
            download / bundled copy.
        name: task name shown in logs (default ``<method>_<dataset>``).
        generate_config: overrides of :data:`DEFAULT_GENERATE_CONFIG`.
        **options: routed to the parts by parameter name (:func:`route_options`).
    """
    from inspect_ai import Task
    from inspect_ai.model import GenerateConfig

    from conflict_eval.components.endpoint import active_endpoint

    scorer_names = [scorer] if isinstance(scorer, str) else list(scorer or [])
    scorers_given = bool(scorer_names)
    parts: dict[str, Component] = {"method": get_method(method), "dataset": get_dataset(dataset)}
    if scorer_names:
        parts.update({f"metric{i}": get_metric(s) for i, s in enumerate(scorer_names)})
        scorer_source = "given"
    elif declared := _declared_parts(parts["dataset"]):
        parts.update(declared)
        scorer_names = [c.name for c in declared.values()]
        scorer_source = "declared"
    else:
        scorer_source = "default"
    routed = route_options(parts, options, strict=bool(scorer_names))
    ds_options = {**routed["dataset"], **({"path": path} if path is not None else {})}
    samples = parts["dataset"].factory(**ds_options)
    if not scorer_names:  # default by dataset; route the options again with it
        scorer_names = [default_metric(samples)]
        parts["metric0"] = get_metric(scorer_names[0])
        routed = route_options(parts, options)
    _check_fits(dataset, samples, scorer_names, scorer_source)
    solver = parts["method"].factory(**routed["method"])
    scorers = [parts[f"metric{i}"].factory(**routed[f"metric{i}"]) for i in range(len(scorer_names))]
    config = {**DEFAULT_GENERATE_CONFIG, **(generate_config or {})}
    from inspect_ai.log import HeadlineMetric
    from inspect_ai.util import registry_info

    return Task(
        dataset=samples,
        solver=solver,
        scorer=scorers,
        # the first scorer's first score (its own figure: choice accuracy, RAMDocs' strict EM, ...); a named
        # task that composes declares its paper's figure over this (tasks/*/task.py)
        headline_metric=HeadlineMetric(scorer=registry_info(scorers[0]).name.split("/")[-1]),
        config=GenerateConfig(**config),
        name=name or f"{method}_{dataset}",
        metadata={
            "method": method,
            "dataset": dataset,
            "scorers": scorer_names,
            "scorers_given": scorers_given,
            "scorer_source": scorer_source,
            "options": {k: v for k, v in options.items()},
            "path": path,
            "plugins": {
                **{role: c.plugin for role, c in parts.items() if not role.startswith("metric")},
                "scorers": [parts[f"metric{i}"].plugin for i in range(len(scorer_names))],
            },
            "conflict_eval_version": _version(),
            # the endpoint the model is called at (Inspect logs one only when given as a flag)
            "conflict_eval_endpoint": active_endpoint(),
            # a dataset may say where its data came from (e.g. an unpinned hub revision)
            "dataset_provenance": getattr(samples, "provenance", None),
            # file sha256, upstream revision and sample ids' hash, for the report's reproducibility block
            "conflict_eval_provenance": {"dataset": dataset_record(dataset, samples, path)},
            # and a method what it resolved at set-up (e.g. which keyword extractor runs)
            "method_info": getattr(solver, "info", None),
        },
    )
