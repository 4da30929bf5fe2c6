"""The knowledge base a retrieval method reads: the polluted-KB file format
(:mod:`.format`), retrieval over it and the Figure 3 yes/no prompt (:mod:`.rag`),
and calls shared between the two samples of one question (:mod:`.shared`).

Built by ``plugins/polluted_kb`` (``conflict-eval polluted-kb build``); read by
Standard RAG, RobustRAG, AstuteRAG and Conflict Exposure, which import it from
here, never from another plugin.
"""
