"""The notebooks as committed: stripped of outputs, and thin (parameters, one opening call,
then cells that call, show and write; the logic lives in the package)."""

from __future__ import annotations

import ast
import re

import nbformat
import pytest
from factories import run_papermill

from analysis import paths
from analysis.paper.notebooks import is_stripped, main, strip, stripped

NOTEBOOKS = sorted(paths.NOTEBOOKS_DIR.glob("*.ipynb"))
#: Syntax a thin notebook does not need: loops, definitions, comprehensions.
LOGIC = (
    ast.For,
    ast.While,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
#: String methods that parse text.
PARSING = {"split", "rsplit", "partition", "rpartition", "replace", "strip", "startswith"}


def code_cells(path):
    return [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


def executed_copy(path, folder):
    """``path`` with an output, an execution count and run metadata, as a kernel leaves it."""
    notebook = nbformat.read(path, as_version=4)
    for count, cell in enumerate(notebook.cells, 1):
        if cell.cell_type == "code":
            cell.execution_count = count
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="hi\n")]
            cell.metadata["execution"] = {"iopub.status.busy": "2026-01-01T00:00:00Z"}
    notebook.metadata["papermill"] = {"parameters": {}}
    target = folder / path.name
    nbformat.write(notebook, target)
    return target


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_committed_notebooks_carry_no_outputs(path) -> None:
    assert is_stripped(path), f"{path.name}: run `make strip`"
    for cell in code_cells(path):
        assert cell.outputs == [] and cell.execution_count is None


def test_strip_removes_outputs_counts_and_run_metadata_and_keeps_the_rest(tmp_path) -> None:
    original = NOTEBOOKS[0]
    executed = executed_copy(original, tmp_path)
    assert not is_stripped(executed)
    assert main(["--check", str(executed)]) == 1
    assert strip(executed) is True
    assert is_stripped(executed) and main(["--check", str(executed)]) == 0
    again = nbformat.read(executed, as_version=4)
    before = nbformat.read(original, as_version=4)
    assert [c.source for c in again.cells] == [c.source for c in before.cells]
    assert again.cells[1].metadata == {"tags": ["parameters"]}
    assert "papermill" not in again.metadata
    assert strip(executed) is False  # nothing left to strip


def test_stripped_leaves_its_argument_alone(tmp_path) -> None:
    notebook = nbformat.read(executed_copy(NOTEBOOKS[0], tmp_path), as_version=4)
    stripped(notebook)
    assert any(c.get("outputs") for c in notebook.cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_opens_its_section_from_literal_parameters(path) -> None:
    cells = code_cells(path)
    parameters = cells[0]
    assert parameters.metadata.get("tags") == ["parameters"]
    assigned = {}
    for statement in ast.parse(parameters.source).body:
        assert isinstance(statement, ast.Assign), f"{path.name}: parameters are assignments"
        assert isinstance(statement.value, ast.Constant), f"{path.name}: literal defaults"
        assigned[statement.targets[0].id] = statement.value.value
    assert assigned["output_dir"] is None and assigned["data_dir"] is None
    opening = ast.parse(cells[1].source)
    calls = [
        n
        for n in ast.walk(opening)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "open_section"
    ]
    assert len(calls) == 1, f"{path.name}: one open_section call opens the section"
    (call,) = calls
    assert call.args[0].value == path.stem
    passed = {k.arg: getattr(k.value, "id", None) for k in call.keywords}
    assert {name: name for name in assigned if name != "simulate"} == passed


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_a_notebook_holds_no_logic(path) -> None:
    """No loops, definitions or comprehensions, no string parsing, no scenario ids, and no
    section opened twice: those live in the package, tested."""
    sources = [c.source for c in code_cells(path)]
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            assert not isinstance(node, LOGIC), f"{path.name}: {type(node).__name__} in {source}"
            if isinstance(node, ast.Attribute):
                assert node.attr not in PARSING, f"{path.name}: .{node.attr}() in {source}"
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert not re.search(r"-\d{3}$", node.value), f"{path.name}: {node.value!r}"
    assert sum("open_section(" in s for s in sources) == 1


def test_no_notebook_reads_a_scenario_id(scenarios) -> None:
    ids = set(scenarios["scenario_id"].astype(str))
    for path in NOTEBOOKS:
        text = path.read_text("utf-8")
        assert not [i for i in ids if i in text], path.name


@pytest.mark.slow
def test_a_notebook_runs_with_other_parameters(tmp_path, paper_dir) -> None:
    """06-mirrors under papermill with the data folder and one verdict file given: the
    reference policies' numbers are those the build records from every verdict found."""
    import json

    reference = paths.reference_runs_dir() / "trials.csv"
    out = tmp_path / "out"
    result = run_papermill(
        "06-mirrors",
        tmp_path / "executed.ipynb",
        output_dir=out,
        data_dir=paths.data_dir(),
        verdict_paths=reference,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    numbers = json.loads((out / "numbers" / "06-mirrors.json").read_text("utf-8"))
    built = json.loads((paper_dir / "numbers.json").read_text("utf-8"))["numbers"]
    assert numbers and all(name.startswith("reference.") for name in numbers)
    for name, entry in numbers.items():
        assert entry["value"] == built[name]["value"], name
