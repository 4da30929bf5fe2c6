"""ConflictBench-style conflict detection items (ConflictScore §4, Appendix A).

Every item is one claim plus grounding documents with a gold label
``Conflict`` / ``No Conflict``, as a :class:`~conflict_eval.records.ConflictQA`:
``question`` is the claim, ``answers`` is ``["Conflict"]`` or ``["No Conflict"]``,
``evidence`` are the documents (label ``supporting`` / ``conflicting`` /
``irrelevant``), ``setting`` is ``conflict`` / ``no_conflict`` and
``extra`` holds ``{"subset", "conflict", "claim", "source_question"}``.

Appendix A recipe (used for AmbigDocs, ContraQA, MacNoise and for our
KRE-derived split): a *conflict* item is the claim with its grounding
documents -- at least one supporting and one contradicting; a *no-conflict*
item is the claim with its supporting document plus two random documents of
other questions (which should be labelled irrelevant).

Choices where the paper is silent (see README):

* **Claim.** The paper has GPT-4.1 turn each question into a claim. Offline
  and reproducibly, we write the claim from the question and its gold answer
  with a fixed template, :data:`CLAIM_TEMPLATE`.
* **Which items are conflict items.** Each upstream record yields one item;
  a seeded shuffle (``seed``) sends half of the usable records (rounded up)
  to the conflict side and the rest to the no-conflict side.
* **Document order** inside an item is shuffled with the same seed so the
  supporting document is not always first.
"""

from __future__ import annotations

import hashlib
import logging
import random
from collections.abc import Callable, Sequence
from pathlib import Path

from conflict_eval.records.download import github_file
from conflict_eval.scorers.conflictscore.detection import CONFLICT, NO_CONFLICT
from conflict_eval.records import (
    LETTERS,
    BadField,
    ConflictQA,
    DataFileAdvice,
    DataFileError,
    DataNeeded,
    Passage,
    Row,
    TaskArgument,
    build_dataset,
    check_file,
    convert_rows,
    optional_text,
    read_json_or_jsonl,
)

logger = logging.getLogger(__name__)

CLAIM_TEMPLATE = 'The answer to the question "{question}" is: {answer}.'

KRE_REPO = "yingjiahao14/KRE"
KRE_COMMIT = "fb170442ea942439c01cf8d105d935a4b80facc3"
KRE_FILES = {"ecqa": "dataset/cose.json", "ecare": "dataset/ecare.json"}


def make_claim(question: str, answer: str) -> str:
    return CLAIM_TEMPLATE.format(question=question.strip().rstrip("?").strip() + "?", answer=answer.strip().rstrip("."))


class _Base:
    """An upstream record reduced to what the recipe needs."""

    def __init__(self, rid: str, question: str, answer: str, supporting: Passage,
                 contradicting: Passage | None):
        self.rid, self.question, self.answer = rid, question, answer
        self.supporting, self.contradicting = supporting, contradicting


