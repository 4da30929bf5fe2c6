"""The ConflictScore pipeline: decompose -> label claims x documents -> CS-C, CS-R.

:func:`conflict_score` is what the scorer, the ConflictBench detector and the
regeneration wrapper all call. Grader calls for all (claim, document) pairs
are issued at once and Inspect's per-provider connection limit
(``--max-connections``) bounds how many run concurrently.

Cheaper variants (paper, Limitations):

* ``claims="whole"``    -- no decomposition, the whole response is one claim;
* ``claims="salient"``  -- the grader lists only the ``k`` most salient claims;
* ``labelling="all_docs"`` -- one call per claim with every document in it;
* ``claims="sentences"`` -- rule-based sentence split (no LLM), which with
  ``backend="nli"`` runs the pipeline without any LLM grader.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Literal, get_type_hints

from . import metrics
from .panel import Asked, Judge, Judging, ask, ask_panel, collect_calls, generate, panel_metadata, strict_majority, unit_record
from .parse import MAX_CLAIMS, LabelParse, _parse_claims, parse_label, parse_label_list, split_sentences
from .prompts import (
    ALL_DOCS_TEMPLATE,
    DECOMPOSE_TEMPLATE,
    LABEL_TEMPLATE,
    SALIENT_TEMPLATE,
    SWAPPED_LABEL_TEMPLATE,
    fill,
    quote_document,
)

ClaimMode = Literal["atomic", "whole", "salient", "sentences"]
Labelling = Literal["pairwise", "all_docs"]
Backend = Literal["llm", "nli"]


@dataclass(frozen=True)
class Options:
    """The options of the ``conflictscore`` metric, defined here once. Every
    function that takes them as parameters (the metric,
    :func:`~.regenerate.conflict_regenerate`, the tasks and the ConflictBench
    detector) is decorated with :func:`takes_options`, which checks when its
    module is imported that its parameters have these names, types and the
    defaults of :data:`DEFAULTS` (or :data:`ONE_CLAIM`), and builds its
    options with :meth:`of`."""

    claims: ClaimMode = "atomic"
    k: int = 3
    labelling: Labelling = "pairwise"
    backend: Backend = "llm"
    nli_model: str | None = None
    grader_max_tokens: int | None = 512
    grader_dedupe: bool = True
    """Send a byte-identical grader prompt (same grader, same budget) once per
    run and reuse its reply (see :func:`_generate_output`)."""
    judge_repeats: int = 1
    judge_swap: bool = False
    judge_temperature: float = 1.0
    """Judge stability (:mod:`.panel`): ask each judge N times at this
    temperature; also ask with the claim and document swapped."""

    def __post_init__(self):
        if self.claims not in ("atomic", "whole", "salient", "sentences"):
            raise ValueError(f"conflictscore claims={self.claims!r}: expected atomic, whole, salient or sentences")
        if self.labelling not in ("pairwise", "all_docs"):
            raise ValueError(f"conflictscore labelling={self.labelling!r}: expected pairwise or all_docs")
        if self.backend not in ("llm", "nli"):
            raise ValueError(f"conflictscore backend={self.backend!r}: expected llm or nli")
        if self.backend == "nli" and not self.nli_model:
            raise ValueError("conflictscore backend='nli' needs nli_model=<local HF model directory>")
        if self.backend == "nli" and self.labelling == "all_docs":
            raise ValueError("conflictscore labelling='all_docs' needs backend='llm'")
        if not isinstance(self.k, int) or self.k < 1:
            raise ValueError(f"conflictscore k={self.k!r}: expected a positive integer")
        self.judging  # validates the judge_* options
        if self.backend == "nli" and not self.judging.default:
            raise ValueError("conflictscore judge_repeats/judge_swap need backend='llm' (the NLI model is deterministic)")

    @property
    def judging(self) -> Judging:
        return Judging(self.judge_repeats, self.judge_swap, self.judge_temperature)

    @property
    def needs_llm(self) -> bool:
        return self.backend == "llm" or self.claims in ("atomic", "salient")

    @classmethod
    def of(cls, arguments: Mapping, base: Options | None = None, *, without: Collection[str] = ()) -> Options:
        """The options among a function's ``arguments`` (its ``locals()`` on entry)
        over ``base`` (:data:`DEFAULTS`), but those ``without`` (a parameter of
        the same name that means something else).

        >>> Options.of({"claims": "whole", "k": 10, "path": "x"}, without={"k"}) == replace(DEFAULTS, claims="whole")
        True
        """
        return replace(base or DEFAULTS, **{f.name: arguments[f.name] for f in fields(cls)
                                            if f.name in arguments and f.name not in without})


DEFAULTS = Options()
"""The metric's defaults (``registry.yaml`` lists them; a test checks that they agree)."""

