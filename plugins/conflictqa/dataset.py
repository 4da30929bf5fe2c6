"""ConflictQA loader (Xie et al., ICLR 2024; OSU-NLP-Group/LLM-Knowledge-Conflict).

Upstream: one file per model whose memory was elicited,
``conflictQA/conflictQA-<source>-<model>.json`` (JSON Lines despite the
name), at a pinned commit. Each row::

    {"question", "popularity", "ground_truth": [...],
     "memory_answer", "parametric_memory",          # the model's own answer and evidence
     "counter_answer", "counter_memory",            # the opposite answer, coherent evidence for it
     "parametric_memory_aligned_evidence", "counter_memory_aligned_evidence"}

Each row becomes a three-option multiple-choice item, the paper's question
format (§3.3): the memory answer, the counter answer and ``Uncertain.``
(option order by ``option_order``). ``gold_option`` is the memory answer's
letter and ``conflict_option`` the counter answer's, so ``choice_accuracy``
on this dataset reads "memory-answer rate" and its ``misled`` the
counter-answer rate; the dataset's own metric is ``memorization_ratio``.
The evidence shown depends on the setting (``-T setting=``):

* ``counter_memory`` -- the counter-memory only (§4.1, single source);
* ``both_memory_first`` / ``both_counter_first`` -- parametric memory and
  counter-memory together, in that order (§4.2, multi-source; the paper
  studies the order's effect);
* ``memory_only`` -- the parametric memory only (the model's own evidence; a
  control where the memory answer is expected);
* ``all`` (default) -- one item per setting for every row (ids
  ``<row id>-<setting>``), so one run gives every setting's rates.

Rows whose memory answer and counter answer are the same text cannot be
classified (both options would be identical): they are skipped, and their
ids are listed in the dataset's provenance (``dataset_provenance`` in the
eval log). The shared GPT-4 StrategyQA sample has 3 such rows.
"""

from __future__ import annotations

import logging
from pathlib import Path

from conflict_eval.components.compose import declares_metric
from conflict_eval.records.download import github_file
from conflict_eval.records import (
    LETTERS,
    ArgumentError,
    BadField,
    ConflictQA,
    Passage,
    Row,
    TaskArgument,
    build_dataset,
    check_file,
    content_id,
    convert_rows,
    numbered,
    read_json_or_jsonl,
)

log = logging.getLogger(__name__)

NAME = "conflictqa"
REPO = "OSU-NLP-Group/LLM-Knowledge-Conflict"
COMMIT = "595e02b6fedfdb03316b763e5036da93ffb12fbf"
MODELS = ("chatgpt", "gpt4", "llama2-7b", "llama2-70b", "palm2", "qwen7b", "vicuna7b", "vicuna33b")
"""Models with a StrategyQA file in the upstream ``conflictQA/`` folder."""
SHA256 = {
    "conflictQA/conflictQA-strategyQA-gpt4.json": "676f51d75214e41e1681e680f0fbdf711f3bd742e0c411d4ff2d5e0fd183a969",
}
"""Checksums recorded so far (the other files are pinned by the commit only)."""
SETTINGS = ("counter_memory", "both_memory_first", "both_counter_first", "memory_only")
OPTION_ORDERS = ("memory_first", "counter_first")
UNCERTAIN = "Uncertain."
"""The third option, as the authors' prompts write it (code/prompt_preparation.py)."""


def upstream_file(model: str) -> str:
    if model not in MODELS:
        raise ArgumentError(f"{NAME}: unknown memory_model {model!r}; expected one of {', '.join(MODELS)} "
                            "(or pass any upstream per-model file as ", TaskArgument("path"), ")")
    return f"conflictQA/conflictQA-strategyQA-{model}.json"


def _evidence(setting: str, memory: str, counter: str) -> list[Passage]:
    m = Passage(text=memory, label="supporting", source="parametric_memory")
    c = Passage(text=counter, label="conflicting", source="counter_memory")
    return {"counter_memory": [c], "memory_only": [m],
            "both_memory_first": [m, c], "both_counter_first": [c, m]}[setting]


