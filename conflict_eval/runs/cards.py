"""Reproduction cards: a paper's published number, the exact settings that
produce it here, and the rule that says whether our run reproduces it.

A card is a YAML file in ``conflict_eval/runs/cards/`` (shipped as package
data; ``conflict-eval reproduce list`` shows them) or any file given by path.
Fields (``id`` defaults to the file name)::

    id: microact-kre                # optional; the file's stem
    paper: "Micro-Act (...), arXiv ..."
    source: "Table 1, row 'MICRO-ACT (ours)', column 'GPT-4o-mini / KRE'"
    tasks:                          # one or more Inspect tasks; samples are pooled
      - task: conflict_eval/run
        args: {method: microact, dataset: kre_musique}
    generate: {temperature: 0, top_p: 1, max_tokens: 512}   # Inspect generate config
    metric: accuracy                # per-sample score key (report.logs.score_values);
                                    # "key" also matches "<scorer>.key"
    among: [memory, counter]        # optional: only samples where one of these keys is 1
    scale: 100                      # the paper prints metric x scale (percent: 100)
    paper_n: 2000                   # samples behind the paper's number (null: not stated)
    min_n: 700                      # optional, when paper_n is null: the n the paper states as a bound
    tolerance: 2.0                  # optional, in the paper's units (see verdict)
    results:                        # the paper's numbers, one per model
      - model: GPT-4o-mini          # as the paper names it
        match: [gpt-4o-mini]        # model names (last part of an Inspect model name) it stands for
        value: 51.10                # null: not in the paper text we have (say why in note)
        note: ...
    notes: ...

**Verdict** for each result row: *not comparable* when the paper value is not
known, the model is not one the row stands for, our n differs from
``paper_n`` (or is below ``min_n``), or no sample has the metric; otherwise
*reproduced* when the paper value lies inside our 95% interval
(:func:`conflict_eval.report.stats.interval`: Wilson for 0/1 metrics) or, when
the card states a ``tolerance``, within that distance of our mean; else *not
reproduced*.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from conflict_eval.records.config_files import ConfigFileError, load_yaml, read_yaml

REQUIRED = ("paper", "source", "tasks", "metric", "results")
KNOWN = set(REQUIRED) | {"id", "generate", "among", "scale", "paper_n", "min_n", "tolerance", "notes"}


class CardError(ValueError):
    """A card file that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class PaperResult:
    model: str
    match: tuple[str, ...]
    value: float | None
    note: str | None = None


@dataclass(frozen=True)
class Card:
    id: str
    file: str
    paper: str
    source: str
    tasks: tuple[tuple[str, dict], ...]
    metric: str
    results: tuple[PaperResult, ...]
    generate: dict = field(default_factory=dict)
    among: tuple[str, ...] = ()
    scale: float = 1.0
    paper_n: int | None = None
    min_n: int | None = None
    tolerance: float | None = None
    notes: str | None = None


def _fail(file: str, where: str, why: str):
    raise CardError(f"card {file}: field {where}: {why}")


def _entries(data: dict, key: str, file: str, name: str, name_rule: str,
             known: tuple[str, ...]) -> list[tuple[int, dict]]:
    """``(index, entry)`` of ``data[key]``, a non-empty list of mappings, each
    with a text field ``name`` (else ``name_rule`` is the error) and no field
    outside ``known``. The caller checks the other fields."""
    entries = data[key]
    if not isinstance(entries, list) or not entries:
        _fail(file, key, f"must be a non-empty list of {{{', '.join(known)}}}")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get(name), str):
            _fail(file, f"{key}[{i}].{name}", name_rule)
        extra = set(entry) - set(known)
        if extra:
            _fail(file, f"{key}[{i}].{sorted(extra)[0]}", f"unknown field (known: {', '.join(known)})")
    return list(enumerate(entries))


