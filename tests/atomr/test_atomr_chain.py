"""``plugins/atomr/chain.py`` ``recorded`` is what the AtomR method records:
the real planner and node replies of ``../shared/replies-2026-11-26/beyond/r5_atomr``
(the North Star question), sent by a scripted model through
``conflict_eval/atomr`` on a hand-written MuSiQue record, give the tree the
chain reads (nodes in execution order, with their leaves) and the answer it
reads from the root's reply."""

import json
import re

from inspect_ai import eval as inspect_eval

from conflict_eval.plugins.atomr.chain import recorded
from conflict_eval.testing import CHEAP_EVAL, scripted_model

RUN = "replies-2026-11-26/beyond/r5_atomr"
PLAN = "120557-a3f70d"  # the North Star planner reply
QUESTION = "Who married the publisher of abolitionist newspaper The North Star?"
RECORD = {  # official MuSiQue format, written by hand (paragraph texts ours)
    "id": "2hop__northstar_1", "question": QUESTION, "answer": "Anna Murray Douglass",
    "answer_aliases": ["Helen Pitts Douglass"],
    "paragraphs": [{"idx": 0, "title": "The North Star (anti-slavery newspaper)", "is_supporting": True,
                    "paragraph_text": "The North Star was an anti-slavery newspaper published by Frederick Douglass."},
                   {"idx": 1, "title": "Frederick Douglass", "is_supporting": True,
                    "paragraph_text": "Frederick Douglass married Anna Murray in 1838 and Helen Pitts in 1884."}]}


def _quoted(prompt: str) -> str | None:
    """The question an answer prompt quotes first (Figures 8-11 put it in double quotes)."""
    m = re.search(r'"([^"\n]{1,300}\?)\s?"', prompt)
    return m.group(1).strip() if m else None


def test_the_chain_reads_what_atomr_records_from_real_replies(shared_data, require_shared, tmp_path, log_dir):
    run = require_shared(shared_data.parent / RUN, "AtomR replies")
    replies = {}
    for done in sorted((run / "done").glob("*.json")):
        prompt = json.loads(done.read_text(encoding="utf-8"))["messages"][-1]["content"]
        if "Decomposition Tree:" not in prompt:
            replies[_quoted(prompt)] = (run / "replies" / f"{done.stem}.txt").read_text(encoding="utf-8")
    plan = (run / "replies" / f"{PLAN}.txt").read_text(encoding="utf-8")

    def reply(prompt):
        return plan if "Decomposition Tree:" in prompt else replies[_quoted(prompt)]

    path = tmp_path / "musique.jsonl"
    path.write_text(json.dumps(RECORD) + "\n", encoding="utf-8")
    [log] = inspect_eval("conflict_eval/atomr", task_args={"dataset": "musique", "path": str(path)},
                         model=scripted_model(reply), log_dir=log_dir, **CHEAP_EVAL)
    assert log.status == "success", log.error
    [sample] = log.samples
    store = {k.split(":", 1)[1]: v for k, v in sample.store.items() if k.startswith("AtomRStore:")}
    assert not store["degraded"] and not store["plan_error"]
    status, nodes, _ = recorded(plan, "plan")
    ran = [f"{n['label']}. {n['question']} -> {n['leaf']}" if "leaf" in n else f"{n['label']}. {n['question']}"
           for n in store["tree"]]
    # the executor runs the nodes the chain lists, in its order; a leaf's call as the chain reads it
    assert status == "value" and len(ran) == 5 and ran == [n.split(" <- ")[0] for n in nodes]
    root = replies[QUESTION]
    assert recorded(root, "answer") == ("value", ["Anna Murray Douglass", "Helen Pitts Douglass"], None)
    assert sample.output.completion == "Anna Murray Douglass, Helen Pitts Douglass"  # the answer list, joined
