"""``conflict_eval/conflict_exposure``: a method on the polluted HotpotQA KB, scored by ACC and KRC.

    conflict-eval build-polluted-kb --source ../shared/data/hotpotqa_ircot/sample.jsonl \\
        --model conflict_eval/smollm2 --limit 20 --out kb.json
    inspect eval conflict_eval/conflict_exposure -T path=kb.json -T pollution=all \\
        --model conflict_eval/smollm2 --limit 2
    inspect eval conflict_eval/conflict_exposure -T path=kb.json -T method=robustrag ...
    inspect eval conflict_eval/conflict_exposure -T path=kb.json -T exposure=false ...     # Table 2
    inspect eval conflict_eval/conflict_exposure -T path=kb.json -T expansion=none ...     # Table 3
    inspect eval conflict_eval/conflict_exposure -T path=kb.json -T expansion=reans -T exposure=false  # Table 4

Other ``-T`` options are routed to the method or the dataset by name.
"""

from typing import Any

from inspect_ai import Task, task

from conflict_eval.components.compose import compose_task

METHODS = ("conflict_exposure", "standard_rag", "robustrag", "astuterag")


@task
def conflict_exposure(
    path: str | None = None,
    method: str = "conflict_exposure",
    pollution: str = "all",
    **options: Any,
) -> Task:
    """Run ``method`` on the yes/no questions of a polluted KB file.

    Args:
        path: the KB file built by ``conflict-eval build-polluted-kb``.
        method: ``conflict_exposure``, ``standard_rag``, ``robustrag`` or ``astuterag``.
        pollution: ``I``, ``II``, ``III``, ``all`` or ``none`` (Tables 1-4 columns).
        **options: method/dataset options (``k``, ``n``, ``retriever``,
            ``expansion``, ``exposure``, ``aggregation``, ``prescreened``, ...).
    """
    if method not in METHODS:
        raise ValueError(f"unknown method {method!r}; expected one of {', '.join(METHODS)}")
    scorers = ["yes_no_accuracy", "knowledge_recall"]
    if method == "conflict_exposure" and str(options.get("exposure", True)).lower() not in ("false", "0"):
        scorers.append("triplet_parsing")  # the rejected-item rate of the extraction replies
    task = compose_task(method, "polluted_kb", scorers, path=path, pollution=pollution,
                        name=f"conflict_exposure_{method}_{pollution}", **options)
    task.metadata = {**(task.metadata or {}),
                     "retrieval": _retrieval(path, pollution, options.get("retriever", "dense"))}
    return task


def _retrieval(path: str | None, pollution: str, retriever: str) -> dict:
    """The ``retrieval`` eval-metadata block: the polluted KB's corpus for ``pollution``."""
    from conflict_eval.retrieval import retrieval_block
    from conflict_eval.kb.format import load_kb

    kb = load_kb(path) if path else None
    passages = len(kb.corpus(pollution)) if kb else None
    external = kb.meta.corpus if kb else None
    if external:
        note = (f"The KB's clean corpus is {external['kind']} {external['name']} ({external['passages']} "
                f"passages; {external['supporting_added']} gold paragraphs missing from it were added) plus "
                "the injected documents.")
    else:
        note = ("The KB pools the HotpotQA paragraphs of the questions it was built from (gold ones included) "
                "plus the injected documents, not the BEIR HotpotQA Wikipedia corpus of Conflict Exposure §4.2 "
                "(build with --corpus for that); comparable with that paper's setting only when built the "
                "same way, not with open-corpus RAG results.")
    return retrieval_block(
        {"polluted_kb": {"corpus": str(path), "passages": passages, "backend": f"{retriever} (in memory)",
                         "clean_corpus": external or "pooled from the source questions"}},
        {"polluted_kb": True}, note=note)
