"""The documentation site: every public name has an API entry with a runnable example, and
the site builds with Sphinx, offline, with warnings as errors, its JupyterLab page showing the
starter notebook run on the imported release (slow tier; ``make docs``)."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

DOCS = Path(__file__).parents[1] / "docs"
STARTER_NOTEBOOK = Path(__file__).parents[1] / "explore" / "start-here.ipynb"
#: Each package whose ``__all__`` is public API, with the documentation page listing it.
PUBLIC = {
    "analysis": DOCS / "api" / "index.md",
    "analysis.inference": DOCS / "api" / "inference.md",
}


def public_names() -> list[str]:
    """Every public name, dotted: ``analysis.load_trials``, ``analysis.inference.SEED``."""
    return [
        f"{package}.{name}"
        for package in PUBLIC
        for name in importlib.import_module(package).__all__
    ]


def documented_names(page: Path, package: str) -> set[str]:
    """The names a page documents: its ``autofunction`` and ``py:data`` directives (a name
    without a dot is the package's)."""
    pattern = r"^\.\. (?:autofunction|py:data):: (\S+)$"
    names = re.findall(pattern, page.read_text("utf-8"), flags=re.M)
    return {name if "." in name else f"{package}.{name}" for name in names}


def test_public_names_are_listed():
    assert len(public_names()) > 30
    assert "analysis.inference.pass_hat_k" in public_names()


def test_every_public_name_has_an_api_entry():
    for package, page in PUBLIC.items():
        names = {n for n in public_names() if n.rsplit(".", 1)[0] == package}
        documented = documented_names(page, package)
        assert names - documented == set(), f"public names without an entry in {page.name}"
        assert documented - names == set(), f"{page.name} documents names that are not public"


def test_every_public_function_has_a_runnable_example():
    """Each public function's docstring holds an example; tests/test_public_api.py runs them."""
    lacking = []
    for dotted in public_names():
        package, name = dotted.rsplit(".", 1)
        value = getattr(importlib.import_module(package), name)
        if callable(value) and ">>>" not in (inspect.getdoc(value) or ""):
            lacking.append(dotted)
    assert lacking == []


def inventory(path: Path) -> dict[str, str]:
    """Sphinx's ``objects.inv``: each object's name and its role (``py:function``, ...)."""
    data = path.read_bytes()
    header_end = 0
    for _ in range(4):  # four plain header lines, then the zlib-compressed entries
        header_end = data.index(b"\n", header_end) + 1
    entries = zlib.decompress(data[header_end:]).decode("utf-8").splitlines()
    return {line.split(" ")[0]: line.split(" ")[1] for line in entries if line}


@pytest.mark.slow  # a Sphinx build of the whole site, the starter notebook run: about 30-60 s
def test_the_site_builds_without_warnings_and_every_public_name_has_a_page(tmp_path):
    try:
        import furo  # noqa: F401
        import myst_nb  # noqa: F401
        import numpydoc  # noqa: F401
        import sphinx  # noqa: F401
    except ImportError as missing:
        pytest.fail(f"{missing.name} is not installed: `make test-all` installs the docs extra")
    out = tmp_path / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    result = subprocess.run([*command, str(DOCS), str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    objects = inventory(out / "objects.inv")
    for dotted in public_names():
        assert objects.get(dotted) in {"py:function", "py:data"}, f"{dotted} has no API page"
    for page in ("getting-started", "reproducing", "jupyterlab", "verdicts", "scoring"):
        assert (out / f"{page}.html").is_file(), page
    for page in ("inference", "running", "integrity", "development", "changelog", "api/index"):
        assert (out / f"{page}.html").is_file(), page
    changelog = (out / "changelog.html").read_text("utf-8")
    assert "Unreleased" in changelog
    assert_starter_notebook_shown_executed(out)


def assert_starter_notebook_shown_executed(out: Path) -> None:
    """The JupyterLab page holds every code cell of ``explore/start-here.ipynb`` with what
    it printed on the imported release: a table (a DataFrame), its figures (PNG files the
    page shows), and no error."""
    page = (out / "jupyterlab.html").read_text("utf-8")
    notebook = json.loads(STARTER_NOTEBOOK.read_text("utf-8"))
    code_cells = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    assert page.count('<div class="cell docutils container">') == len(code_cells)
    assert "<h2>Start here: asking your own questions" in page  # a section of the page
    assert re.search(r'<table[^>]*class="dataframe".*?over_refusal</td>', page, flags=re.S)
    figures = re.findall(r'<img [^>]*src="(_images/[^"]+\.png)"', page)
    assert len(figures) >= 2, "plot_rates draws two figures"
    for figure in figures:
        assert (out / figure).stat().st_size > 10_000, figure
    assert "output traceback" not in page
