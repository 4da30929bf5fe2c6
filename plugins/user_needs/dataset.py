"""User-need datasets: upstream rows -> :class:`UserNeedItem` -> the grid of samples.

Every factory shares the grid options (see :func:`grid_dataset`) and takes
``path`` (a local file in the upstream format) instead of the pinned download.

Conversions (choices where the paper is silent are also in README.md):

* **HotpotQA** (IRCoT processed format): the one relevant context is the
  question's supporting paragraphs joined into one passage ("title: text");
  the conflicting context is the same passage with every occurrence of the
  answer replaced by a substitute answer of the same kind (number -> another
  question's numeric answer, entity -> another question's entity answer),
  drawn with a seeded RNG. Yes/no questions (no substitute by string
  replacement) and questions whose answer does not occur in the supporting
  paragraphs are skipped. The paper used Shaier et al.'s (2024) conflict
  versions, which are not available here.
* **KRE** (ECQA, e-CARE): matching = ``" golden_context"`` (key with a leading
  space upstream), conflict = ``negative_context``, original answer = text of
  the gold option, manipulated answer = ``negative_answer``. The options are
  listed after the question so that the answer is a well-defined entity.
* **DisentQA** (CSV from the authors' Google Doc; columns as written by their
  ``prepare_data.py``): per question, the
  ``factual`` row gives the matching context and the parametric answer, the
  ``counterfactual`` row the conflicting context and its contextual answer.
* **URAQ** (our generator's JSONL, see :mod:`.generator`): original and
  manipulated knowledge and answers.
"""

from __future__ import annotations

import csv
import logging
import random
import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from conflict_eval.components.compose import declares_metric
from conflict_eval.answers.text_metrics import normalize_squad
from conflict_eval.records import (
    ENCODING,
    BadField,
    DataFileError,
    DataNeeded,
    DatasetError,
    RecordProblem,
    Row,
    as_strings,
    build_dataset,
    check_file,
    convert_rows,
    not_utf8,
    read_json_or_jsonl,
    read_jsonl,
)

from .grid import (DEFAULT_MAX_CONTEXT_TOKENS, SETTINGS, UserNeedItem, build_grid, default_pool, load_distractors,
                   parse_counts, parse_list)
from .prompts import USER_NEEDS

HOTPOTQA_SOURCE = ("xindili-cmu/anlp-project-multihop", "df0d5757f42f098ab6026f40323e91c369307506",
                   "processed_data/hotpotqa/dev_subsampled.jsonl")
KRE_REPO, KRE_COMMIT = "yingjiahao14/KRE", "fb170442ea942439c01cf8d105d935a4b80facc3"
KRE_FILES = {"kre_ecqa": "dataset/cose.json", "kre_ecare": "dataset/ecare.json"}
logger = logging.getLogger(__name__)
DISENTQA_LOCATION = ("https://github.com/ellaneeman/disent_qa (README links the CSV files from "
                     "https://docs.google.com/document/d/1Z4vA7ifMQTk5YBF3BEYCFSnIvXCYaznLP_7VBcXPEeU)")


def _with_locator(rows: Iterator[tuple[str, Any]]) -> Iterator[tuple[str, Any]]:
    """Upstream files without ids: pass the locator ("line 3") to the converter."""
    for loc, raw in rows:
        yield loc, ({**raw, "__locator": loc} if isinstance(raw, dict) else raw)


def _index(locator: str) -> str:
    return locator.split()[-1]


# --------------------------------------------------------------------------
# HotpotQA (IRCoT format)

_YES_NO = {"yes", "no"}


def _is_number(text: str) -> bool:
    return re.fullmatch(r"[\d.,]+", text.strip()) is not None and any(c.isdigit() for c in text)


