"""`suite estimate`: live and batch cost side by side, and the sequential batch
round trips of multi-turn methods (conflict_eval/runs/batch_estimate.py)."""

import json

import pytest

from conflict_eval.cli import main
from conflict_eval.runs.batch_estimate import BATCH_WINDOW_HOURS, round_trips

KRE = "github/yingjiahao14/KRE/fb170442ea942439c01cf8d105d935a4b80facc3/dataset/cose.json"
HOTPOT = ("github/xindili-cmu/anlp-project-multihop/df0d5757f42f098ab6026f40323e91c369307506/"
          "processed_data/hotpotqa/dev_subsampled.jsonl")


def test_round_trips_by_hand():
    # Micro-Act: a turn's reply then its action's call, max_turns turns; MADAM-RAG: the
    # agents (one parallel round trip) then the aggregator, per round; GKP: knowledge, answer
    assert round_trips("microact", {}, 9.0)[0] == 16
    assert round_trips("microact", {"max_turns": 3}, 9.0)[0] == 6
    assert round_trips("madam_rag", {"rounds": 2}, 8.8)[0] == 4
    assert round_trips("gkp", {}, 2.0)[0] == 2
    assert round_trips("atomr", {}, 1.0)[0] == 3 and round_trips("atomr", {}, 7.2)[0] == 8
    assert round_trips("end_to_end", {}, 1.0) == (1, "")
    assert BATCH_WINDOW_HOURS == 24


# Records of each shared sample file put in the cache: the estimates below take --limit 20, so a
# task reads at most 20 samples; the first 40 real records give every task its 20 (the whole
# files made the loaders build, three estimates over, some 130,000 samples the limit then drops).
RECORDS = 40


@pytest.fixture
def seeded_cache(shared_data, tmp_path, monkeypatch):
    """The default suite's downloadable datasets, from the shared samples, in a fresh cache."""
    cache = tmp_path / "cache"
    for name, src in ((KRE, shared_data / "kre_ecqa" / "sample.jsonl"),
                      (HOTPOT, shared_data / "hotpotqa_ircot" / "sample.jsonl")):
        (cache / "data" / name).parent.mkdir(parents=True, exist_ok=True)
        lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
        assert len(lines) > RECORDS
        (cache / "data" / name).write_text("".join(lines[:RECORDS]), encoding="utf-8")
    monkeypatch.setenv("CONFLICT_EVAL_CACHE", str(cache))
    return cache


def test_default_suite_estimate_live_and_batch(seeded_cache, capsys):
    assert main(["suite", "estimate", "default", "--limit", "20"]) == 0
    text = capsys.readouterr().out
    head = text.splitlines()[0].split()
    assert "$" in head and "live" in head and "batch" in head and "trips" in head
    assert "OpenAI Batch API list price: 50% off" in text and "Anthropic Message Batches" in text
    microact = [ln for ln in text.splitlines() if " microact " in ln]
    assert len(microact) == 2 and all("16*" in ln and "384 h" in ln for ln in microact)
    assert "Micro-Act turns" in text
    assert main(["suite", "estimate", "default", "--limit", "20", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    cells = {(c["model"], c["task"]): c for c in data["cells"]}
    assert len(cells) == 14  # 7 paper tasks x 2 models
    priced = [c for c in cells.values() if c["live_usd"] is not None]
    assert len(priced) == 8  # the 4 tasks whose data is in the cache; 3 need -T path=
    assert all(c["samples"] == 20 for c in priced)  # the --limit, which the cached records fill
    for c in priced:  # both providers' batch discount is 50% (prices.yaml batch:)
        assert c["batch_usd"] == pytest.approx(c["live_usd"] * 0.5, abs=1e-6) and c["live_usd"] > 0
    mc = cells[("openai/gpt-4o-mini", "microact")]
    assert mc["multi_turn"] and mc["sequential_round_trips"] == 16 and mc["worst_case_batch_wall_hours"] == 384
    assert cells[("openai/gpt-4o-mini", "user_needs")]["sequential_round_trips"] == 1
    nodata = cells[("openai/gpt-4o-mini", "truthfulqa_conflict")]
    assert nodata["live_usd"] is None and "needs `path: FILE` in that task's `args:`" in nodata["problem"]
    assert "-T path" not in nodata["problem"]  # suite commands take no -T
    assert not any(c["batched"] for c in cells.values())
    # --batch: every cell of a batch-capable provider runs batched
    assert main(["suite", "estimate", "default", "--limit", "20", "--json", "--batch"]) == 0
    assert all(c["batched"] for c in json.loads(capsys.readouterr().out)["cells"])
