"""One count of done samples, for every reader: ``suite status``, the budget
stop message and record (``suite-stop.json``), a resume's status line and the
leaderboard all count a sample as done with :func:`is_done`.

A sample is **done** when it finished without error and has its scores. Inspect's
header figure ``results.completed_samples`` is not used: after a cancellation
(Ctrl-C, SIGTERM, a budget stop) it can fall short of the scored samples the
log holds, and the resume reuses those samples.
"""

from __future__ import annotations

from typing import Any


def is_done(sample: Any) -> bool:
    """A sample (``EvalSample`` or ``EvalSampleSummary``) that finished, scored, without error."""
    return sample.error is None and bool(sample.scores)


def done_keys(log: Any) -> set[tuple[str, int]]:
    """``(sample id, epoch)`` of the done samples of one log (a path or ``EvalLogInfo``)."""
    from inspect_ai.log import read_eval_log_sample_summaries

    return {(str(s.id), s.epoch) for s in read_eval_log_sample_summaries(log) if is_done(s)}
