"""Sphinx configuration of the documentation site (``make docs``)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

project = "SteerBench-Work analysis"
author = "SteerBench-Work"
release = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
version = release

extensions = [
    "myst_parser",
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
myst_heading_anchors = 3

# numpydoc renders the docstrings; no class member tables, no autosummary stubs.
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
autodoc_typehints = "none"
autodoc_member_order = "bysource"
add_module_names = False

# Offline: no inventory is fetched, so cross-references to other projects stay plain text.
intersphinx_mapping: dict = {}

html_theme = "furo"
html_title = f"{project} {release}"
html_static_path: list[str] = []
html_show_sourcelink = False
