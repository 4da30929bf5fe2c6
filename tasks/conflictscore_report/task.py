"""``conflict_eval/conflictscore_report``: write a report about the main
entity over conflicting documents with the RAG, Balanced and Super-Balanced
prompts (ConflictScore §5, Tables 9-11), scored by CS-C and CS-R (Table 3).

    inspect eval conflict_eval/conflictscore_report --model conflict_eval/smollm2 \\
        -T path=../shared/data/macnoise_fewshot/sample.jsonl --max-tokens 200

Every source item appears once per strategy (sample ids ``<item>-<strategy>``);
metrics are reported overall and per strategy (``cs_c`` group ``by_strategy``).

Data (see README): the paper samples 100 conflicting ConflictingQA items,
which are not available offline. We use MacNoise records (``question``,
``answers``, ``ctxs`` with ``text_pert``): the documents are the record's
passages in the upstream 50%-perturbation setting (``text_pert`` where
``pert_lbls_50`` is 1), so genuine and
counterfactual passages about the same topic coexist; a record whose
``pert_lbls_50`` swaps none of its passages uses ``pert_lbls`` instead (so
it is not lost); records with no perturbed passage at all, or no passage
title, are dropped and counted by reason in the log (``dropped_records``). The main entity is the most frequent passage
title (the Wikipedia article the passages come from).
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

from dataclasses import asdict

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample

from conflict_eval.components.endpoint import active_endpoint
from conflict_eval.components.catalog import dataset_record
from conflict_eval.plugins.conflictscore.prompts import STRATEGIES
from conflict_eval.plugins.conflictscore.solver import write_report
from conflict_eval.records import BadField, DataNeeded, Row, convert_rows, read_json_or_jsonl
from conflict_eval.scorers.conflictscore.pipeline import DEFAULTS, Backend, ClaimMode, Labelling, Options, takes_options

logger = logging.getLogger(__name__)


#: Why a MacNoise record yields no report item (counted in the eval log's ``dropped_records``).
DROP_NO_PERTURBED = "no perturbed passage (neither pert_lbls_50 nor pert_lbls marks a passage whose text_pert differs)"
DROP_NO_TITLE = "no passage title to name the main entity"


FLAG_FIELDS = ("pert_lbls_50", "pert_lbls")


def _documents(row: Row, ctxs: list) -> tuple[list[str], int, str]:
    """``(documents, perturbed, flag field)``: the passages with ``text_pert``
    where the flag field marks them. ``pert_lbls_50`` (the upstream 50%
    setting) is used; ``pert_lbls`` when the 50% setting swaps no passage
    of this record (or is absent)."""
    for n, ctx in enumerate(ctxs):
        if not isinstance(ctx, dict) or not isinstance(ctx.get("text"), str):
            raise BadField(f"ctxs[{n}]", "expected an object with a 'text' string")
    if not any(name in row for name in FLAG_FIELDS):
        raise BadField("pert_lbls_50", "missing: expected pert_lbls_50 or pert_lbls (0/1 per passage)")
    plain = [ctx["text"] for ctx in ctxs]
    for name in FLAG_FIELDS:
        if name not in row:
            continue
        flags = row.get(name)
        if not isinstance(flags, list) or len(flags) != len(ctxs) or any(f not in (0, 1) for f in flags):
            raise BadField(name, f"expected a 0/1 list as long as ctxs ({len(ctxs)})")
        docs, perturbed = [], 0
        for ctx, flag in zip(ctxs, flags):
            use_pert = flag == 1 and isinstance(ctx.get("text_pert"), str) and ctx["text_pert"] != ctx["text"]
            perturbed += use_pert
            docs.append(ctx["text_pert"] if use_pert else ctx["text"])
        if perturbed:
            return docs, perturbed, name
    return plain, 0, "none"


def report_items(path: str | Path, dropped: dict[str, int] | None = None) -> list[dict]:
    """Report items ``{id, main_entity, documents, question, flags}`` from a
    MacNoise file; records yielding no item are counted by reason in
    ``dropped`` (and logged)."""
    items: list[dict] = []
    skipped: dict[str, int] = {}

    def convert(row: Row):
        ctxs = row.list("ctxs")
        docs, perturbed, flag_field = _documents(row, ctxs)
        titles = [ctx["title"] for ctx in ctxs if ctx.get("title")]
        reason = DROP_NO_PERTURBED if not perturbed else DROP_NO_TITLE if not titles else None
        if reason:
            skipped[reason] = skipped.get(reason, 0) + 1
            return None
        entity = Counter(titles).most_common(1)[0][0]
        items.append({"id": f"macnoise-{len(items)}", "main_entity": entity, "documents": docs,
                      "question": row.text("question"), "flags": flag_field})
        return None

    convert_rows("conflictscore_report", read_json_or_jsonl(path), convert, file=path)
    for reason, n in skipped.items():
        logger.warning("conflictscore_report (%s): %d record(s) dropped: %s", path, n, reason)
        if dropped is not None:
            dropped[reason] = dropped.get(reason, 0) + n
    return items


@task
@takes_options()
def conflictscore_report(
    path: str | None = None,
    strategies: str | list[str] = "rag,balanced,super_balanced",
    claims: ClaimMode = DEFAULTS.claims,
    k: int = DEFAULTS.k,
    labelling: Labelling = DEFAULTS.labelling,
    backend: Backend = DEFAULTS.backend,
    nli_model: str | None = DEFAULTS.nli_model,
    grader_max_tokens: int | None = DEFAULTS.grader_max_tokens,
    grader_dedupe: bool = DEFAULTS.grader_dedupe,
    judge_repeats: int = DEFAULTS.judge_repeats,
    judge_swap: bool = DEFAULTS.judge_swap,
    judge_temperature: float = DEFAULTS.judge_temperature,
) -> Task:
    """Report writing over conflicting documents, scored by ConflictScore.

    Args:
        path: MacNoise file (JSON array or JSONL); required, see README.
        strategies: any of ``rag``, ``balanced``, ``super_balanced``.
        claims, k, labelling, backend, nli_model, grader_max_tokens,
            grader_dedupe, judge_repeats, judge_swap, judge_temperature:
            options of the ``conflictscore`` metric, with its defaults.
    """
    from conflict_eval.scorers.conflictscore.scorer import SCORE_METRICS, conflictscore
    from conflict_eval.scorers.nan_metrics import by_group, defined_mean

    if not path:
        raise DataNeeded("conflictscore_report", "required",
                         "a MacNoise file, e.g. ../shared/data/macnoise_fewshot/sample.jsonl")
    options = Options.of(locals())
    names = [s.strip() for s in strategies.split(",")] if isinstance(strategies, str) else list(strategies)
    bad = [s for s in names if s not in STRATEGIES]
    if bad or not names:
        raise ValueError(f"conflictscore_report strategies {bad or names}: expected some of {list(STRATEGIES)}")
    dropped: dict[str, int] = {}
    items = report_items(path, dropped)
    samples = [
        Sample(id=f"{it['id']}-{s}", input=f"Write a report about {it['main_entity']}",
               metadata={**it, "strategy": s})
        for it in items for s in names
    ]
    if not samples:
        raise ValueError(f"conflictscore_report: no record in {path} has perturbed passages")
    groups = [defined_mean(), by_group("strategy")]
    dataset = MemoryDataset(samples, name="conflictscore_report", location=str(path))
    return Task(
        dataset=dataset,
        solver=write_report(),
        scorer=conflictscore(**asdict(options)),
        metrics={**SCORE_METRICS, "cs_c": groups, "cs_r": groups},
        headline_metric="conflictscore.cs_c",  # ConflictScore Table 3's CS-C (lower is better)
        name="conflictscore_report",
        metadata={"conflict_eval_endpoint": active_endpoint(),  # the endpoint, as run
                  "cluster": "id",  # one record's strategies share its passages: intervals cluster on it
                  "records_used": len(items), "dropped_records": dropped, "dropped_total": sum(dropped.values()),
                  "flags_used": dict(Counter(it["flags"] for it in items)),
                  "conflict_eval_provenance": {"dataset": dataset_record("conflictscore_report", dataset, path)}},
    )
