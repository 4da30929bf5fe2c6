"""Fixtures for the suite, leaderboard and lm-eval tests: a scripted model API
whose replies are fixed per demo sample and that can crash on one sample."""

import os
from pathlib import Path

import pytest

from conflict_eval.testing import scripted_output

# Replies per demo sample id for `flaky/x`: right, wrong, unparseable, right
# (the gold letters are read from the demo data in `demo_gold`).
PLAN = {"mis-01": "gold", "mis-02": "wrong", "mis-03": "junk", "mis-04": "gold",
        "tmp-01": "gold", "tmp-02": "gold", "tmp-03": "wrong", "tmp-04": "junk"}


def demo_gold() -> dict[str, tuple[str, str]]:
    """sample id -> (question, gold letter) of the bundled demo data."""
    from conflict_eval.plugins.demo.dataset import demo

    return {s.id: (s.input, s.target) for s in demo()}


def reply_for(prompt: str) -> str:
    for sid, (question, gold) in demo_gold().items():
        if f"Question: {question}\n" in prompt:
            kind = PLAN.get(sid, "gold")
            if kind == "gold":
                return f"{gold}</a>"
            if kind == "wrong":
                return ("A" if gold != "A" else "B") + "</a>"
            return "Hmm, hard to say."  # unreadable (not a refusal: "I cannot tell." is one)
    raise AssertionError(f"unexpected prompt {prompt[:200]!r}")


def _register():
    from inspect_ai.model import GenerateConfig, ModelAPI, modelapi

    @modelapi(name="flaky")
    class Flaky(ModelAPI):
        """Scripted replies (see PLAN); raises on sample mis-02 while the file
        `crash_flag` exists, to simulate a crash mid-run."""

        def __init__(self, model_name, base_url=None, api_key=None, config=None, crash_flag: str = "", **kw):
            super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
            self.crash_flag = crash_flag

        async def generate(self, input, tools, tool_choice, config):
            prompt = input[-1].text
            if self.crash_flag and os.path.exists(self.crash_flag):
                question = demo_gold()["mis-02"][0]
                if f"Question: {question}\n" in prompt:
                    raise RuntimeError("simulated crash")
            text = reply_for(prompt)
            return scripted_output(text, input_tokens=sum(len(m.text.split()) for m in input))

        def max_connections(self) -> int:
            return 4

    return Flaky


_register()


@pytest.fixture
def tiny_suite_text() -> str:
    return (Path(__file__).resolve().parents[2] / "suites" / "tiny.yaml").read_text()


def _register_oracle():
    from inspect_ai.model import GenerateConfig, ModelAPI, modelapi

    @modelapi(name="oracle")
    class Oracle(ModelAPI):
        """``oracle/gold`` answers every demo question right; ``oracle/A`` (B, C)
        always answers that letter. Usage: input words, output words."""

        def __init__(self, model_name, base_url=None, api_key=None, config=None, **kw):
            super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())

        async def generate(self, input, tools, tool_choice, config):
            prompt = input[-1].text
            letter = self.model_name
            if letter == "gold":
                letter = next(g for q, g in demo_gold().values() if f"Question: {q}\n" in prompt)
            return scripted_output(f"{letter[0]}</a>", input_tokens=sum(len(m.text.split()) for m in input))

    return Oracle


_register_oracle()
