"""Read-as-meant benchmark (issue 32, Deliver 3): does each reader read a reply as its writer meant it?

The corpus is ``tests/data/reply_corpus/``: ``real.jsonl`` labels the real
replies kept in ``../shared/replies/`` (read there, in place) and
``shapes.jsonl`` holds hand-written replies in the shapes of issue 32; each row
names its prompt ``kind`` and the ``meaning`` labelled by reading it (see that
folder's README). :func:`reader_chains` maps each prompt kind to the reader (or
reader chain) the toolkit applies to it: every unit declares its chains with
the hook ``conflict_eval_reply_readers`` (``conflict_eval.answers.readers.Chain``,
named as its fuzz entries are), collected by the plugin manager, so a
third-party plugin's reader is read here too; the shapes files a unit
declares are read with ``shapes.jsonl``. For every reader and row the
outcome is one of:

* ``meant``: the reader's value is the labelled meaning, or the reply is
  labelled ``unreadable`` (or a ``refusal``, for a reader that has no refusal
  outcome) and the reader returns its failure value;
* ``misread``: the reader returns a value (or a refusal) other than the
  meaning: the reply would be scored as something its writer did not say;
* ``refused``: the reader returns its failure value on a reply whose meaning
  is readable (a counted parse failure, never a score, but not as meant);
  counted apart from misreads. For a reader that recognises refusals, a
  refusal read as a parse failure counts here;
* ``crashed``: the reader raised (never allowed).

    python benchmarks/reply_reading.py [--which real|shapes|all] [--as before|after] [--extractor MODEL]

Writes ``benchmarks/results/reply_reading.{md,json}`` (``--as before`` also
keeps the run in ``reply_reading_before.json``; the Markdown shows that
"before" table beside the current one, each with the commit it was run on).
``--extractor conflict_eval/smollm2`` also sends every choice-kind reply
through the answer extractor (Deliver 5, ``conflict_eval.answers.extraction``)
to that grader and reports how often the extracted letter agrees with the
labelled meaning (``reply_reading_extraction.json``).
``tests/test_reply_corpus.py`` holds every reader at 100% meant.

Issue 42 adds the second real set (``../shared/replies-2026-11-26/``, read in
place, :func:`load_second`), readers for the methods' whole chains (End-to-End,
Few-Shot, CoT, GKP, over-rationalization, MADAM-RAG, Micro-Act), and the
metamorphic rewrites of ``benchmarks/reply_rewrites.py`` (:func:`measure_rewrites`),
reported per chain and per rewrite in the same Markdown and in
``reply_rewrites.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from conflict_eval.answers.readers import NO_CONFLICTS, Chain, Reading, letters_of, norm, triplet_set

__all__ = ["NO_CONFLICTS", "Chain", "Reading", "norm"]  # the corpus vocabulary, from the core (tests use them here)

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "data" / "reply_corpus"
REPLIES = REPO.parent / "shared" / "replies"
SECOND = REPO.parent / "shared" / "replies-2026-11-26"
"""The second set of real replies (issue 42, Deliver 6): ``labelled.jsonl`` there, read in place."""
RELABELS = CORPUS / "second_relabels.jsonl"
"""Rows of the second set we read differently from its label: ``id``, ``meaning``, ``why``."""
ADDED = CORPUS / "second_added.jsonl"
"""Rows of the second set its ``labelled.jsonl`` leaves out (AtomR's), labelled by us; replies read in place."""
RESULTS = REPO / "benchmarks" / "results"
FILES = {"real": "real.jsonl", "shapes": "shapes.jsonl"}
CORPORA = ("real", "shapes", "second")
OUTCOMES = ("meant", "misread", "refused", "crashed")

MEANING_KEYS = ("label", "labels", "claims", "choice", "questions", "triplets", "no_conflicts", "yes_no", "span",
                "answer", "strict_em", "refusal", "unreadable", "free_text", "answers", "action", "conflict", "n_steps",
                "plan")


# --------------------------------------------------------------------------
# the corpus


def load_second(folder: Path = SECOND) -> list[dict]:
    """The second real set, read in place: ``folder/labelled.jsonl`` (rows in
    the corpus format, reply inline), each reply checked against its file
    ``folder/<group>/<run>/replies/<id>.txt``, with our relabels
    (:data:`RELABELS`) applied; ``relabelled`` keeps the label replaced."""
    relabels = {}
    with RELABELS.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            row = json.loads(line)
            if not row.get("why") or not isinstance(row.get("meaning"), dict):
                raise ValueError(f"{RELABELS.name} line {n} ({row.get('id')!r}): needs 'meaning' and 'why'")
            relabels[row["id"]] = row
    path = folder / "labelled.jsonl"
    rows = []
    for file in (path, ADDED):
        for n, line in enumerate(file.read_text(encoding="utf-8").splitlines(), 1):
            row = json.loads(line)
            where = f"{file.name} line {n} ({row.get('id')!r})"
            group, run, name = str(row.get("id", "")).split("/")
            source = folder / group / run / "replies" / f"{name}.txt"
            if not source.is_file():
                raise FileNotFoundError(f"{where}: field 'id': no reply file {source}")
            if not isinstance(row.get("meaning"), dict) or not any(k in row["meaning"] for k in MEANING_KEYS):
                raise ValueError(f"{where}: field 'meaning' must be an object with one of {', '.join(MEANING_KEYS)}")
            if row["id"] in relabels:
                row["relabelled"], row["meaning"] = row["meaning"], relabels[row["id"]]["meaning"]
            row.setdefault("reply", source.read_text(encoding="utf-8"))  # our labels (ADDED) keep no reply inline
            row["source"], row["corpus"] = str(source.relative_to(folder)), "second"
            rows.append(row)
    unknown = set(relabels) - {r["id"] for r in rows}
    if unknown:
        raise ValueError(f"{RELABELS.name}: ids not in {path}: {sorted(unknown)}")
    return rows


def load_corpus(which: str = "all", replies: Path = REPLIES, second: Path = SECOND) -> list[dict]:
    """Rows of ``real.jsonl``, ``shapes.jsonl`` (with the shapes files the units
    declare, :func:`declared_shapes`) and/or the second real set
    (:func:`load_second`), each with its ``reply`` text (real replies are read
    from ``replies / row["source"]``; a declared shape gives its reply inline)."""
    names = list(FILES) if which == "all" else [which] if which in FILES else []
    rows: list[dict] = []
    if which in ("all", "second") and (which == "second" or second.is_dir()):
        rows += load_second(second)
    for name in names:
        paths = [CORPUS / FILES[name]] + (declared_shapes() if name == "shapes" else [])
        for path in paths:
            rows += _read_rows(path, name, replies, inline=path.parent != CORPUS)
    return rows


def _read_rows(path: Path, corpus: str, replies: Path, inline: bool) -> list[dict]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such corpus file (declared by a unit's ReplyReaders.shapes?)")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            row = json.loads(line)
            where = f"{path if inline else path.name} line {n} ({row.get('id')!r})"
            meaning = row.get("meaning")
            if not isinstance(meaning, dict) or not any(k in meaning for k in MEANING_KEYS):
                raise ValueError(f"{where}: field 'meaning' must be an object with one of {', '.join(MEANING_KEYS)}")
            if inline and not isinstance(row.get("reply"), str):
                raise ValueError(f"{where}: field 'reply': a declared shape gives its reply text inline")
            if "reply" not in row:
                source = replies / row["source"]
                if not source.is_file():
                    raise FileNotFoundError(f"{where}: field 'source': no reply file {source}")
                row["reply"] = source.read_text(encoding="utf-8")
            row["corpus"] = corpus
            rows.append(row)
    return rows


# --------------------------------------------------------------------------
# what a reader returned, and the comparison with the meaning (Reading, norm, ... are the core's:
# conflict_eval.answers.readers, the vocabulary of a declared chain)


def expected(meaning: dict) -> Any:
    """The comparable value a reply's meaning asks for (None for refusal/unreadable)."""
    if meaning.get("no_conflicts"):
        return NO_CONFLICTS
    if "triplets" in meaning:
        return triplet_set(meaning["triplets"])
    for key in ("label", "labels", "claims", "choice", "questions", "yes_no", "span", "strict_em", "plan"):
        if key in meaning:
            return norm(meaning[key])
    if "answer" in meaning:
        return norm(meaning["answer"])
    if "answers" in meaning:
        return sorted(norm(meaning["answers"]))
    if "action" in meaning:
        return norm(meaning["action"])
    if "conflict" in meaning:
        return (meaning["conflict"], meaning.get("p"))
    if "n_steps" in meaning:
        return meaning["n_steps"]
    return None


def judge(meaning: dict, reading: Reading, knows_refusal: bool) -> str:
    if meaning.get("unreadable"):
        return "meant" if reading.status == "failure" else "misread"
    if meaning.get("refusal"):
        if reading.status == "refusal":
            return "meant"
        if reading.status == "failure":
            return "refused" if knows_refusal else "meant"
        return "misread"
    if reading.status == "failure":
        return "refused"
    if reading.status == "refusal":
        return "misread"
    return "meant" if reading.value == expected(meaning) else "misread"


# --------------------------------------------------------------------------
# the chains, by prompt kind: declared by their units (hook conflict_eval_reply_readers)


def reader_chains() -> list[Chain]:
    """Each prompt kind's reader chains: the core's and every plugin's
    declaration (``components.manager.reply_readers()``; a third-party plugin's
    too). Kinds without one are free text (a report, a passage, a poisoned
    document): counted in the corpus, read by nothing."""
    from conflict_eval.components.manager import reply_readers

    return list(reply_readers().chains)


def declared_shapes() -> list[Path]:
    """The shapes files the units declare beside ``shapes.jsonl``."""
    from conflict_eval.components.manager import reply_readers

    return list(reply_readers().shapes)


def rows_for(reader: Chain, rows: list[dict]) -> list[dict]:
    return [r for r in rows if r["kind"] in reader.kinds and reader.applies(r)]


def outcome(reader: Chain, row: dict) -> tuple[str, Reading | None, str | None]:
    """(outcome, reading, error) of one reader on one row."""
    try:
        reading = reader.read(row)
    except Exception as exc:  # noqa: BLE001 - a crash is an outcome of its own
        return "crashed", None, f"{type(exc).__name__}: {exc}"
    return judge(reader.meaning(row), reading, reader.knows_refusal), reading, None


def measure(rows: list[dict]) -> dict:
    """Per reader: counts of each outcome, per corpus, and every row not read as meant."""
    table: dict[str, dict] = {}
    readers = reader_chains()
    for reader in readers:
        mine = rows_for(reader, rows)
        counts = {c: {o: 0 for o in OUTCOMES} for c in CORPORA}
        misses = []
        for row in mine:
            result, reading, error = outcome(reader, row)
            counts[row["corpus"]][result] += 1
            if result != "meant":
                misses.append({"id": row["id"], "outcome": result, "meaning": reader.meaning(row),
                               "read": None if reading is None else
                               {"status": reading.status, "value": reading.value, "reason": reading.reason},
                               **({"error": error} if error else {})})
        table[reader.name] = {"kinds": list(reader.kinds), "counts": counts, "not_meant": misses}
    read_kinds = {k for r in readers for k in r.kinds}
    unread = sorted({r["kind"] for r in rows} - read_kinds)
    return {"rows": len(rows), "rows_by_corpus": {c: sum(r["corpus"] == c for r in rows) for c in CORPORA},
            "free_text_kinds": unread,
            "free_text_rows": sum(r["kind"] in unread for r in rows), "readers": table}


# --------------------------------------------------------------------------
# metamorphic rewrites (issue 42, Deliver 5): benchmarks/reply_rewrites.py

def _rewrites():
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import reply_rewrites

    return reply_rewrites


def _choice_rows(reader: Chain, rows: list[dict]) -> list[dict]:
    """The rows a choice chain is tested on: its own rows, and for a chain with
    a ``prompt_tail`` (End-to-End / Few-Shot / CoT / GKP) every ``choice`` row
    too, sent through that method's prompt (its prefill tail)."""
    own = rows_for(reader, rows)
    extra = []
    for kind in reader.kinds:
        if reader.prompt_tail is not None:
            extra += [dict(r, kind=kind, args=dict(r["args"], prompt_tail=reader.prompt_tail))
                      for r in rows if r["kind"] == "choice"]
    return [r for r in own + extra if "choice" in r["meaning"] and len(r["args"].get("options") or ()) >= 2]


def rewritten(reader: Chain, rows: list[dict]) -> list[tuple[str, str, dict]]:
    """``(family, rewrite, row)`` for every rewrite that applies to a row of
    ``reader``: family ``preserving`` or ``changing``."""
    rw = _rewrites()
    out = []
    for row in rows_for(reader, rows):
        for name, f in rw.TEXT_PRESERVING.items():
            if row["kind"] != "option_match" or name in rw.WHITE_SPACE:  # an answer slot, not a whole reply
                out.append(("preserving", name, dict(row, reply=f(row["reply"]))))
        # a reply meaning "nothing" (no option, strict EM 0) still means it once replaced by a refusal
        if not {"refusal", "unreadable"} & set(reader.meaning(row)) and expected(reader.meaning(row)) not in (None, 0):
            for name, f in rw.GENERIC_CHANGING.items():
                out.append(("changing", name, dict(row, reply=f(row["reply"]))))
        for family, table in rw.BY_KIND.get(row["kind"], {}).items():
            out += [(family, name, dict(row, reply=f(row["reply"]))) for name, f in table.items()]
    if not reader.choice_rewrites:
        return out
    for row in _choice_rows(reader, rows):
        letters = letters_of(row)
        x = row["meaning"]["choice"]
        y = rw.other(x, letters)
        t, u = row["args"]["options"][letters.index(x)], row["args"]["options"][letters.index(y)]
        for family, table in (("preserving", rw.CHOICE_PRESERVING), ("changing", rw.CHOICE_CHANGING)):
            for name, f in table.items():
                answer = f(x, t, y, u)
                out.append((family, name, dict(row, reply=reader.compose(row["reply"], answer) if reader.compose
                                               else answer)))
    return out


def measure_rewrites(rows: list[dict]) -> dict:
    """Per chain and per rewrite: preserving rewrites read as meant / misread /
    refused / crashed; changing rewrites read as the original answer (``kept``,
    never allowed) or not (``changed``), with every miss listed."""
    chains: dict[str, dict] = {}
    by_rewrite: dict[str, dict] = {}
    misses = []
    for reader in reader_chains():
        counts = {"preserving": {o: 0 for o in OUTCOMES}, "changing": {"changed": 0, "kept": 0, "crashed": 0}}
        for family, name, row in rewritten(reader, rows):
            result, reading, error = outcome(reader, row)
            if family == "changing" and result != "crashed":
                result = "kept" if reading.status == "value" and reading.value == expected(reader.meaning(row)) \
                    else "changed"
            counts[family][result] += 1
            slot = by_rewrite.setdefault(name, {"family": family, **{k: 0 for k in counts[family]}})
            slot[result] += 1
            if result not in ("meant", "changed"):
                misses.append({"chain": reader.name, "rewrite": name, "id": row["id"], "outcome": result,
                               "read": error or (reading and (reading.reason or reading.value)),
                               "reply": row["reply"][:160]})
        if sum(counts["preserving"].values()) or sum(counts["changing"].values()):
            chains[reader.name] = counts
    return {"chains": chains, "rewrites": by_rewrite, "misses": misses}


def rewrites_markdown(result: dict) -> list[str]:
    def rate(n: dict, key: str) -> str:
        total = sum(n.values())
        return f"{n[key]}/{total} ({n[key] / total:.1%})" if total else "–"

    lines = ["## Meaning-preserving and meaning-changing rewrites (issue 42, Deliver 5)", "",
             "Every labelled row, rewritten by each rewrite of `benchmarks/reply_rewrites.py` that applies to it, "
             "read through each chain. Preserving: *meant* / *misread* (an answer the reply does not give) / "
             "*refused* (a counted failure). Changing: *kept* = still read as the original answer (never allowed).",
             "", "| chain | preserving: meant | misread | refused | changing: kept | changed |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, c in result["chains"].items():
        p, ch = c["preserving"], c["changing"]
        lines.append(f"| `{name}` | {rate(p, 'meant')} | {p['misread']} | {p['refused']} | {ch['kept']} | "
                     f"{ch['changed']} |")
    lines += ["", "| rewrite | family | meant or changed | misread or kept | refused |", "| --- | --- | --- | --- | --- |"]
    for name, r in result["rewrites"].items():
        good = r.get("meant", r.get("changed", 0))
        bad = r.get("misread", r.get("kept", 0))
        lines.append(f"| {name} | {r['family']} | {good} | {bad} | {r.get('refused', 0)} |")
    if result["misses"]:
        lines += ["", "Not read as meant (first 40):", ""]
        lines += [f"- `{m['chain']}` / {m['rewrite']} / `{m['id']}`: {m['outcome']}, read "
                  f"{json.dumps(m['read'], ensure_ascii=False)[:80]}" for m in result["misses"][:40]]
    return lines + [""]


# --------------------------------------------------------------------------
# answer extraction (Deliver 5): does the grader's extraction agree with the labelled meaning?

def choice_kinds() -> set[str]:
    """The kinds whose replies are a choice in any voice: those of the chains with
    choice rewrites and no prompt tail (the tailed chains read ``choice`` rows too)."""
    return {k for c in reader_chains() if c.choice_rewrites and c.prompt_tail is None for k in c.kinds}


def measure_extraction(rows: list[dict], model_name: str, max_rows: int | None = None) -> dict:
    """Send every choice-kind reply through the extraction prompt to ``model_name``
    (one call each, temperature 0) and compare the extracted letter with the
    labelled meaning (a refusal / unreadable reply should give NONE). Also
    counts the rows no reader read as meant today (the ones extraction is for)."""
    import asyncio

    from inspect_ai.model import GenerateConfig, get_model

    from conflict_eval.answers.extraction import extraction_prompt, read_extraction

    kinds = choice_kinds()
    todo = [r for r in rows if r["kind"] in kinds][:max_rows]
    unread = {r["id"] for reader in reader_chains() for r in rows_for(reader, todo) if outcome(reader, r)[0] != "meant"}
    model = get_model(model_name)

    async def one(row: dict) -> dict:
        letters = letters_of(row)
        out = await model.generate(extraction_prompt(row["reply"], row["args"]["options"], letters),
                                   config=GenerateConfig(temperature=0.0, max_tokens=16))
        parsed = read_extraction(out.completion, letters)
        want = row["meaning"].get("choice")
        got = parsed.letter if parsed.ok else None
        return {"id": row["id"], "meant": want, "extracted": got, "grader_reply": out.completion,
                "agrees": got == want, "unread_today": row["id"] in unread}

    async def run_all() -> list[dict]:
        return [await one(r) for r in todo]

    results = asyncio.run(run_all())

    def share(items: list[dict]) -> dict:
        return {"n": len(items), "agree": sum(i["agrees"] for i in items),
                "rate": (sum(i["agrees"] for i in items) / len(items)) if items else None}

    return {"model": model_name, "all": share(results), "unread_today": share([i for i in results if i["unread_today"]]),
            "rows": results}


# --------------------------------------------------------------------------
# report


def _commit() -> str:
    try:
        out = subprocess.run(["git", "-C", str(REPO), "log", "-1", "--format=%h %s"], capture_output=True,
                             text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return out[:90] + (" (+ uncommitted changes)" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def markdown_table(run: dict) -> list[str]:
    corpora = [c for c in CORPORA if c in next(iter(run["readers"].values()))["counts"]]
    lines = ["| reader | prompt kinds | " + " | ".join(f"{c}: meant / misread / refused" for c in corpora) + " | crashed |",
             "| --- | --- | " + "--- | " * len(corpora) + "--- |"]
    for name, r in run["readers"].items():
        cells = []
        for c in corpora:
            n = r["counts"][c]
            total = sum(n.values())
            cells.append("–" if not total else f"{n['meant']}/{total} / {n['misread']} / {n['refused']}")
        crashed = sum(r["counts"][c]["crashed"] for c in corpora)
        lines.append(f"| `{name}` | {', '.join(r['kinds'])} | {' | '.join(cells)} | {crashed} |")
    return lines


def markdown(run: dict, before: dict | None) -> str:
    out = ["# Reply reading: read as meant, misread, refused (issue 32, Deliver 3)", "",
           "`python benchmarks/reply_reading.py` reads every labelled reply of `tests/data/reply_corpus/` "
           "(real replies from `../shared/replies/`, read in place, and hand-written shapes) with each reader the "
           "toolkit applies to its prompt kind. *meant*: the reader's value is the labelled meaning (or its failure "
           "value on an unreadable reply); *misread*: another value, scored as something the writer did not say; "
           "*refused*: the reader's failure value on a readable reply (a counted parse failure; for readers with "
           "a refusal outcome, also a sincere refusal read as a parse failure).", "",
           f"Corpus: {run['rows']} replies ({run['rows_by_corpus']['real']} real, {run['rows_by_corpus']['shapes']} "
           f"shapes, {run['rows_by_corpus'].get('second', 0)} of the second real set `../shared/replies-2026-11-26/`); "
           f"{run['free_text_rows']} are free text read by no reader ({', '.join(run['free_text_kinds'])}).",
           ""]
    for title, r in ((f"## Before (commit {before['commit']})", before), (f"## This run (commit {run['commit']})", run)):
        if r is None or (r is run and before is not None and before.get("commit") == run.get("commit")):
            continue
        out += [title, "", *markdown_table(r), ""]
        misses = [(name, m) for name, x in r["readers"].items() for m in x["not_meant"]]
        if misses:
            out += ["Not read as meant:", ""]
            for name, m in misses:
                got = m.get("error") or (m["read"] and (m["read"]["reason"] or m["read"]["value"]))
                out.append(f"- `{name}` {m['outcome']}: `{m['id']}` meant {json.dumps(m['meaning'], ensure_ascii=False)[:120]}"
                           f", read {json.dumps(got, ensure_ascii=False)[:160]}")
            out.append("")
    return "\n".join(out)


def extraction_markdown(ext: dict) -> list[str]:
    def fmt(x: dict) -> str:
        return f"{x['agree']}/{x['n']}" + (f" ({x['rate']:.0%})" if x["rate"] is not None else "")

    lines = [f"## Answer extraction (`-T answer_extraction=grader`), grader `{ext['model']}`", "",
             "Every choice-kind reply of the corpus sent with the extraction prompt "
             "(`conflict_eval/answers/extraction.py`) to the grader; *agrees*: the extracted letter is the "
             "labelled choice, or no letter (NONE) for a refusal.", "",
             "| replies | agrees |", "| --- | --- |",
             f"| all choice-kind replies | {fmt(ext['all'])} |",
             f"| those no reader reads as meant today | {fmt(ext['unread_today'])} |", ""]
    from collections import Counter

    got = Counter(str(r["extracted"] or "NONE") for r in ext["rows"])
    meant = Counter(str(r["meant"] or "NONE") for r in ext["rows"])
    top, n_top = got.most_common(1)[0] if got else ("-", 0)
    lines += [f"Extracted: {', '.join(f'{k} {v}' for k, v in sorted(got.items()))}; labelled: "
              f"{', '.join(f'{k} {v}' for k, v in sorted(meant.items()))}. A grader answering {top} every time "
              f"would agree on {meant.get(top, 0)}/{len(ext['rows'])}.", ""]
    wrong = [r for r in ext["rows"] if not r["agrees"]]
    if wrong:
        lines += ["Disagreements (meant -> extracted, grader reply):", ""]
        lines += [f"- `{r['id']}`: {r['meant']} -> {r['extracted']} ({r['grader_reply'][:60]!r})" for r in wrong]
        lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--which", choices=("real", "shapes", "second", "all"), default="all")
    ap.add_argument("--as", dest="as_", choices=("before", "after"), default="after",
                    help="'before' also keeps this run as the before table")
    ap.add_argument("--extractor", metavar="MODEL",
                    help="also measure answer extraction with this grader model (e.g. conflict_eval/smollm2)")
    args = ap.parse_args(argv)
    if args.which != "shapes" and not REPLIES.is_dir():
        print(f"{REPLIES} is absent: run with --which shapes", file=sys.stderr)
        return 2
    run = measure(load_corpus(args.which))
    run["commit"] = _commit()
    RESULTS.mkdir(parents=True, exist_ok=True)
    before_path = RESULTS / "reply_reading_before.json"
    if args.as_ == "before":
        before_path.write_text(json.dumps(run, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    before = json.loads(before_path.read_text(encoding="utf-8")) if before_path.is_file() else None
    (RESULTS / "reply_reading.json").write_text(json.dumps(run, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    text = markdown(run, before)
    ext_path = RESULTS / "reply_reading_extraction.json"
    if args.extractor:
        rows = load_corpus(args.which)
        ext = measure_extraction(rows, args.extractor)
        ext["commit"] = run["commit"]
        ext_path.write_text(json.dumps(ext, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    if ext_path.is_file():
        ext = json.loads(ext_path.read_text(encoding="utf-8"))
        text += "\n" + "\n".join(extraction_markdown(ext)) + f"\n(run on commit {ext.get('commit')})\n"
    rewrites = measure_rewrites(load_corpus(args.which))
    rewrites["commit"] = run["commit"]
    (RESULTS / "reply_rewrites.json").write_text(json.dumps(rewrites, indent=1, ensure_ascii=False) + "\n",
                                                  encoding="utf-8")
    text += "\n" + "\n".join(rewrites_markdown(rewrites))
    (RESULTS / "reply_reading.md").write_text(text + "\n", encoding="utf-8")
    print("\n".join(markdown_table(run)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
