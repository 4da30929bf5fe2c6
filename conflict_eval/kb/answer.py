"""The End-to-End answer step that several methods end with: the prompt,
verbatim from Micro-Act (Huo et al.), Figure 10, and its prefilled finish.

The End-to-End baseline asks it over a sample's evidence; Standard RAG and
AstuteRAG over documents (:mod:`.documents`); Micro-Act finishes its final
answer call with :func:`finish_prefilled_answer`; the lm-eval export sends the
same prompt. Placeholders: ``{evidence}``, ``{question}``, ``{options}``
(``A. text`` lines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from conflict_eval.answers import first_tagged_answer, restore_prefill

if TYPE_CHECKING:
    from inspect_ai.solver import TaskState

    from conflict_eval.records import ConflictQA

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


def format_prompt(record: ConflictQA, template: str = END_TO_END_TEMPLATE,
                  free_form_template: str = END_TO_END_FREE_FORM_TEMPLATE) -> str:
    """Fill a Micro-Act style prompt from a canonical record (its evidence as ``{evidence}``)."""
    fields = {"evidence": record.evidence_text(), "question": record.question}
    if record.is_multiple_choice:
        return template.format(options=record.formatted_options(), **fields)
    return free_form_template.format(**fields)


def finish_prefilled_answer(state: TaskState, prompt: str) -> None:
    """The prompt ends inside ``<a>``: put the tag back in front of the reply
    so the log shows the whole answer, and hand the metric the first answer
    segment in the store key ``answer_text`` (a model that goes on inventing
    examples writes more tags after its answer; see
    :func:`conflict_eval.answers.first_tagged_answer`)."""
    state.output.completion = restore_prefill(prompt, state.output.completion)
    segment, _ = first_tagged_answer(state.output.completion)
    if segment is not None:
        state.store.set("answer_text", segment)
