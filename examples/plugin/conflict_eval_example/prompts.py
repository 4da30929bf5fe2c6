"""The ``verdict_first`` prompt (written for this example; no paper).

Placeholders: ``{passage}`` (the record's evidence), ``{question}``, ``{options}``
(``A. text`` lines).
"""

VERDICT_PROMPT = """Read the passage and answer the question from it, even if it contradicts what you know.

Passage: {passage}

Question: {question}
{options}

Reply with exactly two lines:
VERDICT: <the option letter>
REASON: <one sentence>"""
