"""The public API: every name in ``analysis.__all__`` resolves, lazily; every docstring example
and the README's example run."""

from __future__ import annotations

import doctest
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

import analysis


def test_every_public_name_resolves_to_a_documented_callable():
    for name in analysis.__all__:
        value = getattr(analysis, name)
        assert callable(value), name
        assert value.__doc__, f"{name} has no docstring"


@pytest.mark.parametrize(
    "statement", ["import analysis", "from analysis.paper.sections import READS, Reads, Locations"]
)
def test_importing_the_package_imports_no_pandas(statement):
    code = f"import sys; {statement}; print('pandas' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.slow  # a process that imports the scientific stack: about 4 s
def test_the_inference_module_leaves_statsmodels_models_to_the_fits():
    """Every notebook kernel imports analysis.inference; statsmodels' model classes (and the
    formula machinery they load) come only when a model is fitted."""
    code = "import sys, analysis.inference; print('statsmodels.base.model' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.stdout.strip() == "False", result.stderr


def modules_with_examples() -> list[str]:
    """Every module of the package whose docstrings hold an example (``>>>``)."""
    root = Path(analysis.__file__).parent
    return sorted(
        ".".join(("analysis", *path.relative_to(root).with_suffix("").parts))
        for path in root.rglob("*.py")
        if ">>>" in path.read_text("utf-8")
    )


#: Modules whose examples build the paper (``compare_releases`` builds two releases, about
#: 40 s when no build is there to reuse): the slow tier runs them.
BUILDING_EXAMPLES = {"analysis.compare.__init__"}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(name, marks=pytest.mark.slow) if name in BUILDING_EXAMPLES else name
        for name in modules_with_examples()
    ],
)
def test_docstring_examples_run(name):
    result = doctest.testmod(
        importlib.import_module(name), optionflags=doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted and not result.failed, name


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="not_a_function"):
        analysis.not_a_function  # noqa: B018


def test_the_readme_example_runs_on_the_imported_release():
    readme = (Path(__file__).parents[1] / "README.md").read_text("utf-8")
    blocks = readme.split("```python\n")[1:]
    assert blocks, "README.md has no Python example"
    for block in blocks:
        namespace: dict = {}
        code = block.split("```")[0]
        if code.rstrip().endswith("standings()"):  # the last line's value, as a notebook shows it
            code = code.rstrip()[: -len("standings()")] + "table = standings()\n"
            exec(code, namespace)
            assert {"published", "reference-policy"} <= set(namespace["table"]["source"])
            continue
        exec(code, namespace)
        assert len(namespace["cells"]) > 0
        assert namespace["trials"]["scenario_id"].isin(namespace["scenarios"]["scenario_id"]).all()


def test_no_public_name_is_also_a_module_of_the_package():
    """Importing ``analysis.<name>`` would replace the lazy function with the module."""
    root = Path(analysis.__file__).parent
    modules = {p.stem for p in root.glob("*.py")} | {p.name for p in root.iterdir() if p.is_dir()}
    assert not set(analysis.__all__) & modules
