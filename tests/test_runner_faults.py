"""The endpoint client against faulty servers on 127.0.0.1: Retry-After, backoff with jitter,
a whole-request deadline, cancellation and credentials kept out of the run root.

Every server here answers a bounded number of requests (retries are capped) and every test
finishes in a few seconds by itself.
"""

from __future__ import annotations

import base64
import json
import random
import threading
import time
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path

import pytest
from fake_openai_server import BLOCKED_VERDICT, FakeOpenAIServer, chat_reply

from analysis.runner.cli import main
from analysis.runner.client import (
    Cancelled,
    EndpointSettings,
    backoff_delay,
    make_http_client,
    parse_retry_after,
    post_with_retries,
)
from analysis.runner.gate_run import run_gate
from analysis.runner.gates import EndpointGate, ModelSettings
from analysis.runner.secrets import redact_text

#: Most of these tests' time is spent waiting on the servers' delays.
pytestmark = pytest.mark.waits

HOLD = "patient-records-employer-disclosure-002"
OK_REPLY = (200, chat_reply(BLOCKED_VERDICT), 0.0)
BODY = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


def _call(base_url: str, cancel: threading.Event | None = None, **settings):
    endpoint = EndpointSettings(base_url, **{"backoff_base": 0.01, **settings})
    with make_http_client(endpoint, 1) as client:
        return post_with_retries(client, endpoint, BODY, cancel=cancel)


def test_retry_after_parses_seconds_and_http_dates() -> None:
    now = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert parse_retry_after("7", now) == 7.0
    assert parse_retry_after(" 1.5 ", now) == 1.5
    assert parse_retry_after("Fri, 01 May 2026 12:00:30 GMT", now) == 30.0
    assert parse_retry_after("Fri, 01 May 2026 11:59:00 GMT", now) == 0.0  # in the past
    assert parse_retry_after("soon", now) is None
    assert parse_retry_after(None, now) is None


def test_retry_after_seconds_is_honoured() -> None:
    def respond(n: int, body: dict):
        if n == 1:
            return 429, '{"error":"slow down"}', 0.0, {"headers": {"Retry-After": "1"}}
        return OK_REPLY

    with FakeOpenAIServer(respond) as server:
        result = _call(server.base_url, retries=2)
    assert result.ok and result.attempts == 2 and len(server.requests) == 2
    assert server.arrivals[1] - server.arrivals[0] >= 0.95  # backoff alone would be ~0.01 s


def test_retry_after_http_date_is_honoured() -> None:
    def respond(n: int, body: dict):
        if n == 1:
            when = format_datetime(datetime.now(UTC) + timedelta(seconds=2), usegmt=True)
            return 503, "busy", 0.0, {"headers": {"Retry-After": when}}
        return OK_REPLY

    with FakeOpenAIServer(respond) as server:
        result = _call(server.base_url, retries=2)
    assert result.ok and result.attempts == 2
    # The date has one-second resolution: the wait is between 1 and 2 seconds.
    assert server.arrivals[1] - server.arrivals[0] >= 0.9


def test_a_retry_after_beyond_the_limit_is_not_waited_for() -> None:
    def respond(n: int, body: dict):
        return 429, "quota", 0.0, {"headers": {"Retry-After": "3600"}}

    with FakeOpenAIServer(respond) as server:
        started = time.monotonic()
        result = _call(server.base_url, retries=3, retry_after_max=5)
    assert time.monotonic() - started < 2
    assert not result.ok and len(server.requests) == 1
    assert "Retry-After 3600 s exceeds 5 s" in result.error


def test_backoff_is_exponential_capped_and_jittered() -> None:
    settings = EndpointSettings("http://127.0.0.1:1/v1", backoff_base=1.0, backoff_max=6.0)
    for retry, ceiling in ((1, 1.0), (2, 2.0), (3, 4.0), (4, 6.0), (9, 6.0)):
        waits = [backoff_delay(settings, retry, random.Random(seed)) for seed in range(50)]
        assert all(ceiling / 2 <= w <= ceiling for w in waits)
        assert len({round(w, 6) for w in waits}) == 50  # workers do not retry in lockstep


def test_a_trickling_server_cannot_hold_a_request_past_its_deadline() -> None:
    def trickle(n: int, body: dict):
        return 200, chat_reply(BLOCKED_VERDICT), 0.0, {"trickle_s": 0.05}  # ~20 s in all

    with FakeOpenAIServer(trickle) as server:
        started = time.monotonic()
        result = _call(server.base_url, timeout=0.6, retries=1)
        elapsed = time.monotonic() - started
    assert not result.ok and result.attempts == 2 and len(server.requests) == 2
    assert result.error.startswith("timeout") and "deadline" in result.error
    assert elapsed < 2.5  # two 0.6 s attempts and a short backoff


def test_a_200_that_is_not_json_is_retried_by_the_next_run(inputs, tmp_path: Path) -> None:
    replies = {1: (200, "<html>proxy</html>", 0.0)}

    with FakeOpenAIServer(lambda n, b: replies.get(n, OK_REPLY)) as server:
        for expected in ("infrastructure_failed", "ok"):
            model = ModelSettings(model="local-model")
            endpoint = EndpointSettings(server.base_url, retries=3, backoff_base=0.01)
            gate = EndpointGate(model, endpoint)
            try:
                summary = run_gate(
                    gate, tmp_path, inputs=inputs, trials=1, scenario_ids=[HOLD], progress=False
                )
            finally:
                gate.close()
            trial = json.loads((tmp_path / "local-model" / HOLD / "trial-1.json").read_text())
            assert (trial["status"], trial["attempts"]) == (expected, 1)
            assert summary.n_errors == (expected != "ok")
    assert len(server.requests) == 2 and trial["commit_permission"] == "blocked"