ONE_CLAIM = replace(DEFAULTS, claims="whole")
"""The defaults where what is scored is one claim (a chosen option's text,
ConflictBench's claim): the metric's, but ``claims="whole"``."""

OPTION_SITES: list[str] = []
"""Every function :func:`takes_options` checked (``module.name``), for the test that none is missed."""


def option_signature_problems(fn, defaults: Options = DEFAULTS, without: Collection[str] = ()) -> list[str]:
    """How ``fn``'s parameters differ from :class:`Options` (name, type, default
    ``defaults``), leaving out the fields ``without``; ``[]`` when they agree."""
    params = inspect.signature(fn).parameters
    types = get_type_hints(Options)
    problems = []
    for f in fields(Options):
        if f.name in without:
            continue
        p = params.get(f.name)
        if p is None:
            problems.append(f"no parameter {f.name}")
            continue
        want = getattr(defaults, f.name)
        if p.default is inspect.Parameter.empty or p.default != want or type(p.default) is not type(want):
            problems.append(f"{f.name} defaults to {p.default!r}, Options to {want!r}")
        given = eval(p.annotation, fn.__globals__) if isinstance(p.annotation, str) else p.annotation
        if given != types[f.name]:
            problems.append(f"{f.name} is typed {p.annotation}, Options {f.type}")
    return problems


def takes_options(defaults: Options = DEFAULTS, *, without: Collection[str] = ()):
    """Decorator (innermost, under ``@scorer`` / ``@solver`` / ``@task``): check
    when the module is imported that the function's parameters spell every
    :class:`Options` field (but those ``without``) with its type and the
    default of ``defaults``; a drift raises ``TypeError`` naming each difference.
    The function is returned unchanged."""

    def check(fn):
        problems = option_signature_problems(fn, defaults, without)
        if problems:
            raise TypeError(f"{fn.__module__}.{fn.__qualname__}: its ConflictScore options differ from "
                            f"pipeline.Options: {'; '.join(problems)}")
        OPTION_SITES.append(f"{fn.__module__}.{fn.__qualname__}")
        return fn

    return check


@dataclass
class Cell:
    claim: int
    document: int
    label: str | None
    snippet: str = ""
    reasoning: str = ""
    reply: str = ""
    error: str | None = None
    reused: bool = False
    """The reply of an identical earlier grader prompt (no call made)."""
    votes: list | None = None
    """With a judge panel or repeats (:mod:`.panel`): each judge's labels over its repeats."""
    swapped: list | None = None
    """With ``judge_swap``: each judge's label with the parts swapped (not used in the score)."""
    unswapped: list | None = None
    """With ``judge_swap`` and repeats: each judge's same-order label at temperature 0 (``panel.ask``)."""


@dataclass
class ConflictResult:
    claims: list[str]
    matrix: list[list[str | None]]
    cells: list[Cell] = field(default_factory=list)
    decomposition_reply: str | None = None
    decomposition_error: str | None = None
    grader: str | None = None
    grader_source: str | None = None
    calls: int = 0
    claims_dropped: int = 0
    decomposition_truncated: bool = False
    claims_lost: int = 0
    n_documents: int = 0
    judges: dict | None = None
    """The panel's names, settings and every cell's votes (:func:`.panel.panel_metadata`)."""

    @property
    def cs_c(self) -> float | None:
        return metrics.cs_c(self.matrix)

    @property
    def cs_r(self) -> float | None:
        return metrics.cs_r(self.matrix)

    @property
    def cs_c_best(self) -> float | None:
        return metrics.cs_c_best(self.matrix)

    @property
    def cs_r_best(self) -> float | None:
        return metrics.cs_r_best(self.matrix)

    @property
    def failures(self) -> list[Cell]:
        return [c for c in self.cells if c.label is None]

    @property
    def pairs(self) -> tuple[int, int]:
        """``(labelled pairs, all pairs)``; the pairs of claims lost to a
        truncated decomposition count as unlabelled."""
        labelled, pairs = metrics.pair_counts(self.matrix)
        return labelled, pairs + self.claims_lost * self.n_documents

    @property
    def coverage(self) -> float | None:
        labelled, pairs = self.pairs
        return labelled / pairs if pairs else None

    @property
    def claims_undetermined(self) -> int:
        """Claims with a failed cell (scored by the worst case their failures allow)."""
        return metrics.undetermined_claims(self.matrix)

    @property
    def undefined_reason(self) -> str | None:
        """Why the score is undefined (``None`` when it is defined); with no
        label parsed only the worst case (CS-C / CS-R) is known."""
        if metrics.is_defined(self.matrix):
            return None
        if self.decomposition_error:
            return "decomposition failed"
        if not self.claims:
            return "no claims (empty response)"
        return "no label parsed"

    def metadata(self) -> dict:
        return {
            "claims": self.claims,
            "label_matrix": self.matrix,
            "cells": [asdict(c) for c in self.cells],
            "label_failures": [asdict(c) for c in self.failures],
            "decomposition_reply": self.decomposition_reply,
            "decomposition_error": self.decomposition_error,
            "grader": self.grader,
            "grader_source": self.grader_source,
            "grader_calls": self.calls,
            "reused_label_replies": sum(1 for c in self.cells if c.reused),
            "labelled_pairs": self.pairs[0],
            "pairs": self.pairs[1],
            "label_coverage": self.coverage,
            "cs_c_best": self.cs_c_best,
            "cs_r_best": self.cs_r_best,
            "claims_undetermined": self.claims_undetermined,
            "claims_dropped": self.claims_dropped,
            "decomposition_truncated": self.decomposition_truncated,
            "claims_lost": self.claims_lost,
            "undefined_reason": self.undefined_reason,
            "judges": self.judges,
        }


