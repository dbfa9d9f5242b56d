"""Shared fixtures: the imported release's tables (``make test`` imports it first) and one
full build of the paper, shared by every test that reads ``paper/``."""

from __future__ import annotations

import subprocess
import sys

import pytest

from analysis import paths
from analysis.leaderboard import load_conditions
from analysis.scenarios import load_scenarios


@pytest.fixture(scope="session")
def scenarios():
    if not (paths.SCENARIOS_DIR / "MANIFEST.md").exists():
        pytest.fail("the release is not imported: run `make data` (make test does it)")
    return load_scenarios()


@pytest.fixture(scope="session")
def conditions(scenarios):
    return load_conditions(scenarios)


@pytest.fixture(scope="session")
def built_paper(tmp_path_factory):
    """One ``make paper`` into a temporary folder, built once per test session."""
    target = tmp_path_factory.mktemp("build") / "paper"
    result = subprocess.run(
        [sys.executable, "-m", "analysis.build", "--paper-dir", str(target)],
        capture_output=True,
        text=True,
        cwd=paths.PROJECT_ROOT,
    )
    assert result.returncode == 0, result.stderr
    return target
