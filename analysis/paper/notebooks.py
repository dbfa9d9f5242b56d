"""Notebooks as committed: no outputs, no execution counts, no run metadata.

``python -m analysis.paper.notebooks notebooks/*.ipynb`` (``make strip``) strips them in place;
with ``--check`` (``make lint``) it changes nothing and lists each notebook that is not
stripped, exiting 1. A stripped code cell keeps only its source and its tags (the
``parameters`` tag papermill reads); the notebook keeps its kernel and language name.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import nbformat

#: Cell metadata a committed notebook keeps.
CELL_METADATA = ("tags",)


def stripped(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` without outputs, execution counts or run metadata."""
    clean = nbformat.from_dict(notebook)
    for cell in clean.cells:
        cell.metadata = {k: v for k, v in cell.metadata.items() if k in CELL_METADATA}
        if cell.cell_type == "code":
            cell.outputs = []
            cell.execution_count = None
    kernel = notebook.metadata.get("kernelspec")
    language = notebook.metadata.get("language_info", {}).get("name", "python")
    clean.metadata = {"language_info": {"name": language}}
    if kernel:
        clean.metadata["kernelspec"] = dict(kernel)
    return clean


def is_stripped(path: Path) -> bool:
    """Whether the notebook at ``path`` is as :func:`stripped` leaves it."""
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    return stripped(notebook) == notebook


def strip(path: Path) -> bool:
    """Strip the notebook at ``path`` in place; True when it changed."""
    notebook = nbformat.read(path, as_version=nbformat.NO_CONVERT)
    clean = stripped(notebook)
    if clean == notebook:
        return False
    nbformat.write(clean, path)
    return True


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m analysis.paper.notebooks",
        description="Strip notebooks of outputs, execution counts and run metadata.",
    )
    parser.add_argument("notebooks", nargs="+", type=Path, help="notebooks to strip (.ipynb)")
    parser.add_argument(
        "--check", action="store_true", help="change nothing; list notebooks not stripped"
    )
    args = parser.parse_args(argv)
    if args.check:
        dirty = [p for p in args.notebooks if not is_stripped(p)]
        for path in dirty:
            print(f"error: {path}: has outputs or run metadata; run `make strip`", file=sys.stderr)
        return 1 if dirty else 0
    for path in args.notebooks:
        if strip(path):
            print(f"stripped {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
