"""Micro-Act prompts (Huo et al., ACL 2025): the method's (``plugins/microact``)
and the over-rationalization judge's (``scorers/microact/overrationalization.py``),
one module for the paper, on the scorer side because a scorer never imports a plugin.

The main conversation is Figure 17 ("Micro-Act Prompt (Ours): ### Task:
Knowledge Conflict Location"). The converted text of Figure 17 is garbled in
places; we reconstructed the evident intent and mark each spot with
``RECONSTRUCTED``:

* the ``knowledge_gen`` description is printed twice, the second copy as OCR
  noise ("Nowhedge_gen(target=) in The three taget question ..."); we keep the
  first, clean copy and complete it with the usage line of the other actions;
* the question block reads ``# Question:`` followed only by ``{options}``; the
  question itself is evidently meant to be there too (``{question}`` then
  ``{options}``);
* the evidence line reads ``given_evidence = "" {evidence} ""``: a Python-style
  string, which we write with triple quotes;
* the turn instruction ends with "Failure to generate an action will result in
  the template to generate an action will result in ..." repeated dozens of
  times; the evident sentence is "Failure to generate an action will result in
  strict penalties and you will lose your job!";
* a few quotes are broken (``[knowledge_gen', ...``, ``'terminate')``) and
  ``\\verb|`` leaked in; the list is written as a Python list of names.

Figure 17 then shows three worked turns (reason on the given evidence,
knowledge_gen on the question, reason on the generated knowledge) whose
observations are placeholders (``[[question]]``, ``[[evidence_gen]]``) and the
thought of turn 4. We read them as a warm start that is *executed* (the
placeholders are filled with real helper-call results), see
``WARM_START_TURNS`` and the solver's ``warm_start`` option. They are not
counted as turns in the reported ``turns`` (see the solver and README: Tables
3-4 count the model-chosen turns).

The paper does not print the prompts of the helper calls behind each action
(knowledge_gen, reason, decompose, assert) nor of the final answer call;
those below are ours, written from the action descriptions of Figure 17 and
the action table of Figure 9, except ``knowledge_gen``, which reuses GKP's
generation-phase prompt (Figure 15) because ELICIT(q) = M(q) (Eq. 4) is
exactly that.

The over-rationalization judge's prompt (§7.3, Appendix B, Figure 8),
:data:`OVERRATIONALIZATION_TEMPLATE` at the end, is OURS, not the paper's: the
paper defines the behaviour but prints no judging prompt or procedure (see
plugins/microact/README.md).
"""

# Figure 17, task header. Placeholders: {turns_word} ("eight"), {action_choices}
# (numbered list of the available actions, ACTION_DESCRIPTIONS), {question},
# {options} ("A. text" lines, empty for free-form), {evidence}.
# {actions_word}: "apply **one** of the four actions listed above" in the paper,
# which lists five entries but counts four actions: knowledge_gen, reason,
# decompose, assert (Figure 9's ELICIT, REASON, DECOMPOSE, ASSERT), terminate()
# being the end-of-session signal. We derive the word the same way from the
# listed entries (those other than terminate), so the full prompt is verbatim
# ("four") and an ablation's prompt counts what it lists (e.g. "two").
MICROACT_TASK_TEMPLATE = """### Task: Knowledge Conflict Location
You are a detective. When you ask a question, the suspects provide an evidence, which may conflict with your knowledge. Your objective is to determine the answer by identifying and locating any points of conflict.
You have a maximum of **{turns_word} turns** to locate all conflict points. In each turn, you may choose **one** of the following Action Choices:
{action_choices}
#### Problem-Solving Process:
You will alternate between **Thought**, **Action**, and **Observation** phases in each turn.
- In the **Thought** section, consider your current information and decide your next step.
- In the **Action** section, apply **one** of the {actions_word} actions listed above.
- After each action, you will receive an **Observation** to help guide your next move.
**Remember**: You can take only **one action per turn** and have a total of **{turns_word} turns** to determine the final answer.
When confident in your answer, use **terminate()** to end the session.
# Question:
{question}
{options}
# Given evidence:
given_evidence = \"\"\"{evidence}\"\"\"
NOTE: Begin your process now to answer the question above, filling in your action in the template: <f>...</f>"""