def parse_card(data: Any, file: str) -> Card:
    """Validate one card's data (``file`` names it in errors)."""
    if not isinstance(data, dict):
        raise CardError(f"card {file}: expected a mapping of fields, got {type(data).__name__}")
    for key in REQUIRED:
        if key not in data:
            _fail(file, key, "missing")
    for key in data:
        if key not in KNOWN:
            _fail(file, key, f"unknown field (known: {', '.join(sorted(KNOWN))})")
    for key in ("paper", "source", "metric"):
        if not isinstance(data[key], str) or not data[key].strip():
            _fail(file, key, "must be non-empty text")
    parsed_tasks = []
    for i, t in _entries(data, "tasks", file, "task", "must name an Inspect task, e.g. conflict_eval/run",
                         ("task", "args")):
        args = t.get("args") or {}
        if not isinstance(args, dict):
            _fail(file, f"tasks[{i}].args", "must be a mapping of task arguments")
        parsed_tasks.append((t["task"], dict(args)))
    parsed_results = []
    for i, r in _entries(data, "results", file, "model", "must name the paper's model",
                         ("model", "match", "value", "note")):
        if "value" not in r:
            _fail(file, f"results[{i}].value", "missing (null when the paper text does not give it)")
        value = r["value"]
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)):
            _fail(file, f"results[{i}].value", f"must be a number or null, got {value!r}")
        if value is None and not r.get("note"):
            _fail(file, f"results[{i}].note", "a null value needs a note saying why")
        match = r.get("match") or [r["model"]]
        if not isinstance(match, list) or not all(isinstance(m, str) and m for m in match):
            _fail(file, f"results[{i}].match", "must be a list of model names")
        parsed_results.append(PaperResult(r["model"], tuple(m.lower() for m in match),
                                          None if value is None else float(value), r.get("note")))
    for key, kind, what in (("paper_n", int, "a positive integer or null"), ("min_n", int, "a positive integer or null"),
                            ("scale", int | float, "a positive number"), ("tolerance", int | float, "a positive number")):
        v = data.get(key)
        if v is not None and (isinstance(v, bool) or not isinstance(v, kind) or v < 0
                              or (v == 0 and key != "tolerance")):
            _fail(file, key, f"must be {what}, got {v!r}")
    generate = data.get("generate") or {}
    if not isinstance(generate, dict):
        _fail(file, "generate", "must be a mapping of Inspect generate options")
    among = data.get("among") or []
    if not isinstance(among, list) or not all(isinstance(a, str) for a in among):
        _fail(file, "among", "must be a list of score keys")
    stem = Path(file).stem
    card_id = data.get("id", stem)
    if not isinstance(card_id, str) or not card_id:
        _fail(file, "id", "must be non-empty text")
    return Card(id=card_id, file=file, paper=data["paper"].strip(), source=data["source"].strip(),
                tasks=tuple(parsed_tasks), metric=data["metric"], results=tuple(parsed_results),
                generate=dict(generate), among=tuple(among), scale=float(data.get("scale") or 1.0),
                paper_n=data.get("paper_n"), min_n=data.get("min_n"),
                tolerance=None if data.get("tolerance") is None else float(data["tolerance"]),
                notes=data.get("notes"))


def load_card_file(path: str | Path) -> Card:
    path = Path(path)
    try:
        data = read_yaml(path)
    except ConfigFileError as exc:
        raise CardError(f"card {exc}") from None
    return parse_card(data, path.name)


def shipped_card_files() -> list:
    folder = files("conflict_eval.runs") / "cards"
    return sorted((f for f in folder.iterdir() if f.name.endswith(".yaml")), key=lambda f: f.name)


def shipped_cards() -> list[Card]:
    """Every card shipped in ``conflict_eval/runs/cards/``, validated."""
    cards = []
    for f in shipped_card_files():
        try:
            data = load_yaml(f.read_text(encoding="utf-8"), f.name)
        except ConfigFileError as exc:
            raise CardError(f"card {exc}") from None
        cards.append(parse_card(data, f.name))
    return cards


def find_card(name: str) -> Card:
    """A shipped card by id, or a card file by path."""
    if name.endswith((".yaml", ".yml")) or Path(name).is_file():
        return load_card_file(name)
    cards = {c.id: c for c in shipped_cards()}
    if name not in cards:
        raise CardError(f"no card {name!r} (cards: {', '.join(sorted(cards))}); or give a card file's path")
    return cards[name]


# --------------------------------------------------------------------------
# comparing


def metric_values(samples_scores: list[dict[str, float]], metric: str, among: tuple[str, ...] = ()) -> list[float]:
    """Per-sample values of ``metric`` (key ``metric`` or ``<scorer>.metric``),
    keeping only samples where one of ``among`` is 1 when given."""
    def pick(values: dict[str, float], key: str) -> float | None:
        if key in values:
            return values[key]
        hits = [k for k in values if k.endswith("." + key)]
        if len(hits) > 1:
            raise ValueError(f"metric {key!r} is ambiguous in these scores: {', '.join(sorted(hits))}")
        return values[hits[0]] if hits else None

    out = []
    for values in samples_scores:
        if among and not any(pick(values, a) == 1 for a in among):
            continue
        v = pick(values, metric)
        if v is not None and not math.isnan(v):
            out.append(v)
    return out


