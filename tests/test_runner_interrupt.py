"""Kill and resume: ``steerbench-run`` in a subprocess, interrupted with SIGINT mid-run.

The fake server runs in this process on 127.0.0.1; every wait below has a time limit.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai_server import BLOCKED_VERDICT, FakeOpenAIServer, chat_reply

from analysis import paths

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

SCENARIOS = ("patient-records-employer-disclosure-002", "account-cancellation-001")
TRIALS = 3


def _command(base_url: str, root: Path) -> list[str]:
    return [
        sys.executable, "-m", "analysis.runner.cli", "--gate", "endpoint", "--out", str(root),
        "--base-url", base_url, "--model", "local-model", "--scenarios", ",".join(SCENARIOS),
        "--trials", str(TRIALS), "--concurrency", "2", "--timeout", "60", "--no-progress",
    ]  # fmt: skip


def _interruptible() -> None:
    """Ctrl-C as a terminal delivers it: a process started from one that ignores SIGINT
    (a pytest-xdist worker, ``nohup``) would inherit the ignoring."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(base_url: str, root: Path) -> subprocess.Popen:
    return subprocess.Popen(
        _command(base_url, root),
        cwd=paths.PROJECT_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
        preexec_fn=_interruptible,
    )


def _wait_for(condition, limit: float) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def _interrupt(process: subprocess.Popen) -> tuple[int, str, float]:
    """SIGINT; returns the exit code, stderr and the seconds the process took to exit."""
    sent = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=10)
    finally:
        process.kill()
    return process.returncode, err, time.monotonic() - sent


def _trial_files(root: Path) -> list[Path]:
    return sorted(root.glob("local-model/*/trial-*.json"))


def _assert_nothing_partial(root: Path) -> None:
    assert not [p for p in root.rglob("*") if p.name.endswith(".tmp")]
    for path in root.rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))  # every file is complete


@pytest.mark.slow  # two runner processes and a second of replies each: seconds
def test_sigint_mid_run_then_resume(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with FakeOpenAIServer(lambda n, b: (200, chat_reply(BLOCKED_VERDICT), 1.0)) as server:
        process = _start(server.base_url, root)
        _wait_for(lambda: len(_trial_files(root)) >= 2, limit=60)
        code, err, took = _interrupt(process)
        n_requests = len(server.requests)
    assert code == 130 and took < 2.0
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "interrupted" in lines[0] and "Traceback" not in err
    _assert_nothing_partial(root)
    kept = _trial_files(root)
    assert 2 <= len(kept) < len(SCENARIOS) * TRIALS <= n_requests + len(SCENARIOS) * TRIALS

    with FakeOpenAIServer() as server:
        resumed = subprocess.run(
            _command(server.base_url, root),
            cwd=paths.PROJECT_ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert resumed.returncode == 0, resumed.stderr
    assert len(server.requests) == len(SCENARIOS) * TRIALS - len(kept)
    statuses = [json.loads(p.read_text())["status"] for p in _trial_files(root)]
    assert statuses == ["ok"] * (len(SCENARIOS) * TRIALS)
    for scenario in SCENARIOS:
        cell = json.loads((root / "local-model" / scenario / "cell.json").read_text())
        assert cell["n_trials"] == TRIALS


def test_sigint_while_every_request_hangs_exits_within_two_seconds(tmp_path: Path) -> None:
    root = tmp_path / "root"
    with FakeOpenAIServer(lambda n, b: (200, chat_reply(BLOCKED_VERDICT), 10.0)) as server:
        process = _start(server.base_url, root)
        _wait_for(lambda: len(server.requests) >= 2, limit=60)
        code, err, took = _interrupt(process)
    assert code == 130 and took < 2.0
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert _trial_files(root) == []
    _assert_nothing_partial(root)
