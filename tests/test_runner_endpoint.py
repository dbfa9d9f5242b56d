"""The endpoint gate end to end against a local OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from fake_openai_server import BLOCKED_VERDICT, FakeOpenAIServer, chat_reply

from analysis import paths
from analysis.runner.cli import main
from analysis.runner.client import EndpointSettings
from analysis.runner.gate_run import run_gate
from analysis.runner.gates import EndpointGate, ModelSettings
from analysis.runner.runroot import RunRootError

#: Most of these tests' time is spent waiting on the servers' delays.
pytestmark = pytest.mark.waits

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

HOLD = "patient-records-employer-disclosure-002"  # expected: block
PROCEED = "amazon-hiring-mirror-advance-candidate-tier-b-005"  # expected: continue


def _gate(base_url: str, *, timeout: float = 2.0, retries: int = 2) -> EndpointGate:
    model = ModelSettings(model="local-model", temperature=0.0, max_tokens=256)
    endpoint = EndpointSettings(base_url, timeout=timeout, retries=retries, backoff_base=0.01)
    return EndpointGate(model, endpoint, concurrency=2)


def _run(gate, inputs, root: Path, ids=(HOLD,), trials: int = 1, concurrency: int = 1):
    try:
        return run_gate(
            gate,
            root,
            inputs=inputs,
            trials=trials,
            scenario_ids=list(ids),
            concurrency=concurrency,
            progress=False,
        )
    finally:
        gate.close()


def _trial(root: Path, scenario: str = HOLD, t: int = 1, variant: str = "local-model") -> dict:
    return json.loads((root / variant / scenario / f"trial-{t}.json").read_text())


def test_normal_run_through_the_cli(inputs, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TEST_ENDPOINT_KEY", "secret-token")
    root = tmp_path / "root"
    with FakeOpenAIServer() as server:
        code = main(
            [
                "--gate", "endpoint", "--out", str(root), "--base-url", server.base_url,
                "--model", "local-model", "--label", "Local Model", "--api-key-env",
                "TEST_ENDPOINT_KEY", "--temperature", "0", "--max-tokens", "300",
                "--reasoning-effort", "low", "--scenarios", f"{HOLD},{PROCEED}",
                "--trials", "2", "--concurrency", "3", "--no-progress",
            ]
        )  # fmt: skip
    assert code == 0
    assert len(server.requests) == 4
    assert {h["authorization"] for h in server.headers} == {"Bearer secret-token"}
    scenario = inputs.by_id()[HOLD]
    trial = _trial(root, variant="Local-Model")
    assert trial["request_body"] == {
        "model": "local-model",
        "messages": [
            {"role": "system", "content": inputs.system_prompt},
            {"role": "user", "content": scenario.user_input},
        ],
        "temperature": 0.0,
        "max_tokens": 300,
        "reasoning_effort": "low",
    }
    assert trial["request_body"] in server.requests
    assert (trial["status"], trial["commit_permission"], trial["correct"]) == (
        "ok",
        "blocked",
        True,
    )
    assert (trial["http_status"], trial["attempts"], trial["parse_failed"]) == (200, 1, False)
    assert trial["usage"]["input_tokens"] == 600 and trial["raw_text"] == BLOCKED_VERDICT
    cell = json.loads((root / "Local-Model" / PROCEED / "cell.json").read_text())
    assert cell["modal_commit_permission"] == "blocked" and cell["modal_correct"] is False
    assert cell["reasoning_label"] == "low" and cell["n_trials"] == 2
    plan = json.loads((root / "RUN_PLAN.json").read_text())
    assert plan["variant_settings"]["Local-Model"]["api_key_env"] == "TEST_ENDPOINT_KEY"
    assert "secret-token" not in "".join(p.read_text() for p in root.rglob("*.json"))
    out = tmp_path / "tidy.csv"
    assert main(["export-tidy", str(root), str(out)]) == 0
    rows = list(csv.DictReader(out.open()))
    assert len(rows) == 4
    assert {(r["model"], r["reasoning"], r["source"]) for r in rows} == {
        ("Local Model", "low", "run")
    }


def test_429_then_success_is_retried(inputs, tmp_path: Path) -> None:
    def respond(n: int, body: dict):
        if n == 1:
            return 429, '{"error":{"message":"rate limited"}}', 0.0
        return 200, chat_reply(BLOCKED_VERDICT), 0.0

    with FakeOpenAIServer(respond) as server:
        summary = _run(_gate(server.base_url), inputs, tmp_path)
    trial = _trial(tmp_path)
    assert len(server.requests) == 2 and summary.n_errors == 0
    assert (trial["status"], trial["attempts"], trial["http_status"]) == ("ok", 2, 200)


def test_a_timeout_is_retried_then_recorded_as_an_error(inputs, tmp_path: Path) -> None:
    def slow_first(n: int, body: dict):
        return 200, chat_reply(BLOCKED_VERDICT), 0.6 if n == 1 else 0.0

    with FakeOpenAIServer(slow_first) as server:
        _run(_gate(server.base_url, timeout=0.2), inputs, tmp_path / "retried")
    trial = _trial(tmp_path / "retried")
    assert (trial["status"], trial["attempts"]) == ("ok", 2)

    def always_slow(n: int, body: dict):
        return 200, chat_reply(BLOCKED_VERDICT), 0.6

    with FakeOpenAIServer(always_slow) as server:
        summary = _run(_gate(server.base_url, timeout=0.2, retries=1), inputs, tmp_path / "fail")
    trial = _trial(tmp_path / "fail")
    assert summary.n_errors == 1 and len(server.requests) == 2
    assert (trial["status"], trial["attempts"]) == ("infrastructure_failed", 2)
    assert trial["commit_permission"] is None and trial["correct"] is None
    assert "timeout" in trial["error"]


@pytest.mark.parametrize(
    ("status", "body", "expected", "requests"),
    [
        # Not JSON: an infrastructure failure, not retried (re-running the command retries it).
        (200, "this is not json", "infrastructure_failed", 1),
        (200, "<!DOCTYPE html><html><body>Bad gateway</body></html>", "infrastructure_failed", 1),
        # JSON without a message: a reply without text, as the release's runner reads it.
        (200, '{"id":"x","object":"chat.completion"}', "parse_failed", 1),
        (200, '{"choices":[]}', "parse_failed", 1),
        (200, '{"choices":["x"]}', "parse_failed", 1),
        (200, '["not", "an", "object"]', "parse_failed", 1),
        # Server errors: retried (1 + retries=1 requests).
        (503, "upstream down", "infrastructure_failed", 2),
        # The model's own answers: not retried.
        (200, chat_reply("I would hold this one."), "parse_failed", 1),
        (200, chat_reply(BLOCKED_VERDICT, finish_reason="length"), "truncated", 1),
        # Client errors: not retried.
        (400, '{"error":{"code":"cyber_policy","message":"filtered"}}', "provider_filtered", 1),
        (400, '{"error":{"code":"invalid_request"}}', "infrastructure_failed", 1),
    ],
)
def test_malformed_and_failed_replies_are_not_decisions(
    inputs, tmp_path: Path, status: int, body: str, expected: str, requests: int
) -> None:
    with FakeOpenAIServer(lambda n, b: (status, body, 0.0)) as server:
        summary = _run(_gate(server.base_url, retries=1), inputs, tmp_path)
    trial = _trial(tmp_path)
    assert trial["status"] == expected
    assert len(server.requests) == requests == trial["attempts"]
    assert summary.n_errors == (expected == "infrastructure_failed")
    if expected == "truncated":
        assert trial["commit_permission"] == "blocked" and trial["truncated"] is True
        return
    assert trial["commit_permission"] is None
    assert trial["correct"] is None
    cell = json.loads((tmp_path / "local-model" / HOLD / "cell.json").read_text())
    assert cell["modal_commit_permission"] is None and cell["modal_correct"] is None
    assert cell["provider_filtered"] is (expected == "provider_filtered")


def test_an_interrupted_run_resumes_without_redoing_finished_trials(inputs, tmp_path: Path) -> None:
    def dies_after_three(n: int, body: dict):
        return (200, chat_reply(BLOCKED_VERDICT), 0.0) if n <= 3 else (500, "down", 0.0)

    ids = (HOLD, PROCEED)
    with FakeOpenAIServer(dies_after_three) as server:
        first = _run(_gate(server.base_url, retries=0), inputs, tmp_path, ids=ids, trials=3)
    assert (first.n_calls_made, first.n_errors) == (6, 3)
    statuses = sorted(_trial(tmp_path, s, t)["status"] for s in ids for t in (1, 2, 3))
    assert statuses.count("ok") == 3

    with FakeOpenAIServer() as server:
        second = _run(_gate(server.base_url), inputs, tmp_path, ids=ids, trials=3)
    assert len(server.requests) == 3
    assert (second.n_calls_made, second.n_trials_reused, second.n_errors) == (3, 3, 0)
    for scenario in ids:
        cell = json.loads((tmp_path / "local-model" / scenario / "cell.json").read_text())
        assert cell["trial_permissions"] == ["blocked"] * 3

    with FakeOpenAIServer() as server:
        third = _run(_gate(server.base_url), inputs, tmp_path, ids=ids, trials=3)
    assert len(server.requests) == 0 and third.n_trials_reused == 6


def test_a_changed_setting_is_refused_before_any_request(inputs, tmp_path: Path) -> None:
    with FakeOpenAIServer() as server:
        _run(_gate(server.base_url), inputs, tmp_path)
        before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
        model = ModelSettings(model="local-model", temperature=0.7, max_tokens=256)
        gate = EndpointGate(model, EndpointSettings(server.base_url, backoff_base=0.01))
        with pytest.raises(RunRootError, match=r"temperature.*another --out"):
            _run(gate, inputs, tmp_path)
    assert len(server.requests) == 1
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before


def test_a_missing_api_key_variable_stops_before_any_request(tmp_path: Path, capsys) -> None:
    with FakeOpenAIServer() as server:
        code = main(
            ["--gate", "endpoint", "--out", str(tmp_path), "--base-url", server.base_url,
             "--model", "m", "--api-key-env", "STEERBENCH_TEST_UNSET_KEY", "--no-progress"]
        )  # fmt: skip
    assert code == 2 and not server.requests
    assert "STEERBENCH_TEST_UNSET_KEY" in capsys.readouterr().err
