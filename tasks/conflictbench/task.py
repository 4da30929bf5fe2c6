"""``conflict_eval/conflictbench``: conflict detection with the ConflictScore
labelling (ConflictScore §4, Table 2).

    inspect eval conflict_eval/conflictbench --model conflict_eval/smollm2 \\
        -T subsets=kre_ecqa,kre_ecare -T paths='{kre_ecqa: ../shared/data/kre_ecqa/sample.jsonl, kre_ecare: ../shared/data/kre_ecare/sample.jsonl}' --limit 4

Subsets: ``kre_ecqa`` / ``kre_ecare`` (ConflictBench-style split *derived* from
KRE; downloaded at a pinned commit when no path is given), ``macnoise_nq`` /
``macnoise_tqa``, ``ambigdocs`` and ``conflictingqa`` (upstream files; a path
is required, see plugins/conflictbench/README.md). The labeller is the
evaluated model unless ``--model-role grader=...`` is given; ``-T
backend=nli -T nli_model=DIR`` labels with a local NLI model instead.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.log import HeadlineMetric

from conflict_eval.components.endpoint import active_endpoint
from conflict_eval.records import ArgumentError, TaskArgument
from conflict_eval.scorers.conflictscore.pipeline import ONE_CLAIM, Backend, Labelling, Options, takes_options

SUBSETS = ("kre_ecqa", "kre_ecare", "macnoise_nq", "macnoise_tqa", "ambigdocs", "conflictingqa")


def load_subset(name: str, path: str | None, seed: int, dropped: dict[str, int] | None = None):
    from conflict_eval.records.download import github_file
    from conflict_eval.plugins.conflictbench import dataset as ds

    if name.startswith("kre_"):
        sub = name.removeprefix("kre_")
        file = Path(path) if path else github_file(ds.KRE_REPO, ds.KRE_COMMIT, ds.KRE_FILES[sub])
        return ds.kre_records(file, subset=f"{name}_derived", seed=seed)
    if not path:
        raise ArgumentError(f"conflictbench subset {name!r} needs a path (", TaskArgument("paths", f"{{{name}: FILE}}"),
                            ")")
    if name == "ambigdocs":
        return ds.ambigdocs_records(path, seed=seed)
    if name == "conflictingqa":
        return ds.conflictingqa_records(path)
    return ds.macnoise_records(path, subset=name, seed=seed, dropped=dropped)


@task
@takes_options(ONE_CLAIM, without=("claims", "k"))  # the claim is the input: one claim
def conflictbench(
    subsets: str | list[str] = "kre_ecqa",
    path: str | None = None,
    paths: dict[str, str] | None = None,
    backend: Backend = ONE_CLAIM.backend,
    nli_model: str | None = ONE_CLAIM.nli_model,
    labelling: Labelling = ONE_CLAIM.labelling,
    grader_max_tokens: int | None = ONE_CLAIM.grader_max_tokens,
    shuffle: bool = True,
    seed: int = 0,
    grader_dedupe: bool = ONE_CLAIM.grader_dedupe,
    judge_repeats: int = ONE_CLAIM.judge_repeats,
    judge_swap: bool = ONE_CLAIM.judge_swap,
    judge_temperature: float = ONE_CLAIM.judge_temperature,
) -> Task:
    """Conflict detection over one or more ConflictBench-style subsets.

    Args:
        subsets: comma-separated or list of ``kre_ecqa``, ``kre_ecare``,
            ``macnoise_nq``, ``macnoise_tqa``, ``ambigdocs``, ``conflictingqa``.
        path: file for a single subset.
        paths: ``{subset: file}`` for several.
        backend, nli_model, labelling, grader_max_tokens, grader_dedupe,
            judge_repeats, judge_swap, judge_temperature: labelling options
            (see the ``conflictscore`` metric; its defaults), the ``judge_*``
            ones for the judge panel (``grader``, ``grader_2``, ... roles).
        shuffle: shuffle items (seeded) with Conflict and No Conflict items
            alternating, so ``--limit n`` (n >= 2) sees both labels.
        seed: seed for the Appendix A recipe and the shuffle.
    """
    options = Options.of(locals(), ONE_CLAIM)  # checked here, before any data is read
    from conflict_eval.plugins.conflictbench.detect import detect_conflict
    from conflict_eval.scorers.conflictscore.detection import conflict_detection
    from conflict_eval.records import build_dataset

    names = [s.strip() for s in subsets.split(",")] if isinstance(subsets, str) else list(subsets)
    unknown = [n for n in names if n not in SUBSETS]
    if unknown or not names:
        raise ValueError(f"conflictbench subsets {unknown or names}: expected some of {SUBSETS}")
    if path and len(names) > 1:
        raise ArgumentError("conflictbench: ", TaskArgument("path"), " is for one subset; use ",
                            TaskArgument("paths", "{subset: FILE}"))
    paths = dict(paths or {})
    if path:
        paths[names[0]] = path
    from conflict_eval.plugins.conflictbench.dataset import alternate_labels

    dropped: dict[str, int] = {}
    records = [r for n in names for r in load_subset(n, paths.get(n), seed, dropped)]
    if shuffle:
        records = alternate_labels(records, seed)
    return Task(
        dataset=build_dataset("conflictbench", records),
        solver=detect_conflict(**{n: v for n, v in asdict(options).items() if n not in ("claims", "k")}),
        scorer=conflict_detection(),
        # ConflictScore Table 2's Acc: the mean of the per-sample correctness (P, R, F1 are beside it)
        headline_metric=HeadlineMetric(scorer="conflict_detection", metric="det_accuracy"),
        name="conflictbench",
        metadata={"conflict_eval_endpoint": active_endpoint(),  # the endpoint, as run
                  "dropped_records": dropped, "dropped_total": sum(dropped.values()),
                  "order": "seeded shuffle, Conflict / No Conflict alternating" if shuffle else "file order"},
    )