# Figure 17, the action list (numbering is redone when an ablation removes actions).
ACTION_DESCRIPTIONS = {
    # RECONSTRUCTED: second, garbled copy of this description dropped; usage line completed.
    "knowledge_gen": (
        '**knowledge_gen(target: str) -> str**: Input the target question, this function adopts LLM '
        "to generate the LLM inherent knowledge about the question. Use in format: "
        '**knowledge_gen(target="...")**.'
    ),
    "reason": (
        "**reason(evidence: str) -> str **: Input an evidence to generate a step-by-step reasoning "
        "path to answer given question based on that evidence. Use in format: "
        '**reason(evidence="...")**.'
    ),
    "decompose": (
        "**decompose(reasoning_step: str) -> list of str**: This action can **ONLY** be used when "
        "one reasoning step can be decomposed for **better** analysis and benefiting the QA task. "
        "This action can break down a complex reasoning step into smaller, manageable sub-steps. "
        'Use in format: **decompose(reasoning_step="...")**.'
    ),
    "assert": (
        "**assert(state_left: str, state_right: str) -> bool**: Input two statements to evaluate if "
        "they conflict, returning a confidence rating. Use in format: "
        '**assert(state_left="....", state_right="...")**. This action should only be used when '
        "necessary."
    ),
    "terminate": (
        "**terminate()**: Signals the end of the session. Use it **ONLY** when confident in your "
        "final answer. Format: **terminate()**."
    ),
}

# Figure 17, the instruction repeated before every turn. Placeholders:
# {remaining} (turns left, counting this one), {action_names} (Python list).
# RECONSTRUCTED: the repeated garbage after "will result in" and the broken quotes.
TURN_INSTRUCTION_TEMPLATE = """# {remaining} turns remaining to provide the final answer. In this turn, your task is to generate **Thought** and **Action**. **Do NOT answer question this time!** Please keep your thought brief and focused, and **You MUST choose an action from {action_names} as describe in the Task Guidelines section above!** Then fill your action in the template '**Action:** <f>...</f>'. You can take previous steps as example. Failure to generate an action will result in strict penalties and you will lose your job!
## Turn {turn}:"""

# Figure 17, observation headers as printed for turns 1-3; reused whenever the
# model itself calls knowledge_gen / reason.
OBSERVATION_REASON_GIVEN = "Step-by-step reasoning path based on given evidence is list below:\n{result}"
OBSERVATION_REASON_KNOWLEDGE = "Step-by-step reasoning path based on model knowledge is list below:\n{result}"
OBSERVATION_KNOWLEDGE = "My inherent knowledge about this question is:\n{result}"
# Ours (the paper shows no decompose / assert observation).
OBSERVATION_REASON_OTHER = "Step-by-step reasoning path based on the input evidence is list below:\n{result}"
OBSERVATION_DECOMPOSE = "The reasoning step is decomposed into the following sub-steps:\n{result}"
OBSERVATION_ASSERT = "Conflict: {verdict} (1 = the two statements conflict, 0 = they do not). Confidence: {confidence}."
OBSERVATION_FORCED_SPLIT = (
    "A conflict was detected on a complex statement, so it is split (forced decompose):\n{result}"
)
# Ours: what the model sees when it wrote an action badly.
OBSERVATION_INVALID = (
    "Invalid action: {error}. Write exactly one action from {action_names} in the template "
    "'**Action:** <f>...</f>', e.g. <f>{example}</f>."
)

# Figure 17, the worked turns 1-3 and the thought of turn 4 (warm start).
# "knowledgein" in turn 3 is the paper's typo, kept.
WARM_START_TURNS = (
    (
        "The evidence is too complex. I want to get the step-by-step reasoning path to answer the "
        "question above based on the given evidence for easier analysis.",
        "reason(evidence=given_evidence)",
    ),
    (
        "Then I want to get the step-by-step reasoning path to answer the question above based on my "
        "inherent knowledge. To do this, I want to firstly generate the knowledge based on my "
        "inherent pre-trained knowledge.",
        'knowledge_gen(target="{question}")',
    ),
    (
        "Now I want to get the step-by-step reasoning path to answer the question above based on my "
        "generate knowledgein previous step.",
        'reason(evidence="{evidence_gen}")',
    ),
)
TURN4_THOUGHT = (
    "Now I have already obtained the two reasoning paths from given evidence in 'Turn 1' and from "
    "my inherent knowledge in 'Turn 3' respectively. I must locate all conflict points between "
    "them. To do so, I will compare the reasoning steps between them. First, I will check if any "
    "key reasoning steps need to be decomposed for clearer comparison. If none do, I will proceed "
    "with the reasoning step comparison to locate each conflict point."
)

