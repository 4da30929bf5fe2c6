"""Batch APIs in suites: the ``batch:`` of a model entry and ``--batch`` on the command line.

The value is Inspect's ``GenerateConfig.batch`` and is passed to it unchanged
(inspect_ai 0.3.285): ``true`` (batches of Inspect's default size), a positive
integer (the batch size), or a mapping of ``BatchConfig`` fields (``size``,
``max_size``, ``send_delay``, ``tick``, ``max_batches``,
``max_consecutive_check_failures``). Inspect batches only for providers with a
batch API (:data:`conflict_eval.pricing.BATCH_PROVIDERS`) and
ignores the setting elsewhere; estimates and budgets price such a model live.
``false`` turns batching off for that model, even under ``suite run --batch``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class BatchSettingError(ValueError):
    """A ``batch`` value Inspect would not accept."""


def check_batch(value: Any) -> None:
    """Raise :class:`BatchSettingError` unless ``value`` is a valid ``GenerateConfig.batch``."""
    from inspect_ai.model import BatchConfig

    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if value < 1:
            raise BatchSettingError(f"batch size must be a positive integer, got {value}")
        return
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(BatchConfig.model_fields))
        if unknown:
            raise BatchSettingError(f"unknown BatchConfig field(s) {', '.join(unknown)} "
                                    f"(allowed: {', '.join(BatchConfig.model_fields)})")
        try:
            BatchConfig(**value)
        except Exception as exc:  # noqa: BLE001 -- pydantic's message names the field
            raise BatchSettingError(f"invalid BatchConfig: {exc}".splitlines()[0]) from None
        return
    raise BatchSettingError(f"batch must be true/false, a batch size or a mapping of BatchConfig fields, got {value!r}")


def batch_problem(value: Any) -> str | None:
    """What is wrong with a ``batch`` value, or ``None`` (also for no value)."""
    if value is None:
        return None
    try:
        check_batch(value)
    except BatchSettingError as exc:
        return str(exc)
    return None


def generate_batch(value: Any):
    """The ``GenerateConfig.batch`` object for a checked value (a mapping becomes a ``BatchConfig``)."""
    from inspect_ai.model import BatchConfig

    return BatchConfig(**value) if isinstance(value, dict) else value


def parse_batch_flag(text: str | None) -> bool | int | dict | None:
    """``--batch`` as Inspect's CLI reads it: bare (``"true"``), a size, or a YAML/JSON file of BatchConfig fields."""
    if text is None:
        return None
    t = text.strip()
    if t.lower() in ("", "true", "yes", "on"):
        return True
    if t.lower() in ("false", "no", "off"):
        return False
    if t.isdigit():
        value: Any = int(t)
    elif Path(t).is_file():  # JSON when the text starts with "{", else YAML: Inspect's rule, as for the cost config
        from conflict_eval.records.config_files import read_config

        try:
            value = read_config(t, f"--batch {t}")
        except ValueError as exc:
            raise BatchSettingError(str(exc)) from None
    else:
        raise BatchSettingError(f"bad --batch {text!r}: give nothing, a batch size, or a YAML/JSON file of "
                                "BatchConfig fields")
    try:
        check_batch(value)
    except BatchSettingError as exc:
        raise BatchSettingError(f"--batch {text}: {exc}") from None
    return value


def with_batch(models: list, batch: Any) -> list:
    """The model specs with ``batch`` set on every model whose entry does not say ``batch: false``."""
    from dataclasses import replace

    if batch is None:
        return models
    return [m if m.batch is False else replace(m, batch=batch) for m in models]
