"""ConflictScore prompts.

``DECOMPOSE_TEMPLATE`` and ``LABEL_TEMPLATE`` are verbatim from the ConflictScore
paper (Table 7 and Table 8). The converted text renders the curly quotes and
the numbered list of Table 8 with markdown bold; we keep the words exactly and
the bold markers as converted. Table 8's ``{document}`` is filled with the
document text as it is (the paper shows no delimiters around it); only our
all-documents adaptation wraps each document in ``<document number="i">``
tags, to tell the numbered documents apart. ``SALIENT_TEMPLATE`` and ``ALL_DOCS_TEMPLATE``
are our adaptations for two of the cheaper variants named (without a prompt)
in the paper's Limitations section; they reuse the Table 7/8 wording.

Placeholders are filled by :func:`fill` in a single pass, so a document or
claim that itself contains ``{claim}`` or ``{document}`` is never substituted
again, and no ``str.format`` brace escaping is needed for the JSON example.
"""

from __future__ import annotations

import re

# ConflictScore, Table 7: claim decomposition.
DECOMPOSE_TEMPLATE = """Instruction: Break down the following report into individual claims.

Report: {report}

Please identify each separate claim made in the report. A claim is a factual statement or opinion that expresses a belief or judgment.

List each claim on a new line, starting with “Claims: ”."""

# Our adaptation of Table 7 for the "salient claims" variant (Limitations:
# "prompt the model to first identify a small set of salient or representative
# claims and evaluate only those").
SALIENT_TEMPLATE = """Instruction: Break down the following report into individual claims, and keep only the {k} most salient or representative claims.

Report: {report}

Please identify the {k} most salient separate claims made in the report. A claim is a factual statement or opinion that expresses a belief or judgment.

List each claim on a new line, starting with “Claims: ”."""

# ConflictScore, Table 8: evidence evaluation of one claim against one document.
LABEL_TEMPLATE = """Document-Claim Conflict Detection

You are a careful fact-checking assistant specializing in identifying conflicts between claims and evidence in documents.

Decide one of the following labels for how the document relates to the claim:

1. **SUPPORTS** – The document provides evidence that directly supports any part of the claim. This includes partial support: if a claim contains hedged or multi-part statements (e.g., “Coffee consumption can improve alertness but may also cause sleep disruption”), then documents that support any part of that claim should be labeled SUPPORTS.
2. **CONTRADICTS** – The document provides evidence that contradicts the claim (e.g., assigns an incompatible role/date/quantity/polarity, or states the opposite of an asserted relationship), even if it does not explicitly say the claim is false.
3. **IRRELEVANT** – The document does not provide information about the substantive content of the claim (mentions entities without giving information that could support or contradict) OR provides only vague/contextual information insufficient to judge the claim.

Decision rules:

- Look for statements in the document that address the same attributes asserted (who/what/when/where/how many/etc.) inside the claim.
- If the document contains a statement that supports the claim or partially supports any part of a hedged claim, choose SUPPORTS.
- If the document contains a statement incompatible with the claim, choose CONTRADICTS (do NOT choose IRRELEVANT).
- If it contains neither a compatible nor incompatible statement about the claim’s asserted attributes, choose IRRELEVANT.

Example (contradiction via incompatible attribute):

- Claim: “Frédéric Chopin was a famous musician.”
- Document: “Polish scientists born in Warsaw include ... Frédéric Chopin.”
- Label: CONTRADICTS (profession mismatch: scientist vs musician).

Now evaluate the following:

Claim to evaluate

{claim}

Document to evaluate against

{document}

Output format

Return ONLY a single JSON object with these fields:

```
{
  "claim": "{claim_json}",
  "document_snippet": "<the most relevant snippet from the document that relates to the claim>",
  "reasoning": "<a brief justification that explains your decision>",
  "answer": "<SUPPORTS|CONTRADICTS|IRRELEVANT>"
}
```

Please be precise and follow the decision rules. Do not include any additional text or explanations and only output in the JSON format specified above."""
# (The paper writes "{claim}" inside the JSON example too; we fill it with the
# JSON-escaped claim, ``{claim_json}``, so the example stays valid JSON.)

# Our adaptation of Table 8 for the "all documents in one call" variant
# (Limitations: "provides all grounding documents at once when labeling").
# The label definitions and decision rules are Table 8's, verbatim.
ALL_DOCS_TEMPLATE = LABEL_TEMPLATE.split("Now evaluate the following:")[0].replace(
    "how the document relates to the claim", "how each document relates to the claim"
) + """Now evaluate the following:

Claim to evaluate

{claim}

Documents to evaluate against (numbered 1 to {n})

{documents}

Output format

Return ONLY a JSON list with one object per document, in document order:

```
[
  {
    "document": <document number>,
    "document_snippet": "<the most relevant snippet from the document that relates to the claim>",
    "reasoning": "<a brief justification that explains your decision>",
    "answer": "<SUPPORTS|CONTRADICTS|IRRELEVANT>"
  }
]
```

Please be precise and follow the decision rules. Do not include any additional text or explanations and only output in the JSON format specified above."""

# Our variant of Table 8 for the judge-stability check (``judge_swap=true``):
# the same words with the document block before the claim block.
_CLAIM_BLOCK = "Claim to evaluate\n\n{claim}\n\n"
_DOCUMENT_BLOCK = "Document to evaluate against\n\n{document}\n\n"
assert _CLAIM_BLOCK + _DOCUMENT_BLOCK in LABEL_TEMPLATE
SWAPPED_LABEL_TEMPLATE = LABEL_TEMPLATE.replace(_CLAIM_BLOCK + _DOCUMENT_BLOCK, _DOCUMENT_BLOCK + _CLAIM_BLOCK)

_PLACEHOLDER = re.compile(r"\{(report|claim|claim_json|document|documents|n|k)\}")


def quote_document(text: str, number: int | None = None) -> str:
    """A document as a delimited block whose text cannot close the block early.

    The text goes between ``<document>`` tags; any tag-like ``<document``/``</document``
    inside it is neutralised (``<`` -> ``‹``) so the grader always sees exactly
    one block per document.
    """
    safe = re.sub(r"<(/?\s*document)", r"‹\1", text, flags=re.IGNORECASE)
    attr = f' number="{number}"' if number is not None else ""
    return f"<document{attr}>\n{safe}\n</document>"


def fill(template: str, **values: str) -> str:
    """Substitute ``{name}`` placeholders in one pass (values are not re-scanned)."""
    missing = {m.group(1) for m in _PLACEHOLDER.finditer(template)} - set(values)
    if missing:
        raise ValueError(f"template placeholder(s) without a value: {sorted(missing)}")
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], template)
