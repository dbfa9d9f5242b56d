"""Sphinx configuration of the documentation site (``make docs``).

The "Exploring in JupyterLab" page shows the starter notebook, ``explore/start-here.ipynb``,
executed: the build puts the notebook's cells on the page, MyST-NB runs them on the imported
release (the package's own paths find it), and a cell that fails fails the build.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tomllib
from pathlib import Path

from markdown_it import MarkdownIt
from sphinx.errors import ExtensionError

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
# As the paper's build does: jsonschema (which nbformat imports) builds a Lark grammar for IRI
# syntax when rfc3987_syntax is importable, seconds of start-up; no notebook schema checks an
# IRI, so the site does without it.
sys.modules.setdefault("rfc3987_syntax", None)
# The notebook's kernel imports this checkout's package too, as autodoc does.
os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))

project = "SteerBench-Work analysis"
author = "SteerBench-Work"
release = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]["version"]
version = release

extensions = [
    "myst_nb",  # MyST Markdown pages (it loads myst_parser) and executed notebooks
    "numpydoc",
    "sphinx.ext.autodoc",
    "sphinx.ext.intersphinx",
]
source_suffix = {".md": "myst-nb", ".rst": "restructuredtext"}
exclude_patterns = ["_build", "_generated"]  # pages included by others
myst_heading_anchors = 3

# The starter notebook, committed without outputs, shown executed on one page: the line
# STARTER_MARKER of that page is replaced by the notebook's cells (see add_starter_notebook).
STARTER_NOTEBOOK = ROOT / "explore" / "start-here.ipynb"
STARTER_PAGE = "jupyterlab"
STARTER_MARKER = "% explore/start-here.ipynb: its cells go here, executed (docs/conf.py)"

# MyST-NB runs the notebook at every build it reads the page (never a cached run): a cell
# that fails, or runs past the timeout (seconds), fails the build, its traceback in the log.
# What a cell writes to stderr (a warning the package gives) is shown under the cell.
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_execution_show_tb = True

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
html_static_path = ["_static"]
html_css_files = ["notebook.css"]
html_show_sourcelink = False


def deeper_headings(markdown: str, levels: int) -> str:
    """``markdown`` with every heading ``levels`` levels deeper, written ``#`` style."""
    lines = markdown.splitlines()
    tokens = MarkdownIt("commonmark").parse(markdown)
    headings = [
        (token, tokens[index + 1])
        for index, token in enumerate(tokens)
        if token.type == "heading_open"
    ]
    for heading, inline in reversed(headings):  # from the end: a setext heading is two lines
        level = int(heading.tag[1:]) + levels
        if level > 6:
            raise ExtensionError(f"{STARTER_NOTEBOOK.name}: heading too deep: {inline.content}")
        start, end = heading.map
        lines[start:end] = ["#" * level + " " + inline.content]
    return "\n".join(lines)


def notebook_as_myst(notebook: dict, heading_levels: int) -> tuple[dict, str]:
    """A notebook as a MyST Markdown notebook: its front matter (the kernel) and its cells,
    each Markdown cell as it is (its headings ``heading_levels`` deeper), each code cell a
    ``{code-cell}`` block keeping its tags."""
    cells = []
    for cell in notebook["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "markdown":
            cells.append("+++\n\n" + deeper_headings(source, heading_levels))
        elif cell["cell_type"] == "code":
            longest = max((len(run) for run in re.findall("`+", source)), default=0)
            fence = "`" * max(3, longest + 1)
            tags = cell.get("metadata", {}).get("tags")
            options = f"---\ntags: {json.dumps(tags)}\n---\n" if tags else ""
            cells.append(f"{fence}{{code-cell}} ipython3\n{options}{source}\n{fence}")
        else:
            raise ExtensionError(f"{STARTER_NOTEBOOK.name}: a {cell['cell_type']} cell")
    front_matter = {"file_format": "mystnb", "kernelspec": notebook["metadata"]["kernelspec"]}
    return front_matter, "\n\n".join(cells) + "\n\n+++\n"


def add_starter_notebook(app, docname: str, source: list[str]) -> None:
    """Reads the starter page as a MyST Markdown notebook: the notebook's cells in place of
    its marker line, the notebook's kernel in its front matter. MyST-NB then runs it."""
    if docname != STARTER_PAGE:
        return
    app.env.note_dependency(str(STARTER_NOTEBOOK))
    page = source[0]
    if page.count(STARTER_MARKER + "\n") != 1 or page.startswith("---"):
        raise ExtensionError(f"{docname}.md: no front matter, the line {STARTER_MARKER!r} once")
    notebook = json.loads(STARTER_NOTEBOOK.read_text("utf-8"))
    front_matter, cells = notebook_as_myst(notebook, heading_levels=1)
    source[0] = (
        "---\n" + json.dumps(front_matter) + "\n---\n" + page.replace(STARTER_MARKER + "\n", cells)
    )


def always_read_starter_page(app, env, added, changed, removed) -> list[str]:
    """The starter page is read (and its notebook run) at every build: its outputs come from
    the imported release, which Sphinx does not track."""
    return [STARTER_PAGE]


def setup(app) -> None:
    app.connect("source-read", add_starter_notebook)
    app.connect("env-get-outdated", always_read_starter_page)
