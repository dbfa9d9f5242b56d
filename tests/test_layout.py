"""The package's layout: subpackages that depend one way, no import circle, short modules.

Each subpackage's docstring ends with a "May import:" paragraph naming what it may import;
the imports in its modules (at any depth, and the names its ``lazy_exports`` table imports
on first use) must stay within it, and the declared dependencies must form no circle.
"""

from __future__ import annotations

import ast
import graphlib
import re
from collections import defaultdict
from pathlib import Path

import pytest

import analysis

PACKAGE = Path(analysis.__file__).parent
MAX_LINES = 500
#: The modules at the top of the package besides its subpackages, at most.
MAX_TOP_MODULES = 4
_HOME = re.compile(r"""["'](analysis(?:\.\w+)+)["']""")
_ALLOWED = re.compile(r"^May import:(.*?)(?:\n\s*\n|\Z)", re.S | re.M)


def module_names(root: Path) -> dict[str, Path]:
    """Every module under ``root`` (a package folder) by its dotted name."""
    names = {}
    for file in sorted(root.rglob("*.py")):
        parts = list(file.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = file
    return names


def _home(name: str, modules: dict[str, Path]) -> str | None:
    """The module that ``name`` (a module, or a name inside one) lives in."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts) or None


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of the package at ``root`` and the package modules it imports: every
    ``import`` and ``from ... import`` (inside functions too, relative ones resolved), and
    the homes a ``lazy_exports`` table names."""
    modules = module_names(root)
    top = root.name
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, file in modules.items():
        source = file.read_text("utf-8")
        package = name if file.name == "__init__.py" else name.rpartition(".")[0]
        found: list[str] = []
        for node in ast.walk(ast.parse(source, str(file))):
            if isinstance(node, ast.Import):
                found += [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*anchor, base] if base else anchor)
                found += [f"{base}.{alias.name}" for alias in node.names] + [base]
        if "lazy_exports(" in source:
            found += _HOME.findall(source)
        for target in found:
            if target == top or target.startswith(top + "."):
                home = _home(target, modules)
                if home and home != name and not name.startswith(home + "."):
                    graph[name].add(home)
    return graph


def unit(module: str) -> str:
    """The subpackage (or top-level module) a module belongs to: ``analysis.scoring.rules``
    -> ``scoring``; ``analysis.paths`` -> ``paths``; the package itself -> ``analysis``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def declared_imports(root: Path) -> dict[str, set[str]]:
    """What each subpackage's docstring says it may import (``May import: ...``)."""
    declared = {}
    for init in sorted(root.glob("*/__init__.py")):
        docstring = ast.get_docstring(ast.parse(init.read_text("utf-8"))) or ""
        allowed = _ALLOWED.search(docstring)
        assert allowed, f"{init}: the docstring has no 'May import:' paragraph"
        declared[init.parent.name] = {
            name.split(".")[1] for name in re.findall(r"analysis\.\w+", allowed.group(1))
        }
    return declared


def test_the_import_graph_finds_a_planted_circle(tmp_path):
    package = tmp_path / "pkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "a.py").write_text("def f():\n    from pkg.inner.b import g\n")
    (package / "inner" / "b.py").write_text("from .. import a\n")
    graph = import_graph(package)
    assert graph["pkg.a"] == {"pkg.inner.b"} and graph["pkg.inner.b"] == {"pkg.a"}
    with pytest.raises(graphlib.CycleError):
        tuple(graphlib.TopologicalSorter(graph).static_order())


def test_no_module_imports_itself_back_through_others():
    graph = import_graph(PACKAGE)
    assert "analysis.paper.outputs" in graph["analysis.paper.sections.opening"]
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as circle:
        pytest.fail(f"import circle: {' -> '.join(circle.args[1])}")


def test_each_subpackage_imports_only_what_its_docstring_allows():
    declared = declared_imports(PACKAGE)
    used: dict[str, set[str]] = defaultdict(set)
    for module, targets in import_graph(PACKAGE).items():
        for target in targets:
            if unit(module) in declared and unit(target) != unit(module):
                used[unit(module)].add(unit(target))
    beyond = {name: sorted(used[name] - allowed) for name, allowed in declared.items()}
    assert not {name: extra for name, extra in beyond.items() if extra}
    assert used["paper"] >= {"scoring", "release"}  # the graph sees across subpackages


def test_the_subpackages_depend_one_way():
    declared = declared_imports(PACKAGE)
    assert set(declared) >= {"files", "corpus", "trials", "scoring", "inference", "paper"}
    try:
        order = tuple(graphlib.TopologicalSorter(declared).static_order())
    except graphlib.CycleError as circle:
        pytest.fail(f"subpackages declared in a circle: {' -> '.join(circle.args[1])}")
    assert order.index("files") < order.index("corpus") < order.index("scoring")


def test_no_module_is_over_500_lines():
    lengths = {file: len(file.read_text("utf-8").splitlines()) for file in PACKAGE.rglob("*.py")}
    assert lengths, PACKAGE
    assert not {str(file.relative_to(PACKAGE)): n for file, n in lengths.items() if n > MAX_LINES}


def test_the_top_of_the_package_holds_a_handful_of_modules():
    top = sorted(file.name for file in PACKAGE.glob("*.py") if file.name != "__init__.py")
    assert 0 < len(top) <= MAX_TOP_MODULES, top