def hotpotqa_items(rows, *, file: str | None = None, seed: int = 0) -> list[UserNeedItem]:
    raw: list[tuple[Row, list[str], str, list[str]]] = []

    def convert(row: Row):
        qid = row.id("question_id")
        row.text("question_text")
        answers_objects = row.list("answers_objects")
        if not answers_objects or not isinstance(answers_objects[0], dict):
            raise BadField("answers_objects", "expected a non-empty list of answer objects")
        spans = answers_objects[0].get("spans")
        spans = [] if spans is None else as_strings(spans, "answers_objects[0].spans")
        if not spans:
            raise BadField("answers_objects", "first answer object has no spans")
        supporting = []
        titles = []
        for i, c in enumerate(row.list("contexts")):
            if not isinstance(c, dict) or not isinstance(c.get("paragraph_text"), str):
                raise BadField(f"contexts[{i}]", "expected an object with paragraph_text")
            if c.get("title") is not None and not isinstance(c["title"], str):
                raise BadField(f"contexts[{i}].title", f"expected a string, got {type(c['title']).__name__}")
            titles.append(c.get("title") or "")
            if c.get("is_supporting"):
                supporting.append(f"{c.get('title')}: {c['paragraph_text'].strip()}" if c.get("title")
                                  else c["paragraph_text"].strip())
        if not supporting:
            raise BadField("contexts", "no paragraph has is_supporting=true")
        raw.append((qid, row, spans, " ".join(supporting), titles))
        return [_Validated(qid)]

    convert_rows("user_needs_hotpotqa", rows, convert, file=file, id_field="question_id")
    numbers = sorted({s[0] for _, _, s, _, _ in raw if _is_number(s[0])})
    entities = sorted({s[0] for _, _, s, _, _ in raw
                       if not _is_number(s[0]) and s[0].lower() not in _YES_NO})
    items = []
    skipped = {"yes/no answer": 0, "answer not in the supporting paragraphs": 0, "no substitute answer": 0}
    for qid, row, spans, context, titles in raw:
        answer = spans[0]
        if answer.lower() in _YES_NO:
            skipped["yes/no answer"] += 1
            continue
        pattern = re.compile("|".join(rf"(?<!\w){re.escape(s)}(?!\w)" for s in sorted(spans, key=len, reverse=True)),
                             re.IGNORECASE)
        if not pattern.search(context):
            skipped["answer not in the supporting paragraphs"] += 1
            continue
        pool = numbers if _is_number(answer) else entities
        lowered = {s.lower() for s in spans}
        choices = [a for a in pool if a.lower() not in lowered and a.lower() not in context.lower()]
        if not choices:
            skipped["no substitute answer"] += 1
            continue
        substitute = random.Random(f"{seed}|{qid}").choice(choices)
        items.append(UserNeedItem(
            id=qid,
            question=row["question_text"],
            answers=tuple(spans),
            manipulated_answers=(substitute,),
            match_context=context,
            conflict_context=pattern.sub(lambda _: substitute, context),
            keys=frozenset(t for t in titles if t),
            source_ids=(qid,),
        ))
    _log_skipped("user_needs_hotpotqa", file, len(raw), skipped)
    return items


def _log_skipped(name: str, file: str | None, total: int, skipped: dict[str, int]) -> None:
    """Questions a conversion leaves out by design are counted in the log, never dropped silently."""
    if any(skipped.values()):
        reasons = ", ".join(f"{n} {why}" for why, n in skipped.items() if n)
        logger.warning("%s (%s): %d of %d question(s) skipped (%s)", name, file, sum(skipped.values()),
                       total, reasons)


class _Validated:
    """Placeholder returned to ``convert_rows`` so it can check ids; the
    user-need items are assembled after all rows validated."""

    def __init__(self, id: str):
        self.id = id


# --------------------------------------------------------------------------
# KRE (ECQA, e-CARE)


def _option_key(text: str) -> str:
    """Option text as compared for duplicates: SQuAD-normalised ("Desert.." = "desert")."""
    return normalize_squad(text)


def kre_items(name: str, rows, *, file: str | None = None) -> list[UserNeedItem]:
    """KRE rows as grid items. A row whose gold option *text* equals its
    misleading option text (after SQuAD normalisation: a held-out ECQA row has
    "indestructible" as both) has no conflict, since its conflict cells would
    equal its matching cells; it is skipped and counted in the log, as
    DisentQA's loader skips the same case. Options are shown without their
    final full stop (e-CARE options are sentences, "… desert." would read
    "desert.." once the list is closed)."""
    skipped = {"whose misleading option text equals the gold option text": 0}
    n_rows = 0

    def convert(row: Row):
        nonlocal n_rows
        n_rows += 1
        rid = f"{name}-{_index(row['__locator'])}"
        question = row.text("question")
        choices = row.list("choices")
        letters = "ABCDEFGHIJ"[: len(choices)]
        if len(choices) < 2 or not all(isinstance(c, str) and c.strip() for c in choices):
            raise BadField("choices", "expected at least two non-empty option strings")
        gold, cand = row.text("answer").strip(), row.text("candidate").strip()
        for field, letter in (("answer", gold), ("candidate", cand)):
            if letter not in letters:
                raise BadField(field, f"{letter!r} is not an option letter ({letters})")
        negative = row.text("negative_answer")
        if choices[letters.index(cand)].strip() != negative.strip():
            raise BadField("negative_answer", f"{negative!r} is not option {cand} ({choices[letters.index(cand)]!r})")
        if gold == cand:
            raise BadField("candidate", "misleading option equals the gold option")
        if _option_key(choices[letters.index(gold)]) == _option_key(negative):
            skipped["whose misleading option text equals the gold option text"] += 1
            return None
        options = "; ".join(c.strip().rstrip(".").rstrip() for c in choices)
        return [UserNeedItem(
            id=rid,
            question=f"{question.strip()} Options: {options}.",
            answers=(choices[letters.index(gold)].strip(),),
            manipulated_answers=(negative.strip(),),
            match_context=row.text_any(" golden_context", "golden_context").strip(),
            conflict_context=row.text("negative_context").strip(),
            source_ids=(rid,),
            extra={"options": [c.strip() for c in choices]},
        )]

    items = convert_rows(f"user_needs_{name}", _with_locator(rows), convert, file=file, id_field=None)
    _log_skipped(f"user_needs_{name}", file, n_rows, skipped)
    return items  # type: ignore[return-value]


