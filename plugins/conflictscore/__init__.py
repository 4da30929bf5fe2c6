"""ConflictScore's methods (the paper's §5-6): the report writer (Tables 9-11),
the TruthfulQA RAG and Control-RAG answers (Tables 12-13) and the feedback
regeneration wrapper ``conflict_regenerate`` (Table 14). The metric is
scorers/conflictscore/, the TruthfulQA dataset plugins/truthfulqa/.

Nothing is registered as a method: each solver reads the sample metadata of
its task (``conflict_eval/conflictscore_report``, ``conflict_eval/truthfulqa_conflict``),
and ``conflict_regenerate`` wraps another solver, which is not a ``-T`` value.
The tasks import them from here.
"""
