"""The three accuracy levels of §4.3 and the refusal split of Table 2, as pure
functions over per-cell results.

A result row is a mapping with ``question_id``, ``user_need``, ``setting``,
``n_contexts``, ``correct`` (bool), ``refusal`` (bool) and ``parse_failure``
(bool). Every function groups by ``n_contexts`` so curves can be drawn; a
group that lacks a cell the definition needs is *not counted* (and the count
``n`` in the result says how many questions were), so a partial grid never
silently counts as wrong.

* **overall** (§4.3.1): a question is right at ``n`` iff every user need x
  setting cell present for it is right, and all 9 cells are present.
* **case-level** (§4.3.2): right under user need ``u`` iff all three settings
  are right.
* **setting-specific** (§4.3.3, §5.3.2): for Context Matching, the cell
  itself; for Knowledge Conflict and Information Irrelevant, the cell *and*
  the same question's Context Matching cell under the same user need and ``n``
  must be right ("the same question need to be also answered correctly in
  Context Matching settings"). We read that as a joint condition over all
  questions (the paper's Figures 11-12 are titled "Context Matching &
  Knowledge Conflict"); ``given_matching`` reports the conditional variant
  (denominator = questions right under Context Matching) as well.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

USER_NEEDS = ("context_exclusive", "context_first", "memory_first")
SETTINGS = ("matching", "conflict", "irrelevant")

Rows = Iterable[Mapping[str, Any]]


def _cells(rows: Rows) -> dict[tuple[str, int], dict[tuple[str, str], Mapping[str, Any]]]:
    """``{(question, n): {(user_need, setting): row}}``; a repeated cell is an error."""
    out: dict[tuple[str, int], dict[tuple[str, str], Mapping[str, Any]]] = defaultdict(dict)
    for r in rows:
        key, cell = (str(r["question_id"]), int(r["n_contexts"])), (r["user_need"], r["setting"])
        if cell in out[key]:
            raise ValueError(f"question {key[0]!r} n={key[1]}: cell {cell} appears twice")
        out[key][cell] = r
    return out


def _ratio(right: int, total: int) -> dict[str, Any]:
    # empty group: accuracy undefined -> None (never 0)
    return {"accuracy": right / total if total else None, "right": right, "n": total}


def overall_accuracy(rows: Rows) -> dict[int, dict[str, Any]]:
    """``{n: {"accuracy", "right", "n"}}`` over questions with all 9 cells."""
    per_n: dict[int, list[bool]] = defaultdict(list)
    for (q, n), cells in _cells(rows).items():
        if len(cells) == len(USER_NEEDS) * len(SETTINGS):
            per_n[n].append(all(bool(r["correct"]) for r in cells.values()))
    return {n: _ratio(sum(v), len(v)) for n, v in sorted(per_n.items())}


def case_accuracy(rows: Rows) -> dict[tuple[str, int], dict[str, Any]]:
    """``{(user_need, n): ...}``: right iff all three settings are right."""
    per: dict[tuple[str, int], list[bool]] = defaultdict(list)
    for (q, n), cells in _cells(rows).items():
        for u in USER_NEEDS:
            got = [cells.get((u, s)) for s in SETTINGS]
            if all(g is not None for g in got):
                per[(u, n)].append(all(bool(g["correct"]) for g in got))
    return {k: _ratio(sum(v), len(v)) for k, v in sorted(per.items())}


def setting_accuracy(rows: Rows) -> dict[tuple[str, str, int], dict[str, Any]]:
    """``{(user_need, setting, n): {"accuracy", "right", "n", "given_matching"}}``.

    Conflict/irrelevant cells count only where the Context Matching cell is
    present; ``given_matching`` = right / (questions right under matching)."""
    per: dict[tuple[str, str, int], list[tuple[bool, bool]]] = defaultdict(list)
    for (q, n), cells in _cells(rows).items():
        for (u, s), r in cells.items():
            if s == "matching":
                per[(u, s, n)].append((bool(r["correct"]), True))
                continue
            m = cells.get((u, "matching"))
            if m is None:
                continue
            per[(u, s, n)].append((bool(r["correct"]) and bool(m["correct"]), bool(m["correct"])))
    out = {}
    for key, v in sorted(per.items()):
        res = _ratio(sum(a for a, _ in v), len(v))
        base = sum(m for _, m in v)
        res["given_matching"] = (sum(a for a, _ in v) / base) if base else None
        out[key] = res
    return out


def refusal_rate(rows: Rows) -> dict[tuple[str, str, int], dict[str, Any]]:
    """Share of "I don't know" answers per (user_need, setting, n)."""
    per: dict[tuple[str, str, int], list[bool]] = defaultdict(list)
    for r in rows:
        per[(r["user_need"], r["setting"], int(r["n_contexts"]))].append(bool(r["refusal"]))
    return {k: {"refusal_rate": sum(v) / len(v), "refusals": sum(v), "n": len(v)}
            for k, v in sorted(per.items())}


TABLE2_MAX_CONTEXTS = 4
"""Table 2 analyses "cases with up to four retrieved context segments"."""


def refusal_split(rows: Rows, max_contexts: int | None = TABLE2_MAX_CONTEXTS) -> dict[str, Any]:
    """Table 2: among Context Matching cases wrong under Context-Exclusive but
    right under Context-First or Memory-First (same question and ``n``, ``n``
    at most ``max_contexts``; None = every ``n``), how many Context-Exclusive
    errors are refusals vs hallucinations. Parse failures are counted apart
    (neither). ``refusals`` is the paper's strict "I don't know";
    ``near_refusals`` counts the hallucinations that refuse in other words
    ("I'm not sure"), and ``refusal_share_with_near`` the share if they were
    refusals. We use every such case; the paper sampled the shortest 100."""
    refusals = hallucinations = parse_failures = near = 0
    for (q, n), cells in _cells(rows).items():
        if max_contexts is not None and n > max_contexts:
            continue
        ce = cells.get(("context_exclusive", "matching"))
        others = [cells.get((u, "matching")) for u in ("context_first", "memory_first")]
        if ce is None or ce["correct"] or not any(o is not None and o["correct"] for o in others):
            continue
        if ce["parse_failure"]:
            parse_failures += 1
        elif ce["refusal"]:
            refusals += 1
        else:
            hallucinations += 1
            near += bool(ce.get("near_refusal"))
    total = refusals + hallucinations
    return {"cases": total + parse_failures, "refusals": refusals, "hallucinations": hallucinations,
            "near_refusals": near, "parse_failures": parse_failures,
            "refusal_share": refusals / total if total else None,
            "refusal_share_with_near": (refusals + near) / total if total else None}


def summary(rows: Rows) -> dict[str, Any]:
    """All levels pooled over ``n`` (each (question, n) is one unit)."""
    rows = list(rows)
    pooled: dict[str, float | None] = {}

    def pool(table: Mapping[Any, Mapping[str, Any]], strip) -> dict[str, float | None]:
        acc: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for key, v in table.items():
            name = strip(key)
            acc[name][0] += v["right"]
            acc[name][1] += v["n"]
        return {k: (r / t if t else None) for k, (r, t) in acc.items()}

    pooled.update(pool(overall_accuracy(rows), lambda k: "overall"))
    pooled.update(pool(case_accuracy(rows), lambda k: f"case/{k[0]}"))
    pooled.update(pool(setting_accuracy(rows), lambda k: f"setting/{k[0]}/{k[1]}"))
    return pooled