def resolve_grader(role: str = "grader"):
    """``(model, source)``: the model bound to ``role`` (``--model-role
    grader=...``) or, without one, the model being evaluated."""
    from inspect_ai.model import get_model, model_roles

    if role in model_roles():
        return get_model(role=role), f"model role {role!r}"
    return get_model(), f"no {role!r} model role given: the evaluated model grades"


#: A decomposition cut at its token limit is retried once with this many times the budget.
DECOMPOSE_RETRY_FACTOR = 4
_TRUNCATED = ("max_tokens", "model_length")


#: What a failed grader call is called in its ModelOutputError.
GRADER = "the ConflictScore grader"


async def _generate_output(model, prompt: str, max_tokens: int | None, dedupe: bool = True):
    """``(ModelOutput, reused)``: one grader call at temperature 0, a
    byte-identical earlier prompt's reply reused with ``dedupe``
    (:func:`.panel.generate`: in a report run the RAG and Balanced samples
    label the same claims against the same documents). A call with no output
    (an empty ``choices`` list...) raises
    :class:`~conflict_eval.answers.failures.ModelOutputError`: the sample
    errors (retried under ``--retry-on-error``), no cell is labelled from it."""
    return await generate(model, prompt, max_tokens, dedupe=dedupe, what=GRADER)


async def _generate(model, prompt: str, opts: Options) -> tuple[str, bool]:
    out, reused = await _generate_output(model, prompt, opts.grader_max_tokens, opts.grader_dedupe)
    return out.completion, reused


@dataclass
class Decomposition:
    claims: list[str]
    reply: str | None = None
    error: str | None = None
    calls: int = 0
    dropped: int = 0
    truncated: bool = False
    """The reply hit its token limit even after the retry."""
    lost: int = 0
    """Claims known to be lost: the last claim, cut mid-sentence, of a truncated reply."""


async def decompose(response: str, model, opts: Options) -> Decomposition:
    """The claims of ``response``; at most ``MAX_CLAIMS`` are kept, ``dropped``
    counts the rest. A reply cut at its token limit (``stop_reason``
    ``max_tokens``/``model_length``) is retried once with
    :data:`DECOMPOSE_RETRY_FACTOR` times the budget; if it is still cut,
    ``truncated`` is set and its unfinished last claim is dropped and
    counted in ``lost`` (claims the grader never reached cannot be counted)."""
    if not response.strip():
        return Decomposition([])
    if opts.claims == "whole":
        return Decomposition([response.strip()])
    if opts.claims == "sentences":
        sentences = split_sentences(response)
        return Decomposition(sentences[:MAX_CLAIMS], dropped=max(0, len(sentences) - MAX_CLAIMS))
    if opts.claims == "salient":
        prompt = fill(SALIENT_TEMPLATE, report=response, k=str(opts.k))
    else:
        prompt = fill(DECOMPOSE_TEMPLATE, report=response)
    out, reused = await _generate_output(model, prompt, opts.grader_max_tokens, opts.grader_dedupe)
    calls = int(not reused)
    if out.stop_reason in _TRUNCATED and opts.grader_max_tokens:
        out, reused = await _generate_output(model, prompt, opts.grader_max_tokens * DECOMPOSE_RETRY_FACTOR,
                                             opts.grader_dedupe)
        calls += int(not reused)
    truncated = out.stop_reason in _TRUNCATED
    claims, error, dropped, lost = _parse_claims(out.completion, truncated=truncated)
    if opts.claims == "salient":
        claims = claims[: opts.k]
    return Decomposition(claims, out.completion, error, calls, dropped, truncated, lost)