# --------------------------------------------------------------------------
# DisentQA (CSV)

DISENTQA_COLUMNS = ("question", "context", "parametric_answer", "contextual_answer", "type")
DISENTQA_TYPES = ("factual", "counterfactual", "closed_book", "random_context", "unanswerable")
"""Row types written by the authors' ``prepare_data.py``; only the first two
have the contexts the grid needs, the others are skipped (counted in the log)."""
CSV_FIELD_LIMIT = 2**31 - 1
"""The csv module refuses fields over 131,072 characters by default; a long
context is legitimate, so the limit is raised while a DisentQA file is read."""


def read_csv(path: str | Path) -> Iterator[tuple[str, Any]]:
    """Rows of a DisentQA CSV (UTF-8, a byte-order mark is skipped) as
    ``("line N", row)``; N is the line where the row starts. A missing
    required column, an empty file or a malformed CSV is an error naming the file."""
    path = check_file(path, "user_needs_disentqa")
    limit = csv.field_size_limit()
    csv.field_size_limit(min(CSV_FIELD_LIMIT, sys.maxsize))
    try:
        with open(path, encoding=ENCODING, newline="") as f:
            reader = csv.DictReader(f)
            try:
                fieldnames = reader.fieldnames
            except UnicodeDecodeError:
                raise not_utf8(path, "user_needs_disentqa") from None
            if not fieldnames:
                raise DataFileError("user_needs_disentqa", path, "the file is empty (no header, no records)")
            missing = [c for c in DISENTQA_COLUMNS if c not in fieldnames]
            if missing:
                raise DatasetError("user_needs_disentqa", str(path), [RecordProblem(
                    "-", "header", ",".join(missing), f"missing column(s); have {fieldnames}")])
            start = reader.line_num + 1
            while True:
                try:
                    row = next(reader)
                except StopIteration:
                    break
                except csv.Error as exc:
                    raise DataFileError("user_needs_disentqa", path, f"line {reader.line_num}: bad CSV ({exc})") from None
                except UnicodeDecodeError:
                    raise not_utf8(path, "user_needs_disentqa") from None
                if None in row:
                    raise DataFileError("user_needs_disentqa", path,
                                        f"line {start}: more fields than the header has columns")
                yield f"line {start}", row
                start = reader.line_num + 1
    finally:
        csv.field_size_limit(limit)