@dataclass(frozen=True)
class Comparison:
    model: str
    paper_value: float | None
    ours: float | None
    ci: tuple[float, float] | None
    ci_method: str | None
    n: int
    verdict: str
    why: str
    ours_model: str = ""
    data: str = ""  # the data file(s) our value comes from, with sha256


def model_matches(result: PaperResult, model: str) -> bool:
    short = model.lower().rstrip("/").split("/")[-1]
    return short in result.match or model.lower() in result.match


def compare(card: Card, model: str, values: list[float], data: str = "") -> list[Comparison]:
    """One :class:`Comparison` per paper result of ``card`` for our ``values`` on ``model``
    (``data``: the data file(s) and sha256 the values come from, see :func:`data_of_logs`)."""
    from conflict_eval.report.stats import interval

    n = len(values)
    ours = sum(values) / n if n else None
    ci, method = interval(values) if n else (None, None)
    rows = []
    for r in card.results:
        verdict, why = _verdict(card, r, model, ours, ci, n)
        rows.append(Comparison(r.model, r.value, ours, ci, method, n, verdict, why, model, data))
    return rows


def data_of_logs(logs) -> str:
    """``file (sha256 ...)`` of each dataset the logs ran, from the task metadata
    ``conflict_eval_provenance`` recorded at run time (no local directory)."""
    seen = []
    for log in logs:
        rec = ((log.eval.metadata or {}).get("conflict_eval_provenance") or {}).get("dataset") or {}
        file = Path(str(rec.get("file") or "data file not recorded")).name
        item = f"{file} (sha256 {rec.get('sha256') or 'not recorded'})"
        if item not in seen:
            seen.append(item)
    return "; ".join(seen) or "not recorded"


def _verdict(card: Card, r: PaperResult, model: str, ours, ci, n: int) -> tuple[str, str]:
    nc = "not comparable"
    reasons = []  # every reason, not the first
    if r.value is None:
        reasons.append(r.note or "the paper value is not in the paper text")
    if not model_matches(r, model):
        reasons.append(f"different model (ours: {model}; paper: {r.model})")
    if card.paper_n is not None and n != card.paper_n:
        reasons.append(f"different n ({n}; paper: {card.paper_n})")
    if card.paper_n is None and card.min_n is not None and n < card.min_n:
        reasons.append(f"n {n} below the paper's {card.min_n}")
    if ours is None:
        reasons.append("no sample has the metric")
    if reasons:
        return nc, "; ".join(reasons)
    paper = r.value / card.scale
    if ci is not None and ci[0] <= paper <= ci[1]:
        return "reproduced", "paper value inside our 95% interval"
    if card.tolerance is not None and abs(ours - paper) <= card.tolerance / card.scale:
        return "reproduced", f"within the stated tolerance {card.tolerance:g}"
    return "not reproduced", ("paper value outside our 95% interval"
                              + (f" and beyond the tolerance {card.tolerance:g}" if card.tolerance is not None else ""))


def render_comparisons(card: Card, rows: list[Comparison]) -> str:
    """Plain-text table: paper value, ours with interval (in the paper's units), n, verdict."""
    s = card.scale

    def num(x):
        return "n/a" if x is None else f"{x * s:.2f}" if s != 1 else f"{x:.4f}"

    head = ("paper model", "paper", "ours [95% CI]", "n", "verdict", "why")
    lines = [head]
    for c in rows:
        ours = "n/a" if c.ours is None else f"{num(c.ours)} [{num(c.ci[0])}, {num(c.ci[1])}]" if c.ci else num(c.ours)
        paper = "n/a" if c.paper_value is None else (f"{c.paper_value:.2f}" if s != 1 else f"{c.paper_value:.4f}")
        lines.append((c.model, paper, ours, str(c.n), c.verdict, c.why))
    widths = [max(len(r[i]) for r in lines) for i in range(len(head))]
    out = ["  ".join(v.ljust(w) for v, w in zip(r, widths)).rstrip() for r in lines]
    out.insert(1, "  ".join("-" * w for w in widths))
    method = next((c.ci_method for c in rows if c.ci_method), None)
    unit = f" (x{s:g})" if s != 1 else ""
    out.append(f"metric: {card.metric}{unit}; interval: {method or 'n/a'}; "
               f"paper n: {card.paper_n if card.paper_n is not None else 'not stated'}")
    if rows:
        out.append(f"ours: model {rows[0].ours_model or 'not recorded'}; data {rows[0].data or 'not recorded'}; "
                   f"n {rows[0].n}")
    return "\n".join(out)
