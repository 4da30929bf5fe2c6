"""Offline scripted models for tests (ours and plugin authors').

Inspect's ``mockllm/model`` fills in token usage by downloading a tokenizer
when a scripted output has none; these helpers always set usage (counted as
whitespace-separated words) so tests never touch the network.

    model = scripted_model(["<a>B</a>"])                  # replies in order
    model = scripted_model(lambda prompt: "<a>A</a>")     # reply computed from the last user message
    eval(task, model=model)

Every call is recorded in ``model.calls`` (list of the input message texts)
when the model comes from :func:`scripted_model`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


CHEAP_EVAL: dict[str, Any] = {"display": "none", "log_realtime": False}
"""``inspect_ai.eval`` options for in-process test runs that read the returned
logs: ``eval(tasks, **CHEAP_EVAL, log_dir=tmp)``. The log is written when the
task ends rather than streamed sample by sample (``log_realtime``).
``display="none"`` is kept although ``"log"`` is faster (a scripted demo eval
0.22 s against 0.34 s, best of 5): ``"none"`` leaves rich's global console
quiet for the rest of the process and ``"log"`` does not, so with ``"log"``
Inspect's log handler (installed by the first eval) printed later tests' loader
warnings into the stdout they parse."""


def _words(text: str) -> int:
    return len(text.split())


def scripted_output(text: str, input_tokens: int = 0, stop_reason: str = "stop"):
    """A ``ModelOutput`` with ``text`` and token usage set (no tokenizer needed)."""
    from inspect_ai.model import ModelOutput, ModelUsage

    output = ModelOutput.from_content("mockllm/model", text, stop_reason=stop_reason)
    output.usage = ModelUsage(
        input_tokens=input_tokens,
        output_tokens=_words(text),
        total_tokens=input_tokens + _words(text),
    )
    return output


class ScriptedReplies:
    """Callable ``custom_outputs`` for ``mockllm/model`` that records each call."""

    def __init__(self, replies: Iterable[str] | Callable[[str], str]):
        self._fn = replies if callable(replies) else None
        self._replies = None if callable(replies) else iter(list(replies))
        self.calls: list[list[Any]] = []

    def __call__(self, input, tools, tool_choice, config):
        self.calls.append(list(input))
        prompt = input[-1].text if input else ""
        if self._fn is not None:
            text = self._fn(prompt)
        else:
            try:
                text = next(self._replies)
            except StopIteration:
                raise ValueError(
                    f"scripted model ran out of replies after {len(self.calls) - 1} call(s); "
                    f"last prompt: {prompt[:200]!r}"
                ) from None
        tokens = sum(_words(m.text) for m in input)
        return scripted_output(text, input_tokens=tokens)


def scripted_model(replies: Iterable[str] | Callable[[str], str], **kwargs: Any):
    """A ``mockllm/model`` that answers with ``replies`` (in order) or with
    ``replies(last_user_prompt)``; the :class:`ScriptedReplies` recorder is
    available as ``model.script`` (``model.script.calls``)."""
    from inspect_ai.model import get_model

    script = ScriptedReplies(replies)
    model = get_model("mockllm/model", custom_outputs=script, memoize=False, **kwargs)
    model.script = script  # type: ignore[attr-defined]
    return model


def _as_text(value: Any, option: str) -> str:
    """One ``-M`` reply as text, undoing Inspect's YAML reading of ``-M`` values.

    Inspect reads ``-M reply=Yes`` as the boolean ``True`` and ``-M reply=a, b``
    as the list ``["a", " b"]``. Booleans become ``Yes`` / ``No`` (YAML reads
    yes/no/true/false/on/off alike, so the spelling cannot be recovered), numbers
    their text, a list is joined back at its commas. A reply with ``: `` reads as
    a mapping and cannot be recovered: quote it (``-M 'reply="Answer: yes"'``).
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list) and option == "reply":
        return ",".join(_as_text(v, option) for v in value)
    raise ValueError(
        f"scripted model: -M {option}= must be text, got {type(value).__name__} {value!r}; "
        "quote the reply (e.g. -M 'reply=\"Answer: yes\"')")


def _scripted_api():
    from inspect_ai.model import ModelAPI, modelapi

    @modelapi(name="scripted")
    class ScriptedModelAPI(ModelAPI):
        """``--model scripted/<name>``: an offline, zero-latency scripted model.

        Replies with ``-M reply=TEXT`` (default ``"A</a>"``), or cycles through
        ``-M replies=[...]``; ``-M delay=SECONDS`` waits before each reply.
        ``-M hold=DIR`` interrupts a run at a known point, with no timing:
        the first ``-M hold_after=N`` calls (default 0) are answered, then
        every later call creates ``DIR/held`` and waits until ``DIR/release``
        exists (a test waits for ``held``, then sends its signal; creating
        ``release`` first lets the same command run through). Usage is counted in words, so nothing
        downloads a tokenizer. Used by the CLI tests and the benchmarks.
        ``reply`` is always one reply (a comma in it is kept); only
        ``replies`` gives several. Non-text values are coerced (:func:`_as_text`).
        """

        def __init__(self, model_name, base_url=None, api_key=None, config=None,
                     reply: str = "A</a>", replies: list[str] | None = None, delay: float = 0.0,
                     hold: str = "", hold_after: int = 0, **kwargs):
            from inspect_ai.model import GenerateConfig

            super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
            if replies is not None and not isinstance(replies, list):
                replies = [replies]
            self._replies = ([_as_text(r, "replies") for r in replies] if replies
                             else [_as_text(reply, "reply")])
            self._n = 0
            self._delay = float(delay)
            self._hold = str(hold)
            self._hold_after = int(hold_after)
            self._calls = 0

        async def generate(self, input, tools, tool_choice, config):
            import anyio

            self._calls += 1
            if self._hold and self._calls > self._hold_after:
                from pathlib import Path

                held, release = Path(self._hold) / "held", Path(self._hold) / "release"
                if not release.exists():
                    held.touch()
                    while not release.exists():  # until released or cancelled by a signal
                        await anyio.sleep(0.02)
            if self._delay > 0:
                await anyio.sleep(self._delay)
            text = self._replies[self._n % len(self._replies)]
            self._n += 1
            return scripted_output(text, input_tokens=sum(_words(m.text) for m in input))

        def max_connections(self) -> int:
            return 64

    return ScriptedModelAPI