def swapped_label_prompt(claim: str, document: str) -> str:
    """:func:`label_prompt` with the document block before the claim block (``judge_swap``)."""
    return fill(SWAPPED_LABEL_TEMPLATE, claim=claim, claim_json=json.dumps(claim, ensure_ascii=False)[1:-1],
                document=document)


def label_prompt(claim: str, document: str) -> str:
    """Table 8 with the claim and the document text inserted as the paper
    shows them (no delimiters around the document; placeholders inside it
    are never substituted, :func:`fill` is single-pass)."""
    return fill(LABEL_TEMPLATE, claim=claim, claim_json=json.dumps(claim, ensure_ascii=False)[1:-1],
                document=document)


#: Output tokens budgeted per document in a ``labelling=all_docs`` reply: one
#: JSON object with a snippet and a brief reasoning is ~80-150 tokens.
ALL_DOCS_TOKENS_PER_DOCUMENT = 160


def all_docs_max_tokens(grader_max_tokens: int | None, n_documents: int) -> int | None:
    """The output budget of one all-documents call: ``grader_max_tokens`` is
    per document's worth of answer, so it grows with the documents --
    ``max(grader_max_tokens, ALL_DOCS_TOKENS_PER_DOCUMENT * n)`` (512 tokens
    cannot hold 10 objects: documents 7-10 were cut off on every claim)."""
    if grader_max_tokens is None:
        return None
    return max(grader_max_tokens, ALL_DOCS_TOKENS_PER_DOCUMENT * n_documents)


def all_docs_prompt(claim: str, documents: list[str]) -> str:
    docs = "\n\n".join(quote_document(d, i + 1) for i, d in enumerate(documents))
    return fill(ALL_DOCS_TEMPLATE, claim=claim, documents=docs, n=str(len(documents)))


async def label(claims: list[str], documents: list[str], model, opts: Options,
                judges: list | None = None) -> tuple[list[Cell], int]:
    """Every (claim, document) cell, and the number of grader calls made.
    With a panel of several ``judges`` or judge repeats/swap, :func:`label_with_panel` labels."""
    if not claims or not documents:
        return [], 0
    if opts.backend == "llm" and judges and (len(judges) > 1 or not opts.judging.default):
        return await label_with_panel(claims, documents, judges, opts)
    if opts.backend == "nli":
        import anyio

        from .nli import get_labeller

        labeller = get_labeller(opts.nli_model)
        pairs = [(c, d) for c in claims for d in documents]
        labels = await anyio.to_thread.run_sync(labeller.label, pairs)
        cells = [Cell(i, j, labels[i * len(documents) + j], reply=f"nli:{labels[i * len(documents) + j]}")
                 for i in range(len(claims)) for j in range(len(documents))]
        return cells, 0

    if opts.labelling == "all_docs":
        budget = all_docs_max_tokens(opts.grader_max_tokens, len(documents))

        async def one_claim(i: int) -> list[Cell]:
            out, reused = await _generate_output(model, all_docs_prompt(claims[i], documents), budget, opts.grader_dedupe)
            reply = out.completion
            return [_cell(i, j, p, reply, reused) for j, p in enumerate(parse_label_list(reply, len(documents)))]

        rows = await collect_calls(*(one_claim(i) for i in range(len(claims))))
        cells = [c for row in rows for c in row]
        return cells, sum(1 for row in rows if row and not row[0].reused)

    async def one_cell(i: int, j: int) -> Cell:
        reply, reused = await _generate(model, label_prompt(claims[i], documents[j]), opts)
        return _cell(i, j, parse_label(reply), reply, reused)

    cells = await collect_calls(*(one_cell(i, j) for i in range(len(claims)) for j in range(len(documents))))
    return list(cells), sum(1 for c in cells if not c.reused)


