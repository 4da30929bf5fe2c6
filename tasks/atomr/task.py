"""``conflict_eval/atomr``: AtomR or a baseline on one of AtomR's benchmarks.

    inspect eval conflict_eval/atomr -T dataset=hotpotqa \\
        -T path=../shared/data/hotpotqa_ircot/sample.jsonl \\
        --model conflict_eval/smollm2 --limit 2

``-T method=atomr|atomr_standard|atomr_cot|atomr_standard_rag``;
``-T sources=text,kg,web`` chooses the knowledge sources (Table 4's
ablation: drop one). Default sources per dataset are those available
offline from the dataset file itself (see :data:`DEFAULT_SOURCES`).
Scored with ``atomr_qa`` (F1 / EM / cover-EM, AtomR normalisation, with a
per-category breakdown).
"""

from inspect_ai import Task, task
from inspect_ai.model import GenerateConfig
from inspect_ai.log import HeadlineMetric

from conflict_eval.components.endpoint import active_endpoint
from conflict_eval.components.catalog import dataset_record

DATASETS = ("hotpotqa", "2wiki", "musique", "crag", "blendqa")
METHODS = ("atomr", "atomr_standard", "atomr_cot", "atomr_standard_rag")
DEFAULT_SOURCES = {"hotpotqa": "text", "2wiki": "text", "musique": "text", "crag": "web",
                   "blendqa": "text,kg"}
"""Single-source datasets use text only (as in the paper); CRAG's offline pages are
web results; BlendQA offline has NQ paragraphs (text) and Wikidata triples (kg),
and adds ``web`` when ``web_api`` is set."""


@task
def atomr(
    dataset: str = "hotpotqa",
    method: str = "atomr",
    sources: str | list[str] | None = None,
    path: str | None = None,
    category: str | list[str] | None = None,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
    text_corpus: str | None = None,
    kg_triples: str | None = None,
    web_pages: str | None = None,
    web_api: bool = False,
    retriever: str = "bm25",
    k: int = 3,
    threshold: float = 0.5,
    tree_tokens: int = 512,
    operator_tokens: int = 256,
    plans: str | None = None,
) -> Task:
    """AtomR (or a baseline) on ``dataset``.

    Args:
        dataset: hotpotqa, 2wiki, musique, crag or blendqa.
        method: atomr, atomr_standard, atomr_cot or atomr_standard_rag.
        sources: knowledge sources, comma-separated or a list (default per dataset).
        path: local dataset file in the upstream format (default: pinned download).
        category: keep these question types / hop counts, comma-separated or a
            list (not for hotpotqa).
        text_corpus, kg_triples, web_pages, web_api, retriever, k, threshold:
            see the ``atomr`` solver.
        tree_tokens, operator_tokens: AtomR's output budgets (512 and 256); the
            retries on truncation get 1.5x (768) and 2x (512). ``--max-tokens``
            caps every call's budget (min of the two).
        plans: replay released/recorded plans (JSONL of ``{question,
            reasoning_tree}``, e.g. the authors' ``*_trees.jsonl``) instead of
            calling the planner; records ``plan_source`` per sample.
    """
    from conflict_eval.plugins.atomr import dataset as ds
    from conflict_eval.plugins.atomr import solver as sv
    from conflict_eval.scorers.atomr.scorer import atomr_qa

    if dataset not in DATASETS:
        raise ValueError(f"dataset={dataset!r}; expected one of {', '.join(DATASETS)}")
    if method not in METHODS:
        raise ValueError(f"method={method!r}; expected one of {', '.join(METHODS)}")
    loader = getattr(ds, f"atomr_{dataset}")
    options = {"path": path, "limit": limit, "shuffle": shuffle, "seed": seed}
    if category is not None:
        if dataset == "hotpotqa":
            raise ValueError("category: IRCoT's HotpotQA files carry no question type")
        options["category"] = sv.as_names(category, "category")
    samples = loader(**options)
    if sources is None:
        sources = DEFAULT_SOURCES[dataset] + (",web" if dataset == "blendqa" and (web_api or web_pages) else "")
    sources = ",".join(sv.as_names(sources, "sources"))
    src = {"sources": sources, "k": k, "retriever": retriever, "text_corpus": text_corpus,
           "kg_triples": kg_triples, "web_pages": web_pages, "web_api": web_api}
    if method == "atomr":
        solver = sv.atomr(examples=dataset, threshold=threshold, tree_tokens=tree_tokens,
                          tree_retry_tokens=tree_tokens * 3 // 2, operator_tokens=operator_tokens,
                          operator_retry_tokens=operator_tokens * 2, plans=plans, **src)
    elif plans is not None:
        raise ValueError("plans: only method=atomr executes plans")
    elif method == "atomr_standard_rag":
        solver = sv.atomr_standard_rag(**src)
    else:
        solver = getattr(sv, method)()
    retrieval = _retrieval(samples, sources if method in ("atomr", "atomr_standard_rag") else "", src)
    return Task(
        dataset=samples,
        solver=solver,
        scorer=atomr_qa(),
        headline_metric=HeadlineMetric(scorer="atomr_qa", metric="f1"),  # the paper's F1 (Tables 2-3)
        config=GenerateConfig(temperature=0.0, top_p=1.0),
        name=f"atomr_{method}_{dataset}",
        metadata={"conflict_eval_endpoint": active_endpoint(),  # the endpoint, as run
                  "method": method, "dataset": dataset, "sources": sources, "path": path,
                  "retrieval": retrieval, **({"plans": plans} if plans else {}),
                  "conflict_eval_provenance": {"dataset": dataset_record(samples.name or dataset, samples, path)}},
    )


def _retrieval(samples, sources: str, src: dict) -> dict:
    """The ``retrieval`` eval-metadata block: each source as the solver will
    build it (same per-process cache) and whether its corpus is pooled from
    the evaluated dataset file (the default when no corpus option is given)."""
    from conflict_eval.retrieval import retrieval_block
    from conflict_eval.plugins.atomr.solver import build_sources
    from conflict_eval.records import ConflictQA

    from conflict_eval.plugins.atomr.solver import as_names

    names = as_names(sources, "sources")
    if not names or not len(samples):
        return retrieval_block({}, {})
    record = ConflictQA(**samples[0].metadata)
    options = {k: src[k] for k in ("text_corpus", "kg_triples", "web_pages", "web_api", "retriever")}
    built = build_sources(names, record, **options)
    given = {"text": src["text_corpus"], "kg": src["kg_triples"], "web": src["web_pages"] or src["web_api"]}
    files = record.extra.get("source_files") or {}
    dataset_files = [f for v in files.values() for f in (v if isinstance(v, list) else [v])]
    return retrieval_block(built, {n: not given.get(n) for n in names}, specs=given,
                           dataset_files=dataset_files)
