"""A judge's own error is the sample's error message (issue 44, Deliver 7):
with a panel of two judges that both fail, Inspect's task group would report
"unhandled errors in a TaskGroup"; the sample says what the judge said."""

from __future__ import annotations

from inspect_ai import eval as inspect_eval

from conflict_eval.testing import scripted_model


def failing_judge(prompt: str) -> str:
    raise RuntimeError("judge quota exhausted")


def test_two_failing_judges_leave_the_judges_error(log_dir):
    answer = scripted_model(lambda p: "<a>A</a>")
    [log] = inspect_eval("conflict_eval/run", task_args={"method": "end_to_end", "dataset": "demo",
                                                         "scorer": "conflictscore", "claims": "whole"},
                         model=answer, model_roles={"grader": scripted_model(failing_judge),
                                                    "grader_2": scripted_model(failing_judge)},
                         limit=1, log_dir=log_dir, display="none", fail_on_error=False)
    [sample] = log.samples
    assert sample.error is not None and not sample.scores
    assert "judge quota exhausted" in sample.error.message, sample.error.message
    assert "TaskGroup" not in sample.error.message