async def label_with_panel(claims: list[str], documents: list[str], judges: list[Judge],
                           opts: Options) -> tuple[list[Cell], int]:
    """``(cells, calls)`` of every claim x document cell, labelled by the
    panel: each cell's label is the strict majority of the judges' votes; its
    snippet, reasoning and reply are the first judge's first reply's."""
    judging = opts.judging

    def finish(i: int, j: int, asked: list[Asked], first_parse, reply: str, reused: bool,
               votes: list[list], swapped: list | None, unswapped: list | None = None):
        majority = strict_majority([strict_majority(v) for v in votes])
        cell = _cell(i, j, first_parse, reply, reused)
        cell.label = majority
        if majority is None and cell.error is None:
            cell.error = f"no strict majority of the {len(judges)} judges: {[strict_majority(v) for v in votes]}"
        cell.votes, cell.swapped, cell.unswapped = votes, swapped, unswapped
        return cell

    if opts.labelling == "all_docs":
        budget = all_docs_max_tokens(opts.grader_max_tokens, len(documents))
        n = len(documents)

        async def one_claim(i: int):
            prompt = all_docs_prompt(claims[i], documents)
            swapped = all_docs_prompt(claims[i], documents[::-1]) if judging.swap else None
            asked = await ask_panel(judges, lambda jd: ask(
                jd, prompt, lambda r: parse_label_list(r, n), lambda ps: [p.label for p in ps], judging, budget,
                opts.grader_dedupe, swapped, GRADER))
            out = []
            for j in range(n):
                votes = [[rep[j] for rep in a.labels] for a in asked]
                # the swapped prompt lists the documents in reverse: its item n-1-j is document j
                sw = [a.swapped[n - 1 - j] for a in asked] if judging.swap else None
                same = [None if a.unswapped is None else a.unswapped[j] for a in asked] if judging.swap else None
                out.append(finish(i, j, asked, asked[0].first[j], asked[0].first_reply, asked[0].reused, votes, sw,
                                  same))
            return out, sum(a.calls for a in asked)

        rows = await collect_calls(*(one_claim(i) for i in range(len(claims))))
        return [cell for row, _ in rows for cell in row], sum(c for _, c in rows)

    async def one_cell(i: int, j: int):
        prompt = label_prompt(claims[i], documents[j])
        swapped = swapped_label_prompt(claims[i], documents[j]) if judging.swap else None
        asked = await ask_panel(judges, lambda jd: ask(jd, prompt, parse_label, lambda p: p.label, judging,
                                                       opts.grader_max_tokens, opts.grader_dedupe, swapped, GRADER))
        votes = [a.labels for a in asked]
        sw = [a.swapped for a in asked] if judging.swap else None
        same = [a.unswapped for a in asked] if judging.swap else None
        return finish(i, j, asked, asked[0].first, asked[0].first_reply, asked[0].reused, votes, sw, same), \
            sum(a.calls for a in asked)

    done = await collect_calls(*(one_cell(i, j) for i in range(len(claims)) for j in range(len(documents))))
    return [cell for cell, _ in done], sum(c for _, c in done)


def _cell(i: int, j: int, p: LabelParse, reply: str, reused: bool = False) -> Cell:
    return Cell(i, j, p.label, p.snippet, p.reasoning, reply, p.error, reused)


async def conflict_score(response: str, documents: list[str], opts: Options | None = None,
                         model=None, grader_source: str | None = None, judges: list | None = None) -> ConflictResult:
    """Run the pipeline on one response. ``model`` defaults to :func:`resolve_grader`;
    ``judges`` (:func:`.panel.resolve_panel`) label the cells, the first one decomposes."""
    from inspect_ai.log import transcript

    opts = opts or Options()
    if judges:
        model, grader_source = judges[0].model, judges[0].source
    if model is None and opts.needs_llm:
        model, grader_source = resolve_grader()
    if model is not None:
        transcript().info(f"conflictscore grader: {model} ({grader_source})"
                          + (f"; panel: {', '.join(j.name for j in judges)}" if judges and len(judges) > 1 else ""))
    if not judges and model is not None:
        judges = [Judge("grader", model, grader_source or "")]
    dec = await decompose(response, model, opts)
    claims = dec.claims
    cells, label_calls = await label(claims, documents, model, opts, judges)
    matrix: list[list[str | None]] = [[None] * len(documents) for _ in claims]
    for c in cells:
        matrix[c.claim][c.document] = c.label
    grader = opts.nli_model if (opts.backend == "nli" and model is None) else (str(model) if model is not None else None)
    panel = None
    if opts.backend == "llm" and judges:
        panel = panel_metadata(judges, opts.judging, [
            unit_record(c.votes if c.votes is not None else [[c.label]], c.swapped, unswapped=c.unswapped,
                        claim=c.claim, document=c.document)
            for c in cells])
    return ConflictResult(claims, matrix, cells, dec.reply, dec.error, grader, grader_source, dec.calls + label_calls,
                          dec.dropped, dec.truncated, dec.lost, len(documents), panel)