def disentqa_items(rows, *, file: str | None = None) -> list[UserNeedItem]:
    by_question: dict[str, dict[str, Row]] = {}
    skipped = {"duplicate factual/counterfactual row": 0}
    by_type = {t: 0 for t in DISENTQA_TYPES[2:]}

    def convert(row: Row):
        kind = row.text("type").strip()
        if kind not in DISENTQA_TYPES:
            raise BadField("type", f"unknown DisentQA row type {kind!r}; expected one of {', '.join(DISENTQA_TYPES)}")
        question = row.text("question").strip()
        if kind == "factual":
            row.text("context"), row.text("parametric_answer")
        elif kind == "counterfactual":
            row.text("context"), row.text("contextual_answer")
        else:
            by_type[kind] += 1
        if kind in ("factual", "counterfactual"):
            kinds = by_question.setdefault(question, {})
            if kind in kinds:
                skipped["duplicate factual/counterfactual row"] += 1
            else:
                kinds[kind] = row
        return [_Validated(row["__locator"])]

    convert_rows("user_needs_disentqa", _with_locator(rows), convert, file=file, id_field=None)
    items = []
    questions = {"without both a factual and a counterfactual row": 0,
                 "whose counterfactual answer equals the factual one": 0}
    for question, kinds in by_question.items():
        if "factual" not in kinds or "counterfactual" not in kinds:
            questions["without both a factual and a counterfactual row"] += 1
            continue
        fact, counter = kinds["factual"], kinds["counterfactual"]
        if counter["contextual_answer"].strip().lower() == fact["parametric_answer"].strip().lower():
            questions["whose counterfactual answer equals the factual one"] += 1
            continue
        qid = f"disentqa-{_index(fact['__locator'])}"
        items.append(UserNeedItem(
            id=qid, question=question,
            answers=(fact["parametric_answer"].strip(),),
            manipulated_answers=(counter["contextual_answer"].strip(),),
            match_context=fact["context"].strip(), conflict_context=counter["context"].strip(),
            source_ids=(fact["__locator"], counter["__locator"]),
        ))
    other = sum(by_type.values())
    if other or skipped["duplicate factual/counterfactual row"]:
        logger.warning("user_needs_disentqa (%s): rows not used: %s", file, ", ".join(
            [f"{n} {t}" for t, n in by_type.items() if n]
            + [f"{n} {why}" for why, n in skipped.items() if n]))
    _log_skipped("user_needs_disentqa", file, len(by_question), questions)
    return items


# --------------------------------------------------------------------------
# URAQ (generated)


def uraq_items(rows, *, file: str | None = None) -> list[UserNeedItem]:
    def convert(row: Row):
        rid = row.id("id")
        return [UserNeedItem(
            id=rid, question=row.text("question"),
            answers=(row.text("original_answer"),),
            manipulated_answers=(row.text("manipulated_answer"),),
            match_context=row.text("original_knowledge"),
            conflict_context=row.text("manipulated_knowledge"),
            source_ids=(rid,),
            extra={"answer_type": row.get("answer_type"), "hops": row.get("hops")},
        )]

    return convert_rows("user_needs_uraq", rows, convert, file=file)  # type: ignore[return-value]


# --------------------------------------------------------------------------
# factories


