"""Method cost profiles for ``conflict-eval suite estimate``, and how well they predict.

Run on demand (not in CI); takes a few minutes with the scripted model::

    python benchmarks/estimate_profiles.py [--limit 40] [--write-profiles]

Every method runs through ``conflict_eval/run`` with the offline scripted
model (``scripted/bench``; usage counted in words) on the first ``--limit``
records of the real KRE ECQA sample (``../shared/data/kre_ecqa/sample.jsonl``,
conflict setting), or, for the methods of ``OTHER_DATA`` (user needs, AtomR),
of the dataset they are built for (MADAM-RAG: RAMDocs; ConflictQA's
multiple-choice prompt: ConflictQA StrategyQA). Methods that need a built knowledge base
(the RAG methods) are reported as not measured with the reason. The scripted reply is one plausible answer of ~40 words (reasoning,
then ``<a>A</a>``); multi-step methods whose parsers want other formats see
it as a malformed step and go on, so their calls are an upper bound of what a
cooperative model makes.

From the logs (:mod:`conflict_eval.report.accounting`: one ``ModelEvent`` = one
call, tokens from ``sample.model_usage``), each method's profile is fitted on
the even-numbered records: calls per sample (mean), input tokens per sample
as ``input_base + input_per_word * record_words`` (least squares;
record_words from :func:`conflict_eval.runs.estimate.record_words` on the
actual records) and output tokens per call. The odd-numbered records are the
check: the estimate for them is compared with what the run recorded, method
by method. ``--write-profiles`` writes the fit to
``conflict_eval/runs/profiles.yaml`` (the file the estimator ships with).

Writes ``benchmarks/results/estimate_profiles.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "kre_ecqa" / "sample.jsonl"
RESULTS = REPO / "benchmarks" / "results"
PROFILES = REPO / "conflict_eval" / "runs" / "profiles.yaml"
METHODS = ("end_to_end", "few_shot", "cot", "self_ask", "comparative", "gkp", "microact", "user_need_prompt",
           "atomr_cot", "atomr_standard", "atomr", "astuterag", "robustrag", "standard_rag", "madam_rag",
           "conflictqa_mc")
# methods that need another dataset than KRE ECQA: (dataset, folder under ../shared/data, options)
OTHER_DATA = {
    "user_need_prompt": ("user_needs_kre_ecqa", "kre_ecqa", {"user_need": "context_first"}),
    "atomr_cot": ("atomr_musique", "musique_atomr", {}),
    "atomr_standard": ("atomr_musique", "musique_atomr", {}),
    "atomr": ("atomr_musique", "musique_atomr", {}),
    "madam_rag": ("ramdocs", "ramdocs", {}),
    "conflictqa_mc": ("conflictqa", "conflictqa_strategyqa", {}),
}
REPLY = ("The context says one thing and my own knowledge another, so I weigh the two: the passage is "
         "specific and recent, the alternative is generic. Both point to the first option in the end. "
         "<a>A</a>")
TOKENS_PER_WORD = 1.3


def run_method(method: str, limit: int, log_dir: str):
    from inspect_ai import eval as inspect_eval
    from inspect_ai.log import read_eval_log

    from conflict_eval.report.accounting import log_costs
    from conflict_eval.components.compose import compose_task
    from conflict_eval.runs.estimate import record_words

    if method in OTHER_DATA:
        dataset, folder, options = OTHER_DATA[method]
        task = compose_task(method, dataset, None, path=str(DATA.parents[1] / folder / "sample.jsonl"), **options)
    else:
        task = compose_task(method, "kre_ecqa", None, path=str(DATA), setting="conflict")
    samples = list(task.dataset)[:limit]
    words = {str(s.id): record_words(s) for s in samples}
    [log] = inspect_eval(task, model="scripted/bench", model_args={"reply": REPLY}, limit=limit,
                         log_dir=log_dir, display="none", max_tokens=512)
    if log.status != "success":
        raise RuntimeError(f"{method}: run ended {log.status}: {log.error.message if log.error else ''}")
    log = read_eval_log(log.location)
    return [(c, words[c.sample_id]) for c in log_costs(log)]


def fit(rows) -> dict:
    import numpy as np

    calls = np.array([c.calls for c, _ in rows], dtype=float)
    inp = np.array([c.input_tokens for c, _ in rows], dtype=float)
    words = np.array([w for _, w in rows], dtype=float)
    out = sum(c.output_tokens for c, _ in rows)
    if np.ptp(words) > 0:
        slope, base = np.polyfit(words, inp, 1)
    else:
        slope, base = 0.0, float(inp.mean())
    return {"calls": round(float(calls.mean()), 3), "input_base": round(float(base), 2),
            "input_per_word": round(float(slope), 4),
            "output_per_call": round(float(out) / max(float(calls.sum()), 1.0), 2), "fitted_on": len(rows)}


def check(method: str, prof: dict, rows) -> dict:
    from conflict_eval.runs.estimate import estimate_samples

    class _S:  # estimate_samples needs records only for their word counts: rebuild them as such
        def __init__(self, words):
            self.input, self.choices, self.metadata = " ".join(["w"] * words), [], {}

    profiles = {"tokens_per_word": TOKENS_PER_WORD, "methods": {method: prof}, "default": prof}
    est = estimate_samples([_S(w) for _, w in rows], method, "scripted/bench", profiles=profiles)
    actual = {"calls": sum(c.calls for c, _ in rows), "input_tokens": sum(c.input_tokens for c, _ in rows),
              "output_tokens": sum(c.output_tokens for c, _ in rows)}
    estimate = {"calls": est.calls, "input_tokens": est.input_tokens, "output_tokens": est.output_tokens}
    error = {k: (estimate[k] - actual[k]) / actual[k] if actual[k] else None for k in actual}
    return {"samples": len(rows), "actual": actual, "estimate": {k: round(v, 1) for k, v in estimate.items()},
            "relative_error": {k: None if v is None else round(v, 4) for k, v in error.items()}}


def write_profiles(profiles: dict, when: str) -> None:
    import yaml

    default = {"calls": 2.0, "input_base": 150.0, "input_per_word": 2.0, "output_per_call": 60.0}
    head = (f"# Method cost profiles for `conflict-eval suite estimate` (conflict_eval/runs/estimate.py).\n"
            f"# GENERATED by benchmarks/estimate_profiles.py --write-profiles ({when}); do not edit by hand.\n"
            "# Per sample: calls; input tokens = input_base + input_per_word * record words; output tokens\n"
            "# per call. Measured with the scripted model (tokens = words) on KRE ECQA (other datasets for\n"
            "# the methods built for them: benchmarks/estimate_profiles.py OTHER_DATA); tokens_per_word\n"
            "# converts for other models. `default` (a method without a profile) is a rough single-call\n"
            "# guess with a long prompt, not a measurement.\n")
    # a run over some methods keeps the profiles of the others
    old = (yaml.safe_load(PROFILES.read_text(encoding="utf-8")) or {}) if PROFILES.is_file() else {}
    old = old.get("methods") or {}
    body = {"tokens_per_word": TOKENS_PER_WORD, "default": default,
            "methods": {**old, **{m: {k: v for k, v in p.items() if k != "fitted_on"} for m, p in profiles.items()}}}
    PROFILES.write_text(head + yaml.safe_dump(body, sort_keys=False), encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--write-profiles", action="store_true")
    args = ap.parse_args()
    if not DATA.is_file():
        print(f"no data at {DATA}", file=sys.stderr)
        return 2
    from conflict_eval.components.manager import components

    known = components()["method"]
    results, profiles, skipped = {}, {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for method in args.methods.split(","):
            if method not in known:
                skipped[method] = "not registered"
                continue
            try:
                rows = run_method(method, args.limit, f"{tmp}/{method}")
            except Exception as exc:  # noqa: BLE001 -- reported in the results, the others go on
                skipped[method] = f"{type(exc).__name__}: {str(exc)[:200]}"
                continue
            prof = fit(rows[0::2])
            profiles[method] = prof
            data = f"{OTHER_DATA[method][1]}/sample.jsonl" if method in OTHER_DATA else "kre_ecqa/sample.jsonl"
            results[method] = {"profile": prof, "check": check(method, prof, rows[1::2]), "data": data}
            err = results[method]["check"]["relative_error"]
            print(f"{method:18} calls {prof['calls']:5.2f}  in {prof['input_base']:7.1f} + "
                  f"{prof['input_per_word']:.3f}/word  out/call {prof['output_per_call']:6.1f}   check error: "
                  + ", ".join(f"{k} {v:+.1%}" if v is not None else f"{k} n/a" for k, v in err.items()))
    when = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    if args.write_profiles and profiles:
        write_profiles(profiles, when)
    out = {"date": when, "python": platform.python_version(), "data": "kre_ecqa/sample.jsonl (conflict); "
           "OTHER_DATA methods: the result's data",
           "limit": args.limit, "model": "scripted/bench (tokens = words)", "results": results, "skipped": skipped}
    RESULTS.mkdir(parents=True, exist_ok=True)
    previous = RESULTS / "estimate_profiles.json"
    if previous.is_file():  # a run over some methods keeps the others' results
        old = json.loads(previous.read_text(encoding="utf-8"))
        results = {**old.get("results", {}), **results}
        skipped = {**{m: w for m, w in old.get("skipped", {}).items() if m not in results}, **skipped}
        out.update(results=results, skipped=skipped)
    (RESULTS / "estimate_profiles.json").write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    lines = [f"# Estimate vs actual, method by method ({when})", "",
             f"Profiles fitted on the even-numbered of the first {args.limit} KRE ECQA records (conflict "
             "setting; the methods built for another dataset on that one, see OTHER_DATA), checked on the odd-numbered ones; scripted model, tokens counted as words. "
             "Relative error = (estimate - actual) / actual over the check records. Target: within 25%.", "",
             "| method | calls/sample | input = base + per word | output/call | calls err | input err | output err |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for m, r in results.items():
        p, e = r["profile"], r["check"]["relative_error"]
        lines.append(f"| {m} | {p['calls']:.2f} | {p['input_base']:.0f} + {p['input_per_word']:.3f} w | "
                     f"{p['output_per_call']:.1f} | " + " | ".join(
                         "n/a" if e[k] is None else f"{e[k]:+.1%}" for k in ("calls", "input_tokens", "output_tokens"))
                     + " |")
    for m, why in skipped.items():
        lines.append(f"| {m} | not measured: {why} | | | | | |")
    lines += ["", "What this does and does not say:", "",
              "* With the scripted model, calls and input tokens are a deterministic function of the record, "
              "so a line in the record's word count predicts them within a few percent on records it was not "
              "fitted on (and `tests/suite/test_estimate.py` checks a scripted suite on the demo data, "
              "another dataset, within 25%).",
              "* Output tokens per call are the scripted reply's 35 words. A real model writes what it writes; "
              "the estimate caps them at the task's `max_tokens`, and a verbose model can exceed the estimate "
              "by that much.",
              "* Micro-Act's 9 calls per sample are its turn budget: the scripted reply is not one of its "
              "actions, so every turn runs. A model that follows the action format stops earlier "
              "(the paper's Table 4: 3.4-3.6 turns), so this is an upper bound.",
              "* MADAM-RAG's calls follow the record's documents: with the scripted model (the agents never "
              "change their answer) 2 x documents + 1 (one round of agents and the aggregator, a second round "
              "of agents, then the early stop), 5 to 15 calls on these RAMDocs records; the profile is their "
              "mean, so it predicts a set of records, not each record. A model whose agents keep disagreeing "
              "runs all 3 rounds: up to 3 x (documents + 1) calls.",
              "* For API models token counts are words x `tokens_per_word` (1.3), an English average for BPE "
              "tokenizers, not a measurement per tokenizer.",
              "* Methods not measured use the `default` profile, and `suite estimate` names the profile it used."]
    (RESULTS / "estimate_profiles.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
