"""Shared fixtures: the imported release's tables and the one build every paper test reads.

``make test`` imports the release first. Tests marked ``slow`` run only under
``make test-all`` (CI). The fixtures import the analysis stack when first used: the process
that hands the tests to the workers never needs it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest

from analysis import paths


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: a slower check, run by `make test-all` and CI")
    config.addinivalue_line(
        "markers", "waits: tests that mostly wait on local servers (handed out beside the build)"
    )
    config.addinivalue_line(
        "markers", "spread: a long test handed out alone, not with the rest of its file"
    )
    config.addinivalue_line(
        "markers",
        "needs_tool(*commands): skipped where a command is missing; a failure under CI=true, "
        "where .ci/run installs it",
    )
    # As the build does (analysis/paper/build.py): jsonschema, which nbformat imports, builds a Lark
    # grammar for IRI syntax when rfc3987_syntax is importable (about 2 s of every test
    # process's collection); no notebook schema checks an IRI.
    sys.modules.setdefault("rfc3987_syntax", None)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(config, items):
    """Under ``pytest -n --dist loadgroup``, every test that reads the built paper runs on
    the worker that builds it (the others never wait for it), and each other file stays
    on one worker, so its module fixtures are built once, but for the tests marked
    ``spread``, each handed out alone. The paper's tests come first:
    xdist hands out the groups in this order (``--no-loadscope-reorder``), so the build,
    the longest step, starts as the session does. The files marked ``waits`` come next: the
    other worker sleeps through them while the build's kernels use the cores."""
    reads_paper = {item.nodeid: "paper_dir" in item.fixturenames for item in items}
    for item in items:
        if reads_paper[item.nodeid]:
            group = "paper"
        elif item.get_closest_marker("spread"):
            group = item.nodeid  # a long test of its own, free to go to either worker
        else:
            group = item.nodeid.split("::")[0]
        item.add_marker(pytest.mark.xdist_group(group))
    items.sort(
        key=lambda item: (not reads_paper[item.nodeid], item.get_closest_marker("waits") is None)
    )


def missing_tools(item: pytest.Item) -> list[str]:
    """The commands of ``item``'s ``needs_tool`` marks that are not on ``PATH``."""
    wanted = [c for mark in item.iter_markers("needs_tool") for c in mark.args]
    return [command for command in wanted if shutil.which(command) is None]


def pytest_runtest_setup(item):
    """A test marked ``needs_tool`` is skipped where a command it needs is missing, except
    under CI (``CI=true``): .ci/run installs every such command, so a missing one there is
    a failure, never a silent skip."""
    missing = missing_tools(item)
    if not missing:
        return
    message = f"{', '.join(missing)} not installed"
    if os.environ.get("CI", "").lower() in ("true", "1"):
        pytest.fail(f"{message}: CI must run this test (.ci/run installs it)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def scenarios():
    if not (paths.scenarios_dir() / "MANIFEST.md").exists():
        pytest.fail("the release is not imported: run `make data` (make test does it)")
    from analysis.corpus.scenarios import load_scenarios

    return load_scenarios()


@pytest.fixture(scope="session")
def inputs():
    """The release's pinned inputs (``load_pinned_inputs``) that every runner test sends."""
    if not paths.parity_vectors().exists():
        pytest.skip("run `make data` first")
    from analysis.corpus.inputs import load_pinned_inputs

    return load_pinned_inputs()


@pytest.fixture(scope="session")
def conditions(scenarios):
    from analysis.scoring.leaderboard import load_conditions

    return load_conditions(scenarios)


#: What ``analysis.paper.make`` says while another process holds the project's lock.
BUSY = "is running (PID"


def build_kernels() -> int:
    """Kernels for a build this session starts: the cores its other workers leave free.

    The worker that builds waits for the build; each other worker of ``pytest -n N`` keeps
    a core busy with tests, and a kernel more than the free cores only slows both down."""
    others = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) - 1
    return max(1, len(os.sched_getaffinity(0)) - others)


@pytest.fixture(scope="session")
def paper_dir():
    """``paper/`` as ``make paper`` leaves it: rebuilt here only if its inputs changed, on
    :func:`build_kernels` kernels (the outputs do not depend on how many).

    Under ``pytest -n`` every worker asks; the first builds, the others wait for its lock
    and then find the build current."""
    deadline = time.monotonic() + 1800
    command = ["paper", "--workers", str(build_kernels())]
    while True:
        result = subprocess.run(
            [sys.executable, "-m", "analysis.paper.make", *command],
            capture_output=True,
            text=True,
            cwd=paths.PROJECT_ROOT,
        )
        if not (BUSY in result.stderr and time.monotonic() < deadline):
            break
        time.sleep(1)
    assert result.returncode == 0, result.stderr
    return paths.PAPER_DIR


@pytest.fixture(scope="session")
def built_paper(paper_dir):
    """The built ``paper/`` folder, for the tests of what a reader opens."""
    return paper_dir


@pytest.fixture(scope="session")
def numbers(built_paper):
    """The ``numbers`` of the built ``paper/numbers.json``, by name."""
    return json.loads((built_paper / "numbers.json").read_text(encoding="utf-8"))["numbers"]