def grid_dataset(
    name: str,
    items: Sequence[UserNeedItem],
    *,
    location: str | None,
    user_need: str | list[str] | None,
    setting: str | list[str] | None,
    n_contexts: str | list[int],
    max_context_tokens: int | None,
    limit: int | None,
    seed: int,
    distractors: str | None = None,
):
    """The grid as an Inspect dataset. ``limit`` counts *questions*; the
    distractor pool is built from all questions of the file, plus the passages
    of the ``distractors`` file when given."""
    user_needs = USER_NEEDS if user_need is None else parse_list("user_need", user_need, USER_NEEDS)
    settings = SETTINGS if setting is None else parse_list("setting", setting, SETTINGS)
    counts = parse_counts(n_contexts)
    if limit is not None and (not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive number of questions, got {limit!r}")
    if not items:
        raise ValueError(f"dataset {name!r} ({location}): no usable questions")
    pool = default_pool(items) + (load_distractors(distractors, dataset=f"{name} distractors")
                                  if distractors else [])
    chosen = list(items)[:limit] if limit else list(items)
    records = build_grid(name, chosen, user_needs=user_needs, settings=settings, n_contexts=counts,
                         max_context_tokens=max_context_tokens, seed=seed, pool=pool)
    return build_dataset(name, records, location=location)


def _grid_doc(fn):
    fn.__doc__ = (fn.__doc__ or "") + """
    Args:
        path: local file in the upstream format (default: pinned download).
        user_need: ``context_exclusive``, ``context_first``, ``memory_first`` or a
            comma list; None = all three.
        setting: ``matching``, ``conflict``, ``irrelevant`` or a comma list; None = all.
        n_contexts: numbers of retrieved contexts, e.g. ``"1,2,4,8"``, or a Table 1
            preset: ``uraq`` (= ``synthetic``), ``disentqa``, ``hotpotqa``.
        max_context_tokens: drop counts whose average context exceeds this many
            (approximate) tokens; None = no cap.
        limit: number of questions (each expands to the whole grid).
        seed: distractor sampling and relevant-context placement.
        distractors: JSONL file of extra distractor passages (``text``), or a URAQ
            generator output / ``.pool.jsonl`` file; added to the pool.
    """
    return fn


@_grid_doc
@declares_metric("user_need_accuracy")
def user_needs_hotpotqa(path: str | None = None, user_need: str | None = None, setting: str | None = None,
                        n_contexts: str = "1,2,4,8", max_context_tokens: int | None = DEFAULT_MAX_CONTEXT_TOKENS,
                        limit: int | None = None, seed: int = 0, distractors: str | None = None):
    """HotpotQA (IRCoT processed dev subsample) in the three context settings."""
    if path is None:
        from conflict_eval.records.download import github_file
        path = str(github_file(*HOTPOTQA_SOURCE))
    check_file(path, "user_needs_hotpotqa")
    items = hotpotqa_items(read_jsonl(path), file=path, seed=seed)
    return grid_dataset("user_needs_hotpotqa", items, location=path, user_need=user_need, setting=setting,
                        n_contexts=n_contexts, max_context_tokens=max_context_tokens, limit=limit, seed=seed,
                        distractors=distractors)


def _kre(name: str, path, **grid):
    if path is None:
        from conflict_eval.records.download import github_file
        path = str(github_file(KRE_REPO, KRE_COMMIT, KRE_FILES[name]))
    check_file(path, f"user_needs_{name}")
    items = kre_items(name, read_json_or_jsonl(path), file=path)
    return grid_dataset(f"user_needs_{name}", items, location=path, **grid)


@_grid_doc
@declares_metric("user_need_accuracy")
def user_needs_kre_ecqa(path: str | None = None, user_need: str | None = None, setting: str | None = None,
                        n_contexts: str = "1,2,4,8", max_context_tokens: int | None = DEFAULT_MAX_CONTEXT_TOKENS,
                        limit: int | None = None, seed: int = 0, distractors: str | None = None):
    """KRE ECQA (dataset/cose.json) in the three context settings."""
    return _kre("kre_ecqa", path, user_need=user_need, setting=setting, n_contexts=n_contexts,
                max_context_tokens=max_context_tokens, limit=limit, seed=seed, distractors=distractors)


@_grid_doc
@declares_metric("user_need_accuracy")
def user_needs_kre_ecare(path: str | None = None, user_need: str | None = None, setting: str | None = None,
                         n_contexts: str = "1,2,4,8", max_context_tokens: int | None = DEFAULT_MAX_CONTEXT_TOKENS,
                         limit: int | None = None, seed: int = 0, distractors: str | None = None):
    """KRE e-CARE (dataset/ecare.json) in the three context settings."""
    return _kre("kre_ecare", path, user_need=user_need, setting=setting, n_contexts=n_contexts,
                max_context_tokens=max_context_tokens, limit=limit, seed=seed, distractors=distractors)


@_grid_doc
@declares_metric("user_need_accuracy")
def user_needs_disentqa(path: str | None = None, user_need: str | None = None, setting: str | None = None,
                        n_contexts: str = "1,2,4,8", max_context_tokens: int | None = DEFAULT_MAX_CONTEXT_TOKENS,
                        limit: int | None = None, seed: int = 0, distractors: str | None = None):
    """DisentQA (Neeman et al., 2023) CSV: factual + counterfactual rows per question.

    The CSV files are only linked from a Google Doc (no pinned revision to
    download); pass ``path=`` to a downloaded copy.
    """
    if path is None:
        raise DataNeeded("user_needs_disentqa", "required", f"a DisentQA CSV; the files live at {DISENTQA_LOCATION}")
    items = disentqa_items(read_csv(path), file=path)
    return grid_dataset("user_needs_disentqa", items, location=path, user_need=user_need, setting=setting,
                        n_contexts=n_contexts, max_context_tokens=max_context_tokens, limit=limit, seed=seed,
                        distractors=distractors)


@_grid_doc
@declares_metric("user_need_accuracy")
def user_needs_uraq(path: str | None = None, user_need: str | None = None, setting: str | None = None,
                    n_contexts: str = "1,2,4,8", max_context_tokens: int | None = DEFAULT_MAX_CONTEXT_TOKENS,
                    limit: int | None = None, seed: int = 0, distractors: str | None = None):
    """URAQ-style synthetic data made by ``conflict-eval user-needs generate`` (JSONL)."""
    if path is None:
        raise DataNeeded("user_needs_uraq", "required", "a file written by `conflict-eval user-needs generate` "
                         "(URAQ itself is unreleased)")
    check_file(path, "user_needs_uraq")
    items = uraq_items(read_jsonl(path), file=path)
    return grid_dataset("user_needs_uraq", items, location=path, user_need=user_need, setting=setting,
                        n_contexts=n_contexts, max_context_tokens=max_context_tokens, limit=limit, seed=seed,
                        distractors=distractors)
