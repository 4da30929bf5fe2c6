"""The over-rationalization judge's prompt (Huo et al. §7.3, Appendix B, Figure 8).

OURS, not the paper's: the paper defines the behaviour but prints no judging
prompt or procedure (see plugins/microact/README.md).
"""

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
