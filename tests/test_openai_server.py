"""The one OpenAI-compatible test server (tests/openai_server.py): no test file
keeps a server of its own, and the shared one does what its users rely on."""

import re
from pathlib import Path

import pytest
from openai_server import OpenAIServer

TESTS = Path(__file__).resolve().parent


def test_no_other_openai_compatible_server_in_the_tests():
    own = []
    for path in TESTS.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if path.name not in ("openai_server.py", Path(__file__).name) and re.search(r"BaseHTTPRequestHandler", text) and re.search(
                r"chat/completions|chat\.completion", text):
            own.append(str(path.relative_to(TESTS)))
    assert own == [], f"use tests/openai_server.py instead of a server of your own: {own}"


def test_live_calls_usage_faults_and_a_query_in_the_base_url():
    openai = pytest.importorskip("openai", reason="the api extra is not installed")
    with OpenAIServer(lambda prompt: f"echo {prompt}", empty=lambda n, prompt: n == 2) as srv:
        client = openai.OpenAI(base_url=srv.url + "?key=SECRET",
                               api_key="sk-test", max_retries=0)
        first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "one two"}])
        second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "three"}])
    assert first.choices[0].message.content == "echo one two"
    assert (first.usage.prompt_tokens, first.usage.completion_tokens) == (2, 3)  # words in, words out
    assert second.choices == [] and srv.failed == ["three"] and srv.prompts == ["one two", "three"]
    assert [s["auth"] for s in srv.seen] == ["Bearer sk-test"] * 2 and srv.live_usage == [(2, 3), (1, 2)]
