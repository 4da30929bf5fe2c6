"""Micro-Act analysis figures (token counts, perplexity) on llama.cpp (xllamacpp) against the old engine's.

    python benchmarks/microact_perplexity.py

``plugins/microact/analysis.py`` counts context tokens and computes perplexity
(Figure 5) with the offline model. Its figures on 30 evidence texts were
recorded with the deleted float32 engine before the move to llama.cpp
(``results/old_engine_microact_perplexity.json``: the first 10 records of
KRE ECQA's ``negative_context`` and ``golden_context`` and ConflictQA
StrategyQA's ``parametric_memory``). This recomputes them with today's
``LocalLM`` on the same texts and writes ``results/microact_perplexity.{json,md}``.
"""

from __future__ import annotations

import json
import math
import statistics
import time
from importlib.metadata import version

from _common import DATA, RESULTS  # noqa: E402  (sets the offline environment)


def main() -> None:
    from conflict_eval.plugins.microact.analysis import LocalLM, bucket_by_perplexity

    old = json.loads((RESULTS / "old_engine_microact_perplexity.json").read_text())
    lm = LocalLM("smollm2")
    rows = []
    for r in old["rows"]:
        line = (DATA / r["dataset"] / "sample.jsonl").read_text(encoding="utf-8").splitlines()[r["record"]]
        text = json.loads(line)[r["field"]]
        ppl = lm.perplexity(text)
        rows.append({**{k: r[k] for k in ("dataset", "field", "record")}, "tokens_old": r["tokens"],
                     "tokens_new": lm.count_tokens(text), "perplexity_old": r["perplexity"],
                     "perplexity_new": ppl, "relative_difference": ppl / r["perplexity"] - 1})
    rel = [abs(r["relative_difference"]) for r in rows]
    short = [abs(r["relative_difference"]) for r in rows if r["tokens_new"] < 10]
    longer = [abs(r["relative_difference"]) for r in rows if r["tokens_new"] >= 10]

    def quartile_bins(key: str) -> list[str]:
        scored = [{"perplexity": r[key], "decompose": 0, "id": i} for i, r in enumerate(rows)]
        return [b["bucket"] for b in bucket_by_perplexity(scored)]

    same_bins = sum(
        1 for i in range(len(rows))
        if sorted(range(len(rows)), key=lambda j: rows[j]["perplexity_old"]).index(i) * 4 // len(rows)
        == sorted(range(len(rows)), key=lambda j: rows[j]["perplexity_new"]).index(i) * 4 // len(rows))
    result = {
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "texts": len(rows), "token_counts_equal": sum(r["tokens_old"] == r["tokens_new"] for r in rows),
        "abs_relative_difference": {"median": statistics.median(rel), "max": max(rel),
                                    "median_under_10_tokens": statistics.median(short) if short else None,
                                    "median_10_tokens_or_more": statistics.median(longer) if longer else None},
        "mean_log_ratio": statistics.mean(math.log(r["perplexity_new"] / r["perplexity_old"]) for r in rows),
        "same_quartile_bin": same_bins, "quartile_bins_old": quartile_bins("perplexity_old"),
        "quartile_bins_new": quartile_bins("perplexity_new"), "rows": rows,
        "engine": f"xllamacpp {version('xllamacpp')} (llama.cpp's server in process; log-probabilities of "
                  "forced next tokens, one position per request on the cached prefix)",
    }
    (RESULTS / "microact_perplexity.json").write_text(json.dumps(result, indent=1) + "\n")
    d = result["abs_relative_difference"]
    lines = [
        "# Micro-Act analysis on llama.cpp against the old float32 engine (same 30 texts)",
        "",
        f"Generated {result['created_at']} by `python benchmarks/microact_perplexity.py`; engine: "
        f"{result['engine']}.",
        "",
        f"- token counts equal: {result['token_counts_equal']}/{len(rows)} (llama.cpp's tokenizer vs "
        "transformers' on the same GGUF vocabulary)",
        f"- perplexity, |new/old - 1|: median {d['median']:.4f}, max {d['max']:.4f}; median "
        f"{d['median_under_10_tokens']:.4f} for texts under 10 tokens, {d['median_10_tokens_or_more']:.4f} "
        "for longer ones; mean log ratio "
        f"{result['mean_log_ratio']:+.4f}",
        f"- same perplexity quartile (Figure 5(c) bins): {same_bins}/{len(rows)} texts",
        "",
        "Why they differ: the old engine de-quantised the Q4_1 weights to float32 and ran float32",
        "products; llama.cpp keeps the 4-bit weights, quantises each activation row to 8 bits (Q8_1)",
        "for the dot products and stores keys/values in float16. The per-token log-probabilities",
        "therefore move by a few hundredths of a nat; perplexity averages them over the text, so",
        "very short texts (5-8 tokens, where one token is a fifth of the average) move most.",
        "On xllamacpp each position is evaluated as one new token after the cached prefix (the",
        "server has no prompt log-probabilities), where `llama-cpp-python` evaluated the text in",
        "one batch; the two paths round differently. The former engine (`llama-cpp-python` 0.3.36,",
        "native AVX-512 build, 2026-11-25) measured |new/old - 1| median 0.0072, max 0.2237, and",
        "30/30 texts in the same quartile.",
        "",
        "| dataset | field | record | tokens old/new | perplexity old | perplexity new | rel. diff |",
        "|---|---|---|---|---|---|---|",
        *[f"| {r['dataset']} | `{r['field'].strip()}` | {r['record']} | {r['tokens_old']}/{r['tokens_new']} "
          f"| {r['perplexity_old']:.3f} | {r['perplexity_new']:.3f} | {r['relative_difference']:+.4f} |"
          for r in rows],
    ]
    (RESULTS / "microact_perplexity.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:9]))


if __name__ == "__main__":
    main()