def test_cancel_abandons_an_in_flight_request_at_once() -> None:
    cancel = threading.Event()
    with FakeOpenAIServer(lambda n, b: (200, chat_reply(BLOCKED_VERDICT), 5.0)) as server:
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            _call(server.base_url, cancel=cancel, timeout=30)
        assert time.monotonic() - started < 1.0


def test_cancel_interrupts_a_backoff_wait() -> None:
    cancel = threading.Event()
    with FakeOpenAIServer(lambda n, b: (503, "down", 0.0)) as server:
        threading.Timer(0.3, cancel.set).start()
        started = time.monotonic()
        with pytest.raises(Cancelled):
            _call(server.base_url, cancel=cancel, backoff_base=30, retries=2)
        assert time.monotonic() - started < 1.0
    assert len(server.requests) == 1


def test_redaction_of_url_credentials() -> None:
    assert redact_text("https://alice:s3cret@api.example/v1") == "https://REDACTED@api.example/v1"
    assert (
        redact_text("http://h/v1?api_key=abc&api-version=2024-06-01&access_token=t")
        == "http://h/v1?api_key=REDACTED&api-version=2024-06-01&access_token=REDACTED"
    )
    assert redact_text("http://h/v1") == "http://h/v1"


@pytest.mark.usefixtures("inputs")  # the run sends the pinned inputs
@pytest.mark.parametrize("status", [200, 500])
def test_credentials_are_never_written_even_when_the_server_echoes_them(
    tmp_path: Path, monkeypatch, status: int
) -> None:
    """A server that echoes the request (path, headers) into its reply, as a body or an
    error: the URL's user info, its secret query values, the Basic credential made of them
    and the key are redacted from every file written."""
    root = tmp_path / "root"

    def echo(n: int, body: dict):
        sent = {"path": server.paths[n - 1], "headers": server.headers[n - 1]}
        text = json.dumps(sent)
        return (200, chat_reply(text), 0.0) if status == 200 else (500, text, 0.0)

    with FakeOpenAIServer(echo) as server:
        port = server.base_url.split(":")[2].split("/")[0]
        url = f"http://alice:pa55%40word@127.0.0.1:{port}/v1?api_key=KEY123&api-version=7"
        argv = ["--gate", "endpoint", "--out", str(root), "--base-url", url, "--model", "m",
                "--scenarios", HOLD, "--trials", "1", "--no-progress",
                "--retries", "0"]  # fmt: skip
        assert main(argv) == (0 if status == 200 else 1)
        basic = {k.lower(): v for k, v in server.headers[0].items()}["authorization"]
        assert basic == "Basic " + base64.b64encode(b"alice:pa55@word").decode()
        assert "api_key=KEY123" in server.paths[0]
        monkeypatch.setenv("ECHO_KEY", "sk-echo-key-1")
        keyed = tmp_path / "keyed"
        assert main([*argv[:3], str(keyed), *argv[4:], "--api-key-env", "ECHO_KEY"]) in (0, 1)
        sent = {k.lower(): v for k, v in server.headers[1].items()}
        assert sent["authorization"] == "Bearer sk-echo-key-1"  # never the URL's user info
    echoed = basic.removeprefix("Basic ")
    for where in (root, keyed):
        written = "".join(p.read_text(encoding="utf-8") for p in where.rglob("*") if p.is_file())
        assert "REDACTED" in written
        for secret in ("pa55", "KEY123", "alice", echoed, "sk-echo-key-1"):
            assert secret not in written, (where, secret)
    plan = json.loads((root / "RUN_PLAN.json").read_text())
    assert plan["variant_settings"]["m"]["base_url"] == (
        f"http://REDACTED@127.0.0.1:{port}/v1/chat/completions?api_key=REDACTED&api-version=7"
    )


@pytest.mark.parametrize(
    ("option", "value", "named"),
    [
        ("--temperature", "nan", "--temperature nan"),
        ("--temperature", "inf", "--temperature inf"),
        ("--temperature", "-0.5", "--temperature -0.5"),
        ("--max-tokens", "-1", "--max-tokens -1"),
        ("--max-tokens", "0", "--max-tokens 0"),
        ("--timeout", "0", "--timeout 0"),
        ("--timeout", "nan", "--timeout nan"),
        ("--retries", "-1", "--retries -1"),
        ("--backoff", "-inf", "--backoff -inf"),
        ("--trials", "0", "--trials 0"),
        ("--concurrency", "0", "--concurrency 0"),
        ("--base-url", "127.0.0.1:8000/v1", "--base-url"),
    ],
)
def test_settings_that_cannot_be_sent_are_refused_before_any_request(
    tmp_path: Path, capsys, option: str, value: str, named: str
) -> None:
    with FakeOpenAIServer() as server:
        settings = {"--base-url": server.base_url, option: value}
        argv = ["--gate", "endpoint", "--out", str(tmp_path / "root"), "--model", "m",
                "--scenarios", HOLD, "--trials", "1", "--no-progress"]  # fmt: skip
        argv += [f"{name}={given}" for name, given in settings.items()]
        assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith("error: ") and named in err
    assert server.requests == [] and not (tmp_path / "root").exists()
