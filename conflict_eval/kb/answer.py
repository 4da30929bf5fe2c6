"""End-to-End QA prompt, verbatim from Micro-Act (Huo et al.), Figure 10.

Placeholders: ``{evidence}``, ``{question}``, ``{options}`` (``A. text`` lines).
"""

END_TO_END_TEMPLATE = """According to the evidence provided and your knowledge, choose the best choice from the following options.

Evidence: {evidence}
Question: {question}
{options}

The answer should be concise and short, not with explanations nor option details. Fill your selected option in **uppercase letter format** into the template: <a>...</a>, for example <a>H</a>.

The final answer is: <a>"""

# Our adaptation for free-form datasets (the paper only uses multiple choice):
# the same instruction with the option lines removed and a short answer asked for.
END_TO_END_FREE_FORM_TEMPLATE = """According to the evidence provided and your knowledge, answer the question.

Evidence: {evidence}
Question: {question}

The answer should be concise and short, not with explanations. Fill your answer into the template: <a>...</a>.

The final answer is: <a>"""
