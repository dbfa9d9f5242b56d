"""Without the inspect extra: a clear install message, and the rest of the package works."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from analysis.trials import VerdictError, discover_runs, load_trials

LOG_NAME = "2026-06-01T10-00-00+00-00_steerbench-work_x.json"


def test_without_the_extra_logs_ask_for_it(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    log = tmp_path / LOG_NAME
    log.write_text("{}")
    with pytest.raises(VerdictError, match=r"pip install -e '\.\[inspect\]'") as err:
        load_trials([log])
    assert str(log) in str(err.value)


def test_without_the_extra_the_task_asks_for_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    monkeypatch.delitem(sys.modules, "analysis.runner.inspect_task", raising=False)
    with pytest.raises(ImportError, match=r"pip install -e '\.\[inspect\]'"):
        import analysis.runner.inspect_task  # noqa: F401


def test_discovery_needs_no_extra(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)
    (tmp_path / "inspect").mkdir()
    log = tmp_path / "inspect" / "run.eval"
    log.write_bytes(b"")
    (tmp_path / "inspect" / "notes.json").write_text("{}")
    assert [(e["kind"], e["paths"]) for e in discover_runs(tmp_path)] == [("inspect", [log])]
