"""Accuracy against the number of retrieved contexts (Figures 3-8): a table
(Markdown / JSON) and a PNG, from Inspect logs of ``conflict_eval/user_needs``.

    conflict-eval user-needs curves logs/*.eval --out results/user_needs

Panels: overall user-need accuracy (Figure 3), case-level accuracy per user
need (Figure 4), and setting-specific accuracy per user need for Context
Matching, Knowledge Conflict and Information Irrelevant (Figures 6-8; the
challenging settings with the Context Matching condition of §5.3.2).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .levels import (
    SETTINGS,
    TABLE2_MAX_CONTEXTS,
    USER_NEEDS,
    case_accuracy,
    overall_accuracy,
    refusal_rate,
    refusal_split,
    setting_accuracy,
)

LABELS = {"context_exclusive": "Context-Exclusive", "context_first": "Context-First",
          "memory_first": "Memory-First", "matching": "Context Matching",
          "conflict": "Knowledge Conflict", "irrelevant": "Information Irrelevant"}


def rows_from_log(log) -> list[dict[str, Any]]:
    """Per-cell results of one ``EvalLog`` (read with samples), from the
    ``user_need_accuracy`` score of each sample."""
    rows = []
    for s in log.samples or []:
        score = (s.scores or {}).get("user_need_accuracy")
        if score is None:
            raise ValueError(f"log {log.location}: sample {s.id!r} has no user_need_accuracy score")
        md, v = score.metadata or {}, score.value
        rows.append({"question_id": md["question_id"], "user_need": md["user_need"], "setting": md["setting"],
                     "n_contexts": md["n_contexts"], "correct": bool(v["correct"]),
                     "refusal": bool(v["refusal"]), "near_refusal": bool(v.get("near_refusal")),
                     "parse_failure": bool(v["parse_failure"]),
                     "model": str(log.eval.model)})
    return rows


def curve_table(rows: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Long table: one line per (level, user need, setting, n)."""
    rows = list(rows)
    out: list[dict[str, Any]] = []
    for n, v in overall_accuracy(rows).items():
        out.append({"level": "overall", "user_need": None, "setting": None, "n_contexts": n, **v})
    for (u, n), v in case_accuracy(rows).items():
        out.append({"level": "case", "user_need": u, "setting": None, "n_contexts": n, **v})
    refusals = refusal_rate(rows)
    for (u, s, n), v in setting_accuracy(rows).items():
        out.append({"level": "setting", "user_need": u, "setting": s, "n_contexts": n, **v,
                    "refusal_rate": refusals[(u, s, n)]["refusal_rate"]})
    return out


def split_markdown(split: Mapping[str, Any]) -> str:
    """Table 2's refusal / hallucination split as a Markdown section."""
    lines = [f"## Refusal split (Table 2; Context Matching, n <= {TABLE2_MAX_CONTEXTS})", "",
             "Context-Exclusive errors on questions right under Context-First or Memory-First.", "",
             "| cases | refusals | hallucinations | of which near-refusals | parse failures | "
             "refusal share | with near-refusals |", "|---|---|---|---|---|---|---|",
             "| " + " | ".join(_fmt(split[k]) for k in ("cases", "refusals", "hallucinations", "near_refusals",
                                                      "parse_failures", "refusal_share",
                                                      "refusal_share_with_near")) + " |"]
    return "\n".join(lines) + "\n"


def _fmt(v) -> str:
    return "–" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)


def markdown(table: Sequence[Mapping[str, Any]]) -> str:
    cols = ["level", "user_need", "setting", "n_contexts", "accuracy", "right", "n", "given_matching",
            "refusal_rate"]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    lines += ["| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |" for r in table]
    return "\n".join(lines) + "\n"


def plot(table: Sequence[Mapping[str, Any]], out: str | Path, title: str = "") -> Path:
    """Five panels as in Figures 3, 4 and 6-8; x on a log2 scale."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [("overall", None, "Overall user-need accuracy"), ("case", None, "Case-level accuracy")]
    panels += [("setting", s, f"Setting-specific: {LABELS[s]}") for s in SETTINGS]
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.4), sharey=True)
    for ax, (level, setting, name) in zip(axes, panels):
        series = [None] if level == "overall" else list(USER_NEEDS)
        for u in series:
            pts = sorted((r["n_contexts"], r["accuracy"]) for r in table
                         if r["level"] == level and r["user_need"] == u and r["setting"] == setting
                         and r["accuracy"] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                        label=LABELS.get(u, "all user needs") if u else "all user needs")
        ax.set_xscale("log", base=2)
        counts = sorted({r["n_contexts"] for r in table})
        ax.set_xticks(counts, [str(c) for c in counts])
        ax.set_title(name, fontsize=9)
        ax.set_xlabel("number of retrieved contexts")
        ax.set_ylim(-0.02, 1.02)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("accuracy")
    axes[1].legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out


def write_curves(logs: Sequence[Any], out_dir: str | Path, name: str = "user_needs") -> dict[str, Path]:
    """Table (``.md``, ``.json``), plot (``.png``) and Table 2's refusal split
    (in the ``.md`` and ``.refusal_split.json``) per model, from one or more logs."""
    import json

    from inspect_ai.log import read_eval_log

    by_model: dict[str, list[dict[str, Any]]] = {}
    for log in logs:
        log = read_eval_log(log) if isinstance(log, (str, Path)) else log
        for r in rows_from_log(log):
            by_model.setdefault(r["model"], []).append(r)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for model, rows in by_model.items():
        stem = f"{name}_{model.replace('/', '_')}"
        table = curve_table(rows)
        split = refusal_split(rows)
        (out_dir / f"{stem}.md").write_text(f"# {name}: {model}\n\n" + markdown(table) + "\n"
                                            + split_markdown(split), encoding="utf-8")
        (out_dir / f"{stem}.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
        (out_dir / f"{stem}.refusal_split.json").write_text(json.dumps(split, indent=1) + "\n",
                                                            encoding="utf-8")
        written[model] = plot(table, out_dir / f"{stem}.png", title=f"{name} - {model}")
    return written
