"""ConflictQA's multiple-choice prompt, verbatim from the authors' code.

Source: OSU-NLP-Group/LLM-Knowledge-Conflict, ``code/prompt_preparation.py``
(commit d0624d5ca2340351357de7bcf087f83b116c4b96),
``build_zeroshot_prompt_popQA_with_singleSource_evidence`` /
``..._strategyQA_with_singleSource_evidence``; the paper (Xie et al., ICLR
2024) describes the format in §3.3: the model chooses among the memory
answer, the counter answer and "uncertain".

* One piece of evidence (the paper's "implicit" mode, single source): the
  instruction says "the given information and your knowledge".
* Several (the "explicit" mode, multi-source): "the given information", and the
  evidence is numbered: ``"\\n1. " + first + "\\n2. " + second``.

Options are written ``A: text`` lines (``"Options:\\nA: " + ... + "\\nC: Uncertain."``).
The prompt ends with ``"Answer: "``; the authors sent it as the user message
with the system prompt "You are a helpful assistant." (``code/run.py``).

Placeholders of :data:`CONFLICTQA_TEMPLATE`: ``{knowledge}`` (" and your
knowledge" or ""), ``{evidence}``, ``{question}``, ``{options}``.
"""

SYSTEM_PROMPT = "You are a helpful assistant."

# code/prompt_preparation.py: prompt_text = "According to the given information" + dynamic_prompt +
# ", choose the best choice from the following options.\n\nInformation: " + evidence +
# "\n\nQuestion: " + question + "\n\n" + option + "\n\nAnswer: "
CONFLICTQA_TEMPLATE = (
    "According to the given information{knowledge}, choose the best choice from the following options.\n\n"
    "Information: {evidence}\n\n"
    "Question: {question}\n\n"
    "Options:\n{options}\n\n"
    "Answer: "
)

SINGLE_SOURCE_KNOWLEDGE = " and your knowledge"
