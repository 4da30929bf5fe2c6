"""Build a polluted knowledge base from HotpotQA (Conflict Exposure §4.2, §4.4, Figure 3).

1. Read HotpotQA questions with their Wikipedia paragraphs (IRCoT format:
   ``question_id``, ``question_text``, ``answers_objects``, ``contexts``) and
   pool the paragraphs of *all* records into one clean corpus (identical
   title + text pairs are kept once) -- or, with ``corpus``, take the clean
   corpus from any corpus built with ``conflict-eval index build`` (an index
   directory) or any corpus file it reads (e.g. BEIR HotpotQA's
   ``corpus.jsonl``, the corpus of §4.2); see :func:`corpus_documents`.
2. For each question (the first ``limit``, after an optional seeded shuffle)
   ask the model for a misinformation target with the Figure 3 prompt.
3. Inject pollution: Type I copies each gold supporting paragraph that
   contains the answer text (in its title or its text) with the answer
   replaced by the target in both (§4.4 makes no exception for titles, and
   in HotpotQA the answer is often the title); Type II is the model's reply
   to the PoisonedRAG prompt, cut to 30 words; Type III is the Figure 3
   template. Injected documents are *added*: the clean paragraphs stay in the
   corpus (the paper "merges" defective samples into the knowledge base).
   Type II/III documents get a title in the corpus's style (ours; the paper
   shows none, and an untitled document among titled ones is an easy tell):
   the title of the question's first supporting paragraph with the answer
   replaced by the target, i.e. the Wikipedia article the question is about
   as Type I would rename it (:func:`injected_title`).
4. Optionally pre-screen (§4.2): regular RAG on the clean corpus (top ``k``);
   a question is kept if the retrieved set holds all its supporting
   paragraphs and the model answers "Yes" to the Figure 3 question.

Model calls use temperature 0 and ``seed``, one at a time in question
order, so a build is a pure function of (source file, model, options).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from pathlib import Path
from typing import Any

from conflict_eval.answers.failures import generate_checked
from conflict_eval.records import BadField, ConflictQA, Passage, Row, convert_rows, read_jsonl

from conflict_eval.kb.format import POLLUTION_TYPES, KBDocument, KBMeta, KBQuestion, PollutedKB, Prescreen
from conflict_eval.kb.rag import QUESTION_TEMPLATE, format_documents, yes_no_prompt  # noqa: F401
from conflict_eval.answers.yes_no import parse_yes_no

from .parse import TARGET_REJECTIONS, limit_words, parse_target
from .prompts import (
    POISONEDRAG_TEMPLATE,
    TARGET_TEMPLATE,
    TYPE2_MAX_WORDS,
    TYPE3_TEMPLATE,
)

# Upstream: HotpotQA dev (distractor) in IRCoT's processed format, pinned.
HOTPOT_REPO = "xindili-cmu/anlp-project-multihop"
HOTPOT_COMMIT = "df0d5757f42f098ab6026f40323e91c369307506"
HOTPOT_PATH = "processed_data/hotpotqa/dev_subsampled.jsonl"

GENERATE = {"temperature": 0.0, "target_max_tokens": 32, "poison_max_tokens": 80,
            "answer_max_tokens": 16}


def default_source() -> Path:
    """The pinned upstream file (downloaded once; offline runs pass ``source``)."""
    from conflict_eval.records.download import github_file

    return github_file(HOTPOT_REPO, HOTPOT_COMMIT, HOTPOT_PATH)


# --------------------------------------------------------------------------
# HotpotQA (IRCoT format)


def _convert(row: Row) -> ConflictQA:
    answers_objects = row.list("answers_objects")
    spans = []
    for i, obj in enumerate(answers_objects):
        if not isinstance(obj, dict) or not isinstance(obj.get("spans"), list):
            raise BadField(f"answers_objects.{i}.spans", "expected a list of answer strings")
        spans += [s for s in obj["spans"] if isinstance(s, str) and s.strip()]
    if not spans:
        raise BadField("answers_objects", "no non-empty answer span")
    passages = []
    for i, ctx in enumerate(row.list("contexts")):
        if not isinstance(ctx, dict):
            raise BadField(f"contexts.{i}", "expected an object")
        for key, kind in (("id", (str, int)), ("title", str), ("paragraph_text", str),
                          ("is_supporting", bool)):
            if not isinstance(ctx.get(key), kind):
                raise BadField(f"contexts.{i}.{key}", f"missing or wrong type ({ctx.get(key)!r:.60})")
        if not ctx["paragraph_text"].strip():
            continue  # an empty paragraph carries no knowledge; nothing to index
        passages.append(Passage(
            text=ctx["paragraph_text"], title=ctx["title"], id=str(ctx["id"]),
            label="supporting" if ctx["is_supporting"] else "irrelevant", source="wikipedia",
        ))
    return ConflictQA(
        id=str(row.text("question_id")), dataset="hotpotqa", question=row.text("question_text"),
        answers=spans, evidence=passages, conflict_type="none",
    )


def load_hotpotqa(path: str | Path) -> list[ConflictQA]:
    """HotpotQA records (IRCoT format); every bad record is reported at once."""
    return convert_rows("hotpotqa", read_jsonl(path), _convert, file=path, id_field="question_id")


def pool_corpus(records: list[ConflictQA]) -> tuple[list[KBDocument], dict[str, list[str]], int]:
    """The pooled clean corpus, each question's supporting document ids, and
    the number of duplicate paragraphs dropped.

    A paragraph's id is ``<question_id>:<context id>`` of its first occurrence.
    """
    docs: list[KBDocument] = []
    seen: dict[tuple[str | None, str], str] = {}
    supporting: dict[str, list[str]] = {}
    duplicates = 0
    for r in records:
        supporting[r.id] = []
        for p in r.evidence:
            key = (p.title, p.text)
            if key in seen:
                duplicates += 1
                doc_id = seen[key]
            else:
                doc_id = seen[key] = f"{r.id}:{p.id}"
                docs.append(KBDocument(id=doc_id, title=p.title, text=p.text))
            if p.label == "supporting" and doc_id not in supporting[r.id]:
                supporting[r.id].append(doc_id)
    return docs, supporting, duplicates


def _norm(text: str | None) -> str:
    return " ".join((text or "").split()).casefold()


def read_corpus(spec: str | Path) -> tuple[list[KBDocument], dict[str, Any]]:
    """The passages of an index directory (``conflict-eval index build``) or of
    a corpus file (any format ``conflict-eval index build`` reads), and where
    they came from (for the KB meta)."""
    from conflict_eval.records.download import sha256_file
    from conflict_eval.retrieval import is_index_dir, iter_corpus, read_manifest

    spec = Path(spec)
    if is_index_dir(spec):
        manifest = read_manifest(spec)
        docs = []
        with open(spec / "passages.jsonl", encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                docs.append(KBDocument(id=str(row["id"]), title=row.get("title"), text=row["text"]))
        info = {"kind": "index", "name": spec.name, "backend": manifest.get("backend"),
                "corpus": manifest.get("corpus"), "passages": len(docs)}
        return docs, info
    if not spec.is_file():
        raise FileNotFoundError(f"--corpus {spec}: neither an index directory (conflict-eval index build) "
                                "nor a corpus file")
    docs = [KBDocument(id=d.id, title=d.title, text=d.text) for d in iter_corpus(spec)]
    return docs, {"kind": "file", "name": spec.name, "sha256": sha256_file(spec), "passages": len(docs)}


def corpus_documents(records: list[ConflictQA], corpus: list[KBDocument]
                     ) -> tuple[list[KBDocument], dict[str, list[str]], dict[str, int]]:
    """The clean corpus from an external ``corpus``, each question's supporting
    document ids, and counts of how the supporting paragraphs were found.

    A question's supporting paragraph is the corpus passage with the same title
    and text (white space and case aside), else the only passage with that
    title (BEIR's corpus holds each article's first paragraph, HotpotQA's
    paragraphs are those first paragraphs, so titles match where texts were
    re-split); a paragraph found neither way is **added** to the corpus so the
    gold knowledge stays retrievable and KRC stays defined, and counted.
    """
    docs = list(corpus)
    by_text: dict[tuple[str, str], str] = {}
    by_title: dict[str, list[str]] = {}
    for d in docs:
        by_text.setdefault((_norm(d.title), _norm(d.text)), d.id)
        by_title.setdefault(_norm(d.title), []).append(d.id)
    counts = {"supporting_by_text": 0, "supporting_by_title": 0, "supporting_added": 0}
    supporting: dict[str, list[str]] = {}
    ids = {d.id for d in docs}
    for r in records:
        supporting[r.id] = []
        for p in r.evidence:
            if p.label != "supporting":
                continue
            key = (_norm(p.title), _norm(p.text))
            if key in by_text:
                doc_id, how = by_text[key], "supporting_by_text"
            elif len(by_title.get(key[0], [])) == 1:
                doc_id, how = by_title[key[0]][0], "supporting_by_title"
            else:
                doc_id, how = f"{r.id}:{p.id}", "supporting_added"
                if doc_id not in ids:
                    docs.append(KBDocument(id=doc_id, title=p.title, text=p.text))
                    ids.add(doc_id)
                    by_text[key] = doc_id
            counts[how] += 1
            if doc_id not in supporting[r.id]:
                supporting[r.id].append(doc_id)
    return docs, supporting, counts


# --------------------------------------------------------------------------
# pollution


def answer_pattern(answers: list[str]) -> re.Pattern[str]:
    """Whole-word, case-insensitive match of any answer span (longest first)."""
    spans = sorted({a.strip() for a in answers if a.strip()}, key=len, reverse=True)
    body = "|".join(re.escape(s) for s in spans)
    return re.compile(rf"(?<!\w)(?:{body})(?!\w)", re.IGNORECASE)


def substitute_answer(text: str, answers: list[str], target: str) -> tuple[str, int]:
    """Type I: ``text`` with every answer occurrence replaced by ``target``."""
    return answer_pattern(answers).subn(lambda _m: target, text)


def injected_title(titles: list[str | None], answers: list[str], target: str) -> str | None:
    """The title of a Type II/III document: the first supporting paragraph's
    title, with the answer replaced by ``target`` as Type I does."""
    first = next((t for t in titles if t), None)
    return None if first is None else substitute_answer(first, answers, target)[0]


async def _ask(model, prompt: str, max_tokens: int, seed: int) -> str:
    from inspect_ai.model import GenerateConfig

    config = GenerateConfig(temperature=GENERATE["temperature"], max_tokens=max_tokens, seed=seed)
    output = await generate_checked(model, prompt, "the polluted-KB builder", config=config)
    return output.completion


async def abuild_polluted_kb(
    source: str | Path,
    model: Any,
    *,
    types: tuple[str, ...] = POLLUTION_TYPES,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
    prescreen: bool = False,
    k: int = 5,
    retriever: str = "dense",
    corpus: str | Path | None = None,
) -> PollutedKB:
    """Build the KB (async). ``model`` is an Inspect model or model name.

    ``corpus``: an index directory or corpus file for the clean corpus
    (default: the pooled paragraphs of ``source``); the KB file holds a copy
    of it, so it suits corpora that fit in memory."""
    from inspect_ai.model import get_model

    bad = [t for t in types if t not in POLLUTION_TYPES]
    if bad or not types:
        raise ValueError(f"pollution types must be some of {POLLUTION_TYPES}, got {list(types)}")
    if limit is not None and limit <= 0:
        raise ValueError(f"limit must be positive, got {limit}")
    types = tuple(t for t in POLLUTION_TYPES if t in types)
    source = Path(source)
    records = load_hotpotqa(source)
    model = get_model(model) if isinstance(model, str) else model
    corpus_info = None
    if corpus is None:
        clean, supporting, duplicates = pool_corpus(records)
    else:
        external, corpus_info = read_corpus(corpus)
        clean, supporting, found = corpus_documents(records, external)
        corpus_info.update(found)
        duplicates = 0
    chosen = list(records)
    if shuffle:
        random.Random(seed).shuffle(chosen)
    if limit is not None:
        chosen = chosen[:limit]

    by_id = {d.id: d for d in clean}
    injected_docs: list[KBDocument] = []
    questions: list[KBQuestion] = []
    for r in chosen:
        answer = r.answers[0]
        failures: dict[str, str] = {}
        injected: dict[str, list[str]] = {}
        reply = await _ask(model, TARGET_TEMPLATE.format(answer=answer), GENERATE["target_max_tokens"], seed)
        target = parse_target(reply, r.answers)
        if not target.ok:
            failures["target"] = target.reason or "?"
        else:
            sub = target.value
            title = injected_title([by_id[sid].title for sid in supporting[r.id]], r.answers, sub)
            if "I" in types:
                injected["I"] = []
                for sid in supporting[r.id]:
                    text, n = substitute_answer(by_id[sid].text, r.answers, sub)
                    clean_title = by_id[sid].title
                    new_title, n_title = (substitute_answer(clean_title, r.answers, sub) if clean_title
                                          else (clean_title, 0))
                    if n or n_title:
                        doc = KBDocument(id=f"{sid}|I|{r.id}", title=new_title, text=text,
                                         origin="I", question_id=r.id, derived_from=sid)
                        injected_docs.append(doc)
                        injected["I"].append(doc.id)
                if not injected["I"]:
                    failures["I"] = "no supporting paragraph contains the answer text"
            if "II" in types:
                poison = await _ask(model, POISONEDRAG_TEMPLATE.format(question=r.question, subcontent=sub),
                                    GENERATE["poison_max_tokens"], seed)
                text, n_words = limit_words(poison, TYPE2_MAX_WORDS)
                injected["II"] = []
                if text:
                    doc = KBDocument(id=f"{r.id}|II", title=title, text=text, origin="II", question_id=r.id)
                    injected_docs.append(doc)
                    injected["II"].append(doc.id)
                    if n_words > TYPE2_MAX_WORDS:
                        failures["II"] = f"reply cut from {n_words} to {TYPE2_MAX_WORDS} words"
                else:
                    failures["II"] = "empty reply"
            if "III" in types:
                doc = KBDocument(id=f"{r.id}|III", title=title, origin="III", question_id=r.id,
                                 text=TYPE3_TEMPLATE.format(question=r.question, subcontent=sub))
                injected_docs.append(doc)
                injected["III"] = [doc.id]
        screen = None
        if prescreen:
            screen = await _prescreen(model, r, supporting[r.id], clean, k, retriever, seed)
        questions.append(KBQuestion(
            id=r.id, question=r.question, answers=list(r.answers), supporting_ids=supporting[r.id],
            target=target.value, target_reply=reply, failures=failures, injected=injected,
            prescreen=screen,
        ))
    meta = KBMeta(
        source=source.name, source_sha256=hashlib.sha256(source.read_bytes()).hexdigest(),
        model=str(model), seed=seed, types=list(types), limit=limit,
        n_source_records=len(records), n_duplicate_paragraphs=duplicates, generate=dict(GENERATE),
        prescreen={"k": k, "retriever": retriever} if prescreen else None,
        corpus=corpus_info,
    )
    return PollutedKB(meta=meta, documents=clean + injected_docs, questions=questions)


_CLEAN_RETRIEVERS: dict[tuple[str, str], Any] = {}


async def _prescreen(model, record: ConflictQA, supporting: list[str], clean: list[KBDocument],
                     k: int, retriever: str, seed: int) -> Prescreen:
    from conflict_eval.retrieval import make_retriever

    key = (hashlib.sha256("\n".join(d.id for d in clean).encode()).hexdigest(), retriever)
    r = _CLEAN_RETRIEVERS.get(key)
    if r is None:
        r = _CLEAN_RETRIEVERS[key] = make_retriever(retriever)
        r.index([{"id": d.id, "text": d.text, "title": d.title} for d in clean])
    hits = r.search(record.question, k=k)
    ids = [h.id for h in hits]
    complete = set(supporting) <= set(ids)
    if not complete:
        return Prescreen(retrieved_ids=ids, complete=False, kept=False)
    reply = await _ask(model, yes_no_prompt(record.question, record.answers[0], hits),
                       GENERATE["answer_max_tokens"], seed)
    parsed = parse_yes_no(reply)
    return Prescreen(retrieved_ids=ids, complete=True, reply=reply, parsed=parsed.value,
                     parse_failure=parsed.reason, kept=parsed.value == "yes")


def build_report(kb: PollutedKB) -> dict[str, Any]:
    """Counts for the build report: documents, questions, and why targets failed.

    ``target_rejected`` counts the replies whose target was too close to the
    gold answer, by reason (``same as`` / ``part of`` / ``contains`` the gold
    answer, see :func:`.parse.parse_target`); ``target_failed`` the other
    target failures (no phrase, a preamble, not of the gold's kind, too long,
    empty reply), counted by kind in ``target_failed_reasons``. A failed
    target injects nothing."""
    rejected = {r: 0 for r in TARGET_REJECTIONS}
    failed = 0
    reasons: dict[str, int] = {}
    for q in kb.questions:
        reason = q.failures.get("target")
        if reason is None:
            continue
        kind = next((r for r in TARGET_REJECTIONS if reason.startswith(r + " the gold answer")), None)
        if kind:
            rejected[kind] += 1
        else:
            failed += 1
            why = re.sub(r",? (?:un)?like the gold answer .*| \(\d+ words\)$", "", reason)
            reasons[why] = reasons.get(why, 0) + 1
    injected = sum(1 for d in kb.documents if d.origin != "clean")
    return {"clean_documents": len(kb.documents) - injected, "injected_documents": injected,
            "questions": len(kb.questions),
            "with_target": sum(1 for q in kb.questions if q.target is not None),
            "target_rejected": rejected, "target_failed": failed,
            "target_failed_reasons": dict(sorted(reasons.items()))}


def build_polluted_kb(source: str | Path, model: Any, **options: Any) -> PollutedKB:
    """Synchronous :func:`abuild_polluted_kb`."""
    return asyncio.run(abuild_polluted_kb(source, model, **options))
