"""Plugin: knowledge sources for retrieval-augmented methods (AtomR §3.3.1).

``text`` (BM25/dense over a local corpus), ``kg`` (triple store with entity
lookup and one-hop relations) and ``web`` (offline pre-fetched pages, or a
search API configured by environment variables).
"""

from conflict_eval import hookimpl


@hookimpl
def conflict_eval_register_sources():
    from conflict_eval.retrieval.sources import kg_source, text_source, web_source

    return {"text": text_source, "kg": kg_source, "web": web_source}
