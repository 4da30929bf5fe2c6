"""MADAM-RAG prompts, verbatim from the authors' ``run_madam_rag.py``.

Source: https://github.com/HanNight/RAMDocs, file ``run_madam_rag.py``
(functions ``agent_response`` and ``aggregate_responses``). The repository is
pinned at commit ``d44454c9ebb0bf513d8236a03decc9fb58704cad`` for the data
(datasets.ramdocs in registry.yaml); the prompt text was read from the copies
of ``run_madam_rag.py`` in two public forks (taaha/RAMDocs@c634290df6789e7410f10dbb7b7175a8cde88695,
Larry-DayDayUp/RAMDocs@088d7f713e1b48d0ed9e15510b195332dc9e4067), which agree
character for character. The paper (arXiv 2504.13079) describes the same
three roles in §4 (agents, aggregator, multi-round debate).

Kept exactly as the authors wrote them, quirks included ("reponses", the
doubled closing quote ``''`` of the agent format line, two trailing spaces
after "explanation." in the debate prompt, a trailing space after the first
one-shot agent answer, "Februray"). ``{{}}`` renders as ``{}`` (the
authors' f-strings); the one-shot example's answer list is the JSON-style
``["1963", "1956"]``.

Placeholders:

* :data:`AGENT_TEMPLATE` -- ``{question}``, ``{document}``.
* :data:`AGENT_DEBATE_TEMPLATE` -- ``{question}``, ``{document}``, ``{history}``
  (the other agents' previous responses, ``Agent j: <response>`` lines).
* :data:`AGGREGATOR_TEMPLATE` -- ``{question}``, ``{responses}`` (every agent's
  response of the round, ``Agent i: <response>`` lines).
"""

# run_madam_rag.py, agent_response(): round 1 (no history).
AGENT_TEMPLATE = (
    'You are an agent reading a document to answer a question.\n'
    '\n'
    'Question: {question}\n'
    'Document: {document}\n'
    '\n'
    'Answer the question based only on this document. Provide your answer and a step-by-step reasoning explanation.\n'
    "Please follow the format: 'Answer: {{}}. Explanation: {{}}.''"
)

# run_madam_rag.py, agent_response(): later rounds, with the other agents' responses.
AGENT_DEBATE_TEMPLATE = (
    'You are an agent reading a document to answer a question.\n'
    '\n'
    'Question: {question}\n'
    'Document: {document}\n'
    '\n'
    'The following reponses are from other agents as additional information.\n'
    '{history}\n'
    "Answer the question based on the document and other agents' response. Provide your answer and a step-by-step reasoning explanation.  \n"
    "Please follow the format: 'Answer: {{}}. Explanation: {{}}.''"
)

# run_madam_rag.py, aggregate_responses(): the aggregator with its one-shot example.
AGGREGATOR_TEMPLATE = (
    'You are an aggregator reading answers from multiple agents.\n'
    '\n'
    "If there are multiple answers, please provide all possible correct answers and also provide a step-by-step reasoning explanation. If there is no correct answer, please reply 'unknown'.\n"
    "Please follow the format: 'All Correct Answers: []. Explanation: {{}}.'\n"
    '\n'
    'The following are examples:\n'
    'Question: In which year was Michael Jordan born?\n'
    'Agent responses:\n'
    'Agent 1: Answer: 1963. Explanation: The document clearly states that Michael Jeffrey Jordan was born on February 17, 1963. \n'
    "Agent 2: Answer: 1956. Explanation: The document states that Michael Irwin Jordan was born on February 25, 1956. However, it's important to note that this document seems to be about a different Michael Jordan, who is an American scientist, not the basketball player. The other agents' responses do not align with the information provided in the document.\n"
    'Agent 3: Answer: 1998. Explanation: The According to the document provided, Michael Jeffrey Jordan was born on February 17, 1998.\n'
    "Agent 4: Answer: Unknown. Explanation: The provided document focuses on Jordan's college and early professional career, mentioning his college championship in 1982 and his entry into the NBA in 1984, but it does not include information about his birth year.\n"
    'All Correct Answers: ["1963", "1956"]. Explanation: Agent 1 is talking about the basketball player Michael Jeffrey Jordan, who was born on Februray 17, 1963, so 1963 is correct. Agent 2 is talking about another person named Michael Jordan, who is an American scientist, and he was born in 1956. Therefore, the answer 1956 from Agent 2 is also correct. Agent 3 provides an error stating Michael Jordan\'s birth year as 1998, which is incorrect. Based on the correct information from Agent 1, Michael Jeffrey Jordan was born on February 17, 1963. Agent 4 does not provide any useful information.\n'
    '\n'
    'Question: {question}\n'
    'Agent responses:\n'
    '{responses}\n'
)
