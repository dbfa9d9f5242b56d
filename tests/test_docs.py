"""The documentation site: every public function has one page of the API reference, its
docstring has Parameters, Returns and an example that shows values, and the site builds
with Sphinx, offline, with warnings as errors, its JupyterLab page showing the starter
notebook run on the imported release (slow tier; ``make docs``)."""

from __future__ import annotations

import importlib
import inspect
import json
import re
import subprocess
import sys
import zlib
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import pytest

import analysis

DOCS = Path(__file__).parents[1] / "docs"
API = DOCS / "api"
STARTER_NOTEBOOK = Path(__file__).parents[1] / "explore" / "start-here.ipynb"
#: Each package whose ``__all__`` is public API.
PACKAGES = ("analysis", "analysis.inference")
#: A package whose public names are those the top level imports from it (its docstring
#: says why it has no ``__all__``).
EXPLORING = "analysis.exploring"
_DIRECTIVE = re.compile(r"^\.\. (?:autofunction|py:data):: (\S+)$", re.M)


def public_names() -> dict[str, object]:
    """Every public name, dotted (``analysis.load_trials``, ``analysis.inference.SEED``),
    and what it names."""
    names = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        names |= {f"{package}.{name}": getattr(module, name) for name in module.__all__}
    return names


def aliases() -> dict[str, set[str]]:
    """Each public name and every public name of the same object (itself included):
    ``analysis.detectable_effect`` is ``analysis.inference.detectable_effect``."""
    by_object: dict[int, set[str]] = defaultdict(set)
    for dotted, value in public_names().items():
        by_object[id(value)].add(dotted)
    return {dotted: by_object[id(value)] for dotted, value in public_names().items()}


def directives(raw: bool = False) -> list[tuple[str, str]]:
    """Every ``autofunction`` and ``py:data`` directive under ``docs/api/``: (page, name),
    a name without a dot taken as the page's ``currentmodule``'s unless ``raw``."""
    found = []
    for page in sorted(API.rglob("*.md")):
        text = page.read_text("utf-8")
        module = re.search(r"^\.\. currentmodule:: (\S+)$", text, re.M)
        for name in _DIRECTIVE.findall(text):
            if module and "." not in name and not raw:
                name = f"{module.group(1)}.{name}"
            found.append((page.relative_to(API).as_posix(), name))
    return found


def test_public_names_are_listed():
    names = public_names()
    assert len(names) > 50
    assert {"analysis.load_trials", "analysis.inference.pass_hat_k"} <= set(names)


def test_every_directive_names_a_public_name_once():
    names = [name for _, name in directives()]
    assert sorted(set(names) - set(public_names())) == [], "not public"
    assert sorted({n for n in names if names.count(n) > 1}) == [], "documented twice"


@pytest.mark.parametrize("page", sorted({page for page, _ in directives()}))
def test_every_directive_names_its_object_fully_dotted(page):
    """``.. autofunction:: analysis.inference.rank_gaps``, never ``rank_gaps``."""
    names = [name for where, name in directives(raw=True) if where == page]
    assert [name for name in names if not name.startswith("analysis.")] == []


def test_every_public_name_is_documented_on_exactly_one_page():
    """Under its own name or, for one object public under two names, under the other."""
    pages: dict[str, set[str]] = defaultdict(set)
    for page, name in directives():
        pages[name].add(page)
    for dotted, same in aliases().items():
        found = [page for name in same for page in pages[name]]
        assert len(found) == 1, f"{dotted}: documented on {found or 'no page'}"


def test_the_exploring_names_are_the_top_level_ones():
    """``analysis.exploring`` has no ``__all__`` (its docstring says why): its public names,
    listed in that docstring, are exactly the top-level names it holds."""
    exploring = importlib.import_module(EXPLORING)
    assert not hasattr(exploring, "__all__")
    listed = re.search(r"^Public names: (.*?)(?:, imported|\n\n)", exploring.__doc__, re.M | re.S)
    assert listed, "the package's docstring lists its public names"
    names = set(re.findall(r"``(\w+)``", listed.group(1)))
    homes = analysis._HOMES
    held = {name for name, home in homes.items() if home.startswith(EXPLORING + ".")}
    assert names == held


def functions() -> dict[str, Callable]:
    """Every public function once, by its first public name (``analysis.detectable_effect``
    and ``analysis.inference.detectable_effect`` are one function)."""
    found: dict[int, tuple[str, Callable]] = {}
    for dotted, value in public_names().items():
        if callable(value):
            found.setdefault(id(value), (dotted, value))
    return dict(found.values())


def docstring_gaps(function: Callable) -> list[str]:
    """What the function's numpydoc docstring lacks: Parameters naming every parameter,
    Returns, Examples, and an example whose output shows (a line after a ``>>>`` statement
    that is neither another statement nor its continuation)."""
    docscrape = pytest.importorskip(
        "numpydoc.docscrape", reason="numpydoc: the docs extra, which `make test-all` installs"
    )
    doc = docscrape.FunctionDoc(function)
    gaps = []
    parameters = [
        name
        for name, parameter in inspect.signature(function).parameters.items()
        if parameter.kind not in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD)
    ]
    documented = {
        name.strip().lstrip("*") for entry in doc["Parameters"] for name in entry.name.split(",")
    }
    if parameters and not doc["Parameters"]:
        gaps.append("Parameters")
    elif missing := [name for name in parameters if name not in documented]:
        gaps.append(f"Parameters of {', '.join(missing)}")
    if not doc["Returns"]:
        gaps.append("Returns")
    examples = doc["Examples"]
    if not any(">>>" in line for line in examples):
        gaps.append("Examples")
    elif not any(
        line.lstrip().startswith((">>>", "..."))
        and examples[index + 1].strip()
        and not examples[index + 1].lstrip().startswith((">>>", "... "))
        for index, line in enumerate(examples[:-1])
    ):
        gaps.append("an example's output")
    return gaps


@pytest.mark.parametrize("dotted", sorted(functions()))
def test_every_public_function_has_parameters_returns_and_an_example_showing_values(dotted):
    """The doctests run in tests/test_public_api.py; here, what the docstring holds."""
    assert docstring_gaps(functions()[dotted]) == []


def test_the_docstring_check_finds_what_a_docstring_lacks():
    def bare(frame, n=1):
        """Something.

        Examples
        --------
        >>> bare(None)
        """

    def complete(frame, n=1):
        """Something.

        Parameters
        ----------
        frame, n : object
            Anything.

        Returns
        -------
        int

        Examples
        --------
        >>> complete(
        ...     None
        ... )
        1
        """

    assert docstring_gaps(bare) == ["Parameters", "Returns", "an example's output"]
    assert docstring_gaps(complete) == []


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
    for dotted, same in aliases().items():
        roles = {objects.get(name) for name in same}
        assert roles & {"py:function", "py:data"}, f"{dotted} has no API page"
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