def converter(settings: tuple[str, ...], option_order: str, skipped: list[str]):
    """A row -> one :class:`ConflictQA` per setting (``skipped`` collects the
    ids of rows whose two answers are the same text)."""
    number = numbered()

    def convert(row: Row) -> list[ConflictQA] | None:
        question = row.text("question")
        memory_answer, counter_answer = row.text("memory_answer"), row.text("counter_answer")
        memory, counter = row.text("parametric_memory"), row.text("counter_memory")
        truth = row.strings("ground_truth") if "ground_truth" in row else []
        popularity = row["popularity"] if "popularity" in row else None
        if popularity is not None and (isinstance(popularity, bool) or not isinstance(popularity, int | float)):
            raise BadField("popularity", f"expected a number, got {popularity!r:.60}")
        base = number(content_id(NAME, question))
        if memory_answer.strip() == counter_answer.strip():
            skipped.append(base)
            return None
        if option_order == "memory_first":
            options, mem_letter, ctr_letter = [memory_answer, counter_answer, UNCERTAIN], "A", "B"
        else:
            options, mem_letter, ctr_letter = [counter_answer, memory_answer, UNCERTAIN], "B", "A"
        return [
            ConflictQA(
                id=f"{base}-{setting}",
                dataset=NAME,
                question=question,
                options=options,
                answers=[memory_answer],
                gold_option=mem_letter,
                conflict_answer=None if setting == "memory_only" else counter_answer,
                conflict_option=None if setting == "memory_only" else ctr_letter,
                evidence=_evidence(setting, memory, counter),
                conflict_type="none" if setting == "memory_only" else "counterfactual",
                setting=setting,
                source_ids=[base],
                extra={"memory_option": mem_letter, "counter_option": ctr_letter,
                       "uncertain_option": LETTERS[2], "option_order": option_order,
                       "ground_truth": truth, "popularity": popularity},
            )
            for setting in settings
        ]

    return convert


def load_conflictqa(path: str | Path, setting: str = "all", option_order: str = "memory_first",
                    skipped: list[str] | None = None) -> list[ConflictQA]:
    """Validated records of an upstream ConflictQA file (JSON Lines or a JSON array)."""
    if setting != "all" and setting not in SETTINGS:
        raise ValueError(f"{NAME}: unknown setting {setting!r}; expected all or one of {', '.join(SETTINGS)}")
    if option_order not in OPTION_ORDERS:
        raise ValueError(f"{NAME}: unknown option_order {option_order!r}; expected one of {', '.join(OPTION_ORDERS)}")
    settings = SETTINGS if setting == "all" else (setting,)
    skipped = [] if skipped is None else skipped
    return convert_rows(NAME, read_json_or_jsonl(path), converter(settings, option_order, skipped),
                        file=path, id_field=None)


@declares_metric("memorization_ratio")
def conflictqa(path: str | None = None, memory_model: str = "gpt4", setting: str = "all",
               option_order: str = "memory_first", limit: int | None = None, shuffle: bool = False,
               seed: int = 0):
    """ConflictQA (StrategyQA part): a model's memory answer against a counter-memory.

    Args:
        path: any upstream per-model file (``conflictQA-<source>-<model>.json``)
            or a subset of its lines; default: download the pinned file of ``model``.
        memory_model: whose memory (download only): chatgpt, gpt4, llama2-7b,
            llama2-70b, palm2, qwen7b, vicuna7b, vicuna33b. Evaluate a model on
            its *own* file: the memory answer is that model's answer.
        setting: ``counter_memory``, ``both_memory_first``,
            ``both_counter_first``, ``memory_only`` or ``all``.
        option_order: ``memory_first`` (A = memory answer, B = counter answer)
            or ``counter_first``; C is always ``Uncertain.``.
        limit: keep the first ``limit`` items (after shuffling).
        shuffle: shuffle with ``seed``.
    """
    if path is not None:
        source = check_file(path, NAME)
    else:
        name = upstream_file(memory_model)
        source = github_file(REPO, COMMIT, name, sha256=SHA256.get(name))
    skipped: list[str] = []
    records = load_conflictqa(source, setting, option_order, skipped)
    if skipped:
        log.warning("%s: skipped %d row(s) whose memory and counter answers are the same text: %s",
                    NAME, len(skipped), ", ".join(skipped))
    ds = build_dataset(NAME, records, location=str(source), limit=limit, shuffle=shuffle, seed=seed)
    ds.provenance = {"source": "local file" if path is not None else f"github:{REPO}@{COMMIT}",
                     "path": str(source), "skipped_identical_answers": skipped}
    return ds