# How an assistant turn is written in the history (Figure 17 layout).
TURN_TEMPLATE = "**Thought:** {thought}\n**Action:** <f>{action}</f>"

# ---------------------------------------------------------------------------
# Helper calls behind the actions (each a separate model call).

# Figure 15 (GKP generation phase), reused for knowledge_gen = ELICIT(q) (Eq. 4).
KNOWLEDGE_GEN_TEMPLATE = """Generate some knowledge about the input.

Input: {target}
Knowledge:"""

# Ours, from the reason action description (Figure 17) and REASON(K) (Eq. 5).
REASON_TEMPLATE = """Input an evidence to generate a step-by-step reasoning path to answer the given question based on that evidence. Use only the evidence. Write one numbered step per line (1., 2., ...).

Question: {question}
{options}
Evidence: {evidence}

Step-by-step reasoning path:"""

# Ours, from the decompose action description (Figure 17) and Eq. 7.
DECOMPOSE_TEMPLATE = """Break down the following complex reasoning step into smaller, manageable sub-steps for better analysis of the question. Write one numbered sub-step per line (1., 2., ...).

Question: {question}
Reasoning step: {reasoning_step}

Sub-steps:"""

# Ours, from the assert action description (Figure 17), ASSERT(.) = delta in {0, 1} (Eq. 6).
ASSERT_TEMPLATE = """Evaluate whether the two statements below conflict with each other. Fill 1 (they conflict) or 0 (they do not conflict) into the template <c>...</c>, and your confidence between 0 and 1 into the template <p>...</p>, for example <c>1</c> <p>0.8</p>.

Statement 1: {state_left}
Statement 2: {state_right}

Answer:"""

# Ours: the final answer call M(ANSWER | H) of Algorithm 1 line 14. The answer
# format is End-to-End's (Figure 10) so every method is parsed the same way.
FINAL_ANSWER_TEMPLATE = """# The session is over. Now answer the question above based on the evidence, your knowledge and the **Thought**, **Action** and **Observation** history. The answer should be concise and short, not with explanations nor option details. Fill your selected option in **uppercase letter format** into the template: <a>...</a>, for example <a>H</a>.

The final answer is: <a>"""

FINAL_ANSWER_FREE_FORM_TEMPLATE = """# The session is over. Now answer the question above based on the evidence, your knowledge and the **Thought**, **Action** and **Observation** history. The answer should be concise and short, not with explanations. Fill your answer into the template: <a>...</a>.

The final answer is: <a>"""

# ---------------------------------------------------------------------------
# The over-rationalization judge (scorers/microact/overrationalization.py).

# OURS, not the paper's: the judge of the over-rationalization ratio
# (Appendix B, Figure 8). The paper defines the behaviour (§7.3: "support all
# contradictory information as equally valid", "a tendency to find complex
# justifications that make contradictory evidence appear compatible";
# Appendix B: "rationalizing contradictory facts in their step-by-step
# chain-of-thought reasoning") but prints no judging prompt or procedure.
# Placeholders: {question}, {options}, {evidence}, {conflict} (a sentence
# naming the two contradictory answers, or empty), {trace} (the reasoning).
# The verdict is read by .parse.parse_verdict.
OVERRATIONALIZATION_TEMPLATE = """You are checking a model's reasoning for over-rationalization.

The model answered a multiple-choice question using a retrieved evidence passage and its own knowledge. The evidence may contradict the model's own knowledge.

Over-rationalization means: the reasoning meets contradictory facts and, instead of deciding which side is more reliable or stating that they cannot both be true, finds justifications that make the contradictory facts appear compatible, or treats all of them as equally valid (for example "both can be true", "both answers are correct in a way", "the records may simply have been updated").

It is NOT over-rationalization when the reasoning notices the contradiction and rejects one side, when it follows one side without weighing the other, or when no contradictory facts appear in it.

# Question
{question}
{options}

# Evidence shown to the model
{evidence}
{conflict}
# The model's reasoning
{trace}

# Your task
Does the model's reasoning over-rationalize the contradictory facts? Write YES or NO on the first line, then one sentence saying why."""

# Filled into {conflict} when the item names the answer the conflicting
# evidence argues for (ConflictBank's replaced object) and the gold answer.
OVERRATIONALIZATION_CONFLICT = """
# The contradiction
The evidence argues for option {conflict_option} ({conflict_answer}); the established answer is option {gold_option} ({gold_answer}).
"""
