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


def test_batch_routes_counts_and_unknown_ids():
    """Every route of the server once (upload, create, retrieve, download, cancel), what each
    counts, and the 404 of an unknown route, batch or file."""
    import json
    import urllib.error
    import urllib.request

    openai = pytest.importorskip("openai", reason="the api extra is not installed")

    def status(method: str, url: str) -> tuple[int, str]:
        try:
            with urllib.request.urlopen(urllib.request.Request(url, data=b"{}" if method == "POST" else None,
                                                               method=method), timeout=10) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())["error"]["message"]

    line = {"custom_id": "c1", "method": "POST", "url": "/v1/chat/completions",
            "body": {"model": "m", "messages": [{"role": "user", "content": "one two"}]}}
    with OpenAIServer("yes", delay=0.0) as srv:
        client = openai.OpenAI(base_url=srv.url, api_key="sk-test", max_retries=0)
        upload = client.files.create(file=("b.jsonl", json.dumps(line).encode() + b"\n"), purpose="batch")
        done = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                     completion_window="24h")
        done = client.batches.retrieve(done.id)
        assert done.status == "completed" and done.request_counts.completed == 1
        [out] = client.files.content(done.output_file_id).text.splitlines()
        assert json.loads(out)["response"]["body"]["choices"][0]["message"]["content"] == "yes"
        other = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                      completion_window="24h")
        assert client.batches.cancel(other.id).status == "cancelled"  # still validating: cancelled
        assert client.batches.cancel(done.id).status == "completed"  # finished: stays so
        assert status("POST", srv.url + "/nothing") == (404, "no route /v1/nothing")
        assert status("GET", srv.url + "/batches/batch_x") == (404, "no batch batch_x")
        assert status("POST", srv.url + "/batches/batch_x/cancel") == (404, "no batch batch_x")
        assert status("GET", srv.url + "/files/file-x/content") == (404, "no file file-x")
        assert status("GET", srv.url + "/models") == (404, "no route /v1/models")
    assert dict(srv.counts) == {"files.create": 1, "batches.create": 2, "batches.retrieve": 2,
                                "files.content": 2, "batches.cancel": 3}
    assert srv.custom_ids == ["c1"] and srv.usage == [(2, 1)] and srv.prompts == []