def _assemble(subset: str, bases: list[_Base], seed: int, file: Path | None = None) -> list[ConflictQA]:
    """Apply the Appendix A recipe to reduced records (see module docstring)."""
    order = list(range(len(bases)))
    random.Random(f"{seed}|{subset}|split").shuffle(order)
    conflict_side = set(order[: (len(order) + 1) // 2])
    records = []
    for i, b in enumerate(bases):
        rng = random.Random(f"{seed}|{subset}|{b.rid}")
        conflict = i in conflict_side and b.contradicting is not None
        if conflict:
            docs = [b.supporting, b.contradicting]
        else:
            others = [o for o in bases if o.rid != b.rid]
            if len(others) < 2:
                raise DataFileError(subset, file, f"a no-conflict item needs at least 3 usable records, got {len(bases)}")
            docs = [b.supporting] + [
                o.supporting.model_copy(update={"label": "irrelevant"}) for o in rng.sample(others, 2)]
        rng.shuffle(docs)
        claim = make_claim(b.question, b.answer)
        records.append(ConflictQA(
            id=f"{subset}-{b.rid}",
            dataset=subset,
            question=claim,
            answers=[CONFLICT if conflict else NO_CONFLICT],
            evidence=docs,
            conflict_type="inter_context" if conflict else "none",
            setting="conflict" if conflict else "no_conflict",
            source_ids=[b.rid],
            extra={"subset": subset, "conflict": conflict, "claim": claim, "source_question": b.question},
        ))
    return records


def _reduce(dataset: str, path: Path, reduce: Callable[[Row, str], _Base | None]) -> list[_Base]:
    bases: list[_Base] = []

    def convert(row: Row):
        base = reduce(row, str(len(bases_seen)))
        bases_seen.append(1)
        if base is not None:
            bases.append(base)
        return None

    bases_seen: list[int] = []
    convert_rows(dataset, read_json_or_jsonl(path), convert, file=path)
    return bases


def _golden(row: Row) -> str:
    return row.text_any(" golden_context", "golden_context")  # leading space as shipped


def kre_records(path: str | Path, subset: str = "conflictbench_kre", seed: int = 0) -> list[ConflictQA]:
    """ConflictBench-style items derived from a KRE file (ECQA or e-CARE schema).

    Supporting document = ``golden_context`` (argues for the gold option);
    contradicting document = ``negative_context`` (argues for ``candidate``).
    Claim = :data:`CLAIM_TEMPLATE` with the gold option's text.
    """
    path = check_file(path, subset)

    def reduce(row: Row, index: str) -> _Base:
        choices = row.list("choices")
        letter = row.letter("answer", choices)
        answer = choices[LETTERS.index(letter)]
        if not isinstance(answer, str) or not answer.strip():
            raise BadField("choices", f"gold option {letter} is not a non-empty string")
        return _Base(index, row.text("question"), answer,
                     Passage(text=_golden(row), label="supporting", id=f"{index}-golden"),
                     Passage(text=row.text("negative_context"), label="conflicting", id=f"{index}-negative"))

    return _assemble(subset, _reduce(subset, path, reduce), seed, path)


SKIP_NO_SUPPORT = "no passage contains a gold answer (Appendix A needs a supporting document)"


def macnoise_records(path: str | Path, subset: str = "macnoise_nq", seed: int = 0,
                     dropped: dict[str, int] | None = None) -> list[ConflictQA]:
    """ConflictBench items from MacNoise rows (``question``, ``answers``,
    ``ctxs[{id,title,text,text_pert}]``).

    Supporting document = the first passage whose original ``text`` contains
    a gold answer (case-insensitive); contradicting document = the
    ``text_pert`` of the first passage that was perturbed (``text_pert !=
    text``) and no longer contains any gold answer. Records without a
    supporting passage cannot follow the recipe and are skipped: counted in
    ``dropped["<subset>: <reason>"]`` when given (the task puts it in the
    eval log) and in :data:`LAST_SKIPPED`; a record with no usable perturbed
    passage can only be a no-conflict item.
    """
    path = check_file(path, subset)
    skipped: list[str] = []

    def reduce(row: Row, index: str) -> _Base | None:
        answers = row.strings("answers")
        if not answers:
            raise BadField("answers", "expected at least one non-empty answer string")
        ctxs = row.list("ctxs")
        support = contra = None
        for n, ctx in enumerate(ctxs):
            if not isinstance(ctx, dict) or not isinstance(ctx.get("text"), str):
                raise BadField(f"ctxs[{n}]", "expected an object with a 'text' string")
            has = lambda t: any(a.lower() in t.lower() for a in answers)  # noqa: E731
            cid = optional_text(ctx.get("id"), f"ctxs[{n}].id")
            title = optional_text(ctx.get("title"), f"ctxs[{n}].title")
            if support is None and has(ctx["text"]):
                support = Passage(text=ctx["text"], label="supporting", title=title, id=cid)
            pert = ctx.get("text_pert")
            if pert is not None and not isinstance(pert, str):
                raise BadField(f"ctxs[{n}].text_pert", f"expected a string, got {type(pert).__name__}")
            if contra is None and isinstance(pert, str) and pert != ctx["text"] and not has(pert):
                contra = Passage(text=pert, label="conflicting", title=title,
                                 id=None if cid is None else f"{cid}-pert")
        if support is None:
            skipped.append(index)
            return None
        return _Base(index, row.text("question"), answers[0], support, contra)

    records = _assemble(subset, _reduce(subset, path, reduce), seed, path)
    LAST_SKIPPED[subset] = len(skipped)
    if skipped:
        logger.warning("%s (%s): %d record(s) dropped: %s", subset, path, len(skipped), SKIP_NO_SUPPORT)
        if dropped is not None:
            key = f"{subset}: {SKIP_NO_SUPPORT}"
            dropped[key] = dropped.get(key, 0) + len(skipped)
    return records


LAST_SKIPPED: dict[str, int] = {}


def ambigdocs_records(path: str | Path, subset: str = "ambigdocs", seed: int = 0) -> list[ConflictQA]:
    """ConflictBench AmbigDocs items from AmbigDocs rows (``qid``,
    ``question``, ``ambiguous_entity``, ``documents[{title, text, pid,
    answer}]``; a JSON list, ``{"data": [...]}`` or JSONL).

    The claim answers the question with the first document's answer
    (supporting document: that document); the contradicting document is the
    first document about another entity with the same name whose answer
    differs (entity ambiguity). Rows with fewer than one document are
    errors; rows whose documents all share one answer can only be
    no-conflict items.
    """
    path = check_file(path, subset)

    def reduce(row: Row, index: str) -> _Base:
        docs = row.list("documents")
        if not docs:
            raise BadField("documents", "expected at least one document")
        for n, d in enumerate(docs):
            if not isinstance(d, dict) or not isinstance(d.get("text"), str) or not isinstance(d.get("answer"), str):
                raise BadField(f"documents[{n}]", "expected an object with 'text' and 'answer' strings")
        rid = row.id("qid") if "qid" in row else index

        def passage(n: int, label: str) -> Passage:
            d = docs[n]
            return Passage(text=d["text"], label=label, title=optional_text(d.get("title"), f"documents[{n}].title"),
                           id=optional_text(d.get("pid"), f"documents[{n}].pid"))

        first = docs[0]
        if not first["answer"].strip():
            raise BadField("documents[0].answer", "expected a non-empty string")
        other = next((n for n, d in enumerate(docs) if n > 0
                      and d["answer"].strip().lower() != first["answer"].strip().lower()), None)
        return _Base(rid, row.text("question"), first["answer"], passage(0, "supporting"),
                     passage(other, "conflicting") if other is not None else None)

    return _assemble(subset, _reduce(subset, path, reduce), seed, path)


PICKLE_SUFFIXES = (".pkl", ".pickle")
CONVERT_COMMAND = "python -m conflict_eval.plugins.conflictbench.convert_conflictingqa"


def _is_pickle(path: Path) -> bool:
    if path.suffix.lower() in PICKLE_SUFFIXES:
        return True
    with path.open("rb") as f:
        return f.read(1) == b"\x80"  # pickle protocol 2+ opcode PROTO


def refuse_pickle(path: Path, dataset: str) -> DataFileError:
    """The error for a pickle given as a dataset file (see README: we never unpickle)."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    digest = h.hexdigest()
    return DataFileAdvice(
        dataset, path,
        f"this is a Python pickle (sha256 {digest}); loading a pickle runs any code it contains and "
        "ConflictingQA's download is unversioned (no hash to pin), so conflict-eval does not "
        f"unpickle it. Convert it once to JSON Lines: `{CONVERT_COMMAND} {path} conflictingqa.jsonl "
        "--trust-pickle` (only if you trust where the file came from), then pass it as ",
        TaskArgument("path", "conflictingqa.jsonl"))


def conflictingqa_records(path: str | Path, subset: str = "conflictingqa") -> list[ConflictQA]:
    """ConflictBench ConflictingQA items: one item per ``search_query``.

    Input: the columns of the authors' ``data.pkl`` (``search_query``,
    ``text_window``, ``stance`` with values ``yes`` / ``no``, ``url``,
    ``title``) as JSON / JSONL. The pickle itself is refused
    (:func:`refuse_pickle`); convert it once with
    ``python -m conflict_eval.plugins.conflictbench.convert_conflictingqa``.
    Appendix A takes the
    original conflict labels and documents as they are: the documents are the
    query's ``text_window`` passages; the item is a conflict iff both stances
    occur. The claim is :data:`CLAIM_TEMPLATE` with answer ``yes`` (the paper
    rewrites the query with GPT-4.1 instead); a ``no``-stance document
    therefore contradicts it.
    """
    path = check_file(path, subset)
    if _is_pickle(path):
        raise refuse_pickle(path, subset)
    rows = read_json_or_jsonl(path)
    groups: dict[str, list[Passage]] = {}

    def convert(row: Row):
        stance = str(row["stance"]).strip().lower()
        if stance not in ("yes", "no"):
            raise BadField("stance", f"expected 'yes' or 'no', got {row['stance']!r}")
        query = row.text("search_query")
        groups.setdefault(query, []).append(Passage(
            text=row.text("text_window"), label="supporting" if stance == "yes" else "conflicting",
            title=optional_text(row.get("title"), "title"),
            id=optional_text(row.get("url"), "url") or str(len(groups[query])), source="web"))
        return None

    convert_rows(subset, rows, convert, file=path)
    records = []
    for n, (query, docs) in enumerate(groups.items()):
        conflict = {p.label for p in docs} == {"supporting", "conflicting"}
        claim = make_claim(query, "yes")
        records.append(ConflictQA(
            id=f"{subset}-{n}", dataset=subset, question=claim, answers=[CONFLICT if conflict else NO_CONFLICT],
            evidence=docs, conflict_type="inter_context" if conflict else "none",
            setting="conflict" if conflict else "no_conflict", source_ids=[query],
            extra={"subset": subset, "conflict": conflict, "claim": claim, "source_question": query}))
    return records


def alternate_labels(records: list[ConflictQA], seed: int) -> list[ConflictQA]:
    """A seeded shuffle in which Conflict and No Conflict items alternate
    (the rest of the larger side at the end), so the first ``n >= 2``
    items -- what ``--limit n`` evaluates -- hold both labels whenever the
    data has both. A plain shuffle does not promise that."""
    shuffled = list(records)
    random.Random(seed).shuffle(shuffled)
    sides = [[r for r in shuffled if r.answers == [CONFLICT]], [r for r in shuffled if r.answers != [CONFLICT]]]
    random.Random(f"{seed}|first").shuffle(sides)
    out: list[ConflictQA] = []
    for i in range(max(len(sides[0]), len(sides[1]))):
        out += [side[i] for side in sides if i < len(side)]
    return out


def _load(records: list[ConflictQA], name: str, location: str, limit, shuffle, seed):
    if shuffle:
        records = alternate_labels(records, seed)
    return build_dataset(name, records, location=location, limit=limit, shuffle=False, seed=seed)


def conflictbench_kre(
    path: str | None = None,
    kre_subset: str = "ecqa",
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
):
    """ConflictBench-style split *derived* from KRE (not part of the paper's
    ConflictBench): ``path`` is a KRE ECQA or e-CARE file (JSON array or
    JSONL); without it the file is downloaded from the authors' repository at
    a pinned commit."""
    if kre_subset not in KRE_FILES:
        raise ValueError(f"conflictbench_kre kre_subset={kre_subset!r}: expected one of {sorted(KRE_FILES)}")
    file = check_file(path, "conflictbench_kre") if path else github_file(KRE_REPO, KRE_COMMIT, KRE_FILES[kre_subset])
    records = kre_records(file, subset=f"kre_{kre_subset}_derived", seed=seed)
    return _load(records, "conflictbench_kre", str(file), limit, shuffle, seed)


def conflictbench_macnoise(
    path: str | None = None,
    variant: str = "nq",
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
):
    """ConflictBench MacNoise-NQ / MacNoise-TQA items from a MacNoise file
    (``path`` required: the data lives in the authors' unversioned Google
    Drive folder, see README)."""
    if variant not in ("nq", "tqa"):
        raise ValueError(f"conflictbench_macnoise variant={variant!r}: expected nq or tqa")
    if not path:
        raise DataNeeded("conflictbench_macnoise", "required",
                         "MacNoise lives in the authors' Google Drive folder "
                         "https://drive.google.com/drive/folders/1icxbi5_9OvNkr4cG5h7NrY4F01Y7amj0 "
                         "(no pinned revision possible)")
    records = macnoise_records(check_file(path, "conflictbench_macnoise"), subset=f"macnoise_{variant}", seed=seed)
    return _load(records, "conflictbench_macnoise", path, limit, shuffle, seed)


def conflictbench_ambigdocs(
    path: str | None = None,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
):
    """ConflictBench AmbigDocs items from an AmbigDocs file (``path`` required:
    the Hugging Face dataset ``yoonsanglee/AmbigDocs`` has no revision we can
    pin offline; download ``test.json`` and pass it)."""
    if not path:
        raise DataNeeded("conflictbench_ambigdocs", "required",
                         "test.json of the Hugging Face dataset yoonsanglee/AmbigDocs")
    records = ambigdocs_records(check_file(path, "conflictbench_ambigdocs"), seed=seed)
    return _load(records, "conflictbench_ambigdocs", path, limit, shuffle, seed)


def conflictbench_conflictingqa(
    path: str | None = None,
    limit: int | None = None,
    shuffle: bool = False,
    seed: int = 0,
):
    """ConflictBench ConflictingQA items from the columns of the authors'
    ``data.pkl`` as JSON/JSONL (convert the pickle once, see README);
    ``path`` required (Google Drive, unversioned)."""
    if not path:
        raise DataNeeded("conflictbench_conflictingqa", "required",
                         "download data.pkl from the authors' Google Drive folder "
                         "https://drive.google.com/drive/folders/1fU52Jg6wVXCr6J03i0bRy7hA02iVbeS_ "
                         f"and convert it once with `{CONVERT_COMMAND} data.pkl conflictingqa.jsonl --trust-pickle`")
    records = conflictingqa_records(check_file(path, "conflictbench_conflictingqa"))
    return _load(records, "conflictbench_conflictingqa", path, limit, shuffle, seed)


def combine(parts: Sequence[list[ConflictQA]]) -> list[ConflictQA]:
    return [r for part in parts for r in part]
