"""The researcher's workspace: explore/ is opened by the Lab, never built, tested or linted,
and its tour runs on the imported release."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import nbformat
import pytest

from analysis import paths
from analysis.paper.make import build_inputs, default_notebooks
from analysis.paper.notebooks import is_stripped

EXPLORE = paths.PROJECT_ROOT / "explore"
START_HERE = EXPLORE / "start-here.ipynb"


def test_explore_is_outside_the_build_the_lint_and_the_notebook_tests():
    assert all(nb.parent == paths.NOTEBOOKS_DIR for nb in default_notebooks())
    inputs = [path for _, path in build_inputs(paths.data_dir(), default_notebooks())]
    assert not any(p == EXPLORE or EXPLORE in p.parents for p in inputs)
    ruff = tomllib.loads((paths.PROJECT_ROOT / "pyproject.toml").read_text("utf-8"))["tool"]
    assert "explore" in ruff["ruff"]["extend-exclude"]
    makefile = (paths.PROJECT_ROOT / "Makefile").read_text("utf-8")
    assert "LINTED := analysis tests benchmarks notebooks\n" in makefile


def test_the_lab_opens_the_project_on_the_tour():
    makefile = (paths.PROJECT_ROOT / "Makefile").read_text("utf-8")
    recipe = makefile.split("\nlab: data\n", 1)[1].split("\n\n", 1)[0]
    assert "--ServerApp.root_dir=." in recipe
    assert "--ServerApp.default_url=/lab/tree/explore/start-here.ipynb" in recipe


def test_the_tour_is_committed_stripped():
    assert is_stripped(START_HERE), (
        "run: python -m analysis.paper.notebooks explore/start-here.ipynb"
    )


@pytest.mark.slow  # a kernel, the scientific stack and the release: about 15 s
def test_the_tour_runs_on_the_release(tmp_path, scenarios):
    executed = tmp_path / "start-here.ipynb"
    command = [sys.executable, "-m", "papermill", "--no-progress-bar", str(START_HERE)]
    result = subprocess.run([*command, str(executed)], capture_output=True, text=True, cwd=EXPLORE)
    assert result.returncode == 0, result.stderr[-2000:]
    outputs = [o for c in nbformat.read(executed, as_version=4).cells for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    shown = "\n".join(str(o.get("data", {}).get("text/plain", "")) for o in outputs)
    assert "over_refusal" in shown and "under_refusal" in shown  # the one rates call
    assert "McNemar score test" in shown  # the paired test of one pair
    html = "\n".join(str(o.get("data", {}).get("text/html", "")) for o in outputs)
    assert 'id="itables_' in html  # a long frame to sort and filter
    assert sum("image/png" in o.get("data", {}) for o in outputs) == 2
    warned = [o.text for o in outputs if o.output_type == "stream" and o.name == "stderr"]
    assert len(warned) <= 1 and all("scenarios-detail.json" in w for w in warned)
