"""Shared fixtures: the imported release's tables (``make test`` imports it first)."""

from __future__ import annotations

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
