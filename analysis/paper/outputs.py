"""Writing a notebook's outputs: figures (PDF + PNG), tables (LaTeX, Markdown, CSV), numbers.

A notebook opens one :class:`Output`, writes through it, and closes it. The build gives each
notebook a staging folder and moves everything into ``paper/`` only when all succeeded; a
notebook run on its own (``output_dir`` None) writes to ``scratch/`` instead, so that
``paper/`` always holds one consistent build.

Every figure is shown in the notebook as well as saved, and every table and figure is listed
with its caption and notebook in a catalogue fragment (``catalogue/<notebook>.json``) that
the typeset report reads.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from analysis import paths
from analysis.files.reading import read_json
from analysis.paper.figures import save_figure, shown_width, use_style
from analysis.paper.latex import latex_table
from analysis.paper.markdown import markdown_table
from analysis.paper.presentation import human_header, presented, with_whole_counts
from analysis.paper.provenance import NumberBook

#: Where a notebook run outside the build writes.
SCRATCH_DIR = paths.PROJECT_ROOT / "scratch"
CATALOGUE = "catalogue"
#: Where each notebook lists what it left out (``left-out/<notebook>.json``).
LEFT_OUT = "left-out"
#: The rows of a table the typeset report shows, as the Markdown prints them (``cells`` of
#: its catalogue entry); a longer table is left to its files.
REPORT_ROWS = 40


def write_table(
    folder: Path,
    frame: pd.DataFrame,
    name: str,
    caption: str = "",
    *,
    for_reader: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """``frame`` as ``<folder>/<name>.csv`` (tidy names, full precision), ``.md`` and
    ``.tex`` (human headers, rates in percent, other fractions to three decimals); returns
    the strings they show (:func:`presented`).

    ``for_reader``, when given, is what the Markdown and LaTeX show instead of ``frame``
    (fewer, combined columns)."""
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / f"{name}.csv", index=False)
    if for_reader is not None:
        frame = for_reader
    shown = presented(frame)
    markdown = markdown_table(shown)
    (folder / f"{name}.md").write_text(
        (f"{caption}\n\n" if caption else "") + markdown + "\n", "utf-8"
    )
    (folder / f"{name}.tex").write_text(latex_table(frame, caption, name, shown), "utf-8")
    return shown


def show(frame: pd.DataFrame, rows: int = 40) -> None:
    """Display ``frame`` for a reader (human headers, percentages, no index) in a notebook.

    Cells and headers are HTML-escaped (a release's model may be named ``a<b>``), and the
    HTML's element ids come from the shown content, not from a random uuid, so that a build
    of the same inputs writes the same executed notebooks."""
    from IPython.display import display

    shown = presented(frame.head(rows))
    content = hashlib.sha256(shown.to_csv(index=False).encode("utf-8")).hexdigest()
    styler = shown.style.hide(axis="index").format(escape="html")
    display(styler.format_index(escape="html", axis=1).set_uuid(content[:12]))
    if len(frame) > rows:
        print(f"(first {rows} of {len(frame)} rows; all of them in the table files)")


class Output:
    """Where one notebook writes: ``<dir>/figures``, ``<dir>/tables`` and its numbers."""

    def __init__(self, output_dir: str | Path | None, notebook: str, inputs: list[Path]):
        if output_dir:
            self.root = Path(output_dir)
        else:
            self.root = SCRATCH_DIR
            print(
                f"Writing to {self.root} (a notebook run alone never touches paper/; "
                "`make paper` builds it)."
            )
        self.notebook = notebook
        self.numbers = NumberBook(notebook, inputs)
        self.catalogue: dict[str, dict] = {}
        self.left: list[dict[str, str]] = []
        use_style()

    def _list(self, kind: str, name: str, caption: str) -> dict:
        key = f"{kind}s/{name}"
        if key in self.catalogue:
            raise ValueError(f"{self.notebook}: {kind} {name!r} written twice")
        self.catalogue[key] = {
            "kind": kind,
            "name": name,
            "caption": caption,
            "notebook": self.notebook,
        }
        return self.catalogue[key]

    def figure(self, fig: plt.Figure, name: str, caption: str = "") -> None:
        """Show ``fig`` in the notebook, save it as ``figures/<name>.pdf`` and ``.png``, close
        it, and list it with ``caption`` in the catalogue."""
        folder = self.root / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        _, png = save_figure(fig, folder / name)
        title = fig.get_suptitle() or (fig.axes[0].get_title() if fig.axes else "")
        self._list("figure", name, caption or title)
        try:
            from IPython import get_ipython
            from IPython.display import Image, display

            if get_ipython() is not None:  # the saved PNG, shown at the figure's own size
                data = png.read_bytes()
                display(Image(data=data, width=shown_width(fig, data)))
        finally:
            plt.close(fig)

    def table(
        self,
        frame: pd.DataFrame,
        name: str,
        caption: str = "",
        *,
        show_rows: int | None = None,
        columns: list[str] | None = None,
    ) -> None:
        """Write ``frame`` as ``tables/<name>.tex`` (booktabs), ``.md`` and ``.csv``.

        The CSV keeps every column, with tidy names and full precision; Markdown, LaTeX and
        the typeset report show ``columns`` (default all) with human headers, rates in
        percent and other fractions to three decimals. ``show_rows`` also displays that many
        rows in the notebook.
        """
        frame = with_whole_counts(frame)
        shown = frame if columns is None else frame[list(columns)]
        for_reader = None if columns is None else shown
        text = write_table(self.root / "tables", frame, name, caption, for_reader=for_reader)
        entry = self._list("table", name, caption)
        entry["columns"] = [str(c) for c in shown.columns]
        entry["headers"] = [human_header(c) for c in shown.columns]
        entry["cells"] = text.head(REPORT_ROWS).to_numpy().tolist()
        entry["rows"] = len(frame)
        if show_rows:
            show(shown, show_rows)

    def left_out(self, what: str, reason: str) -> None:
        """Say that ``what`` (tables, figures or numbers) is left out of this notebook's
        outputs and why; the build's report and ``numbers.json`` list it."""
        self.left.append({"notebook": self.notebook, "what": what, "reason": reason})
        print(f"Left out: {what}, because {reason}.")

    def close(self) -> None:
        """Write the notebook's numbers, catalogue and left-out fragments."""
        self.numbers.write(self.root)
        for name, content in ((CATALOGUE, self.catalogue), (LEFT_OUT, self.left)):
            folder = self.root / name
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{self.notebook}.json").write_text(
                json.dumps(content, indent=2) + "\n", "utf-8"
            )


def merge_catalogue(output_dir: Path) -> dict[str, dict]:
    """Every notebook's catalogue fragment under ``output_dir`` as one mapping, in order."""
    merged: dict[str, dict] = {}
    for fragment in sorted((Path(output_dir) / CATALOGUE).glob("*.json")):
        for name, entry in read_json(fragment).items():
            if name in merged:
                raise ValueError(
                    f"{name} written by both {merged[name]['notebook']} and {entry['notebook']}"
                )
            merged[name] = entry
    return merged


def merge_left_out(output_dir: Path) -> list[dict[str, str]]:
    """Every notebook's left-out fragment under ``output_dir``, in notebook order: one
    ``{notebook, what, reason}`` per part of a section left out."""
    merged: list[dict[str, str]] = []
    for fragment in sorted((Path(output_dir) / LEFT_OUT).glob("*.json")):
        merged += read_json(fragment)
    return merged


#: How a section's sources name a run of your own (``your run: <condition>``); the
#: release's sample cell is ``run: <condition>``.
YOUR_RUN = "your run"


def computed_on(sources: list[str]) -> tuple[str, str]:
    """What per-trial stand-ins ``sources`` (pools: ``reference-policy: ...``, ``run:
    ...`` for the release's sample cell, ``your run: ...``) hold, short for a title and
    long, each run of your own named, for a caption.

    Examples
    --------
    >>> computed_on(["reference-policy: always-hold (policy)", "run: m (off)"])[0]
    'reference policies and sample cell'
    >>> computed_on(["reference-policy: a (policy)", "your run: g (off)", "your run: g (high)"])[1]
    'the reference policies and your runs g (high) and g (off)'
    """
    named: dict[str, list[str]] = {}
    for source in sources:
        origin, _, condition = str(source).partition(": ")
        named.setdefault(origin, []).append(condition)
    short, long = [], []
    if "reference-policy" in named:
        short.append("reference policies")
        long.append("the reference policies")
    if "run" in named:
        cells = len(named["run"])
        short.append("sample cell" if cells == 1 else "sample cells")
        long.append("the release's sample cell" if cells == 1 else "the release's sample cells")
    if YOUR_RUN in named:
        yours = sorted(named[YOUR_RUN])
        short.append("your run" if len(yours) == 1 else "your runs")
        listed = yours[0] if len(yours) == 1 else f"{', '.join(yours[:-1])} and {yours[-1]}"
        long.append(f"your run{'s' if len(yours) > 1 else ''} {listed}")
    if not short:
        return "stand-ins", "stand-ins"

    def joined(parts: list[str]) -> str:
        return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"

    return joined(short), joined(long)


def stand_in_title(title: str, sources: list[str]) -> str:
    """``title``, marked as computed on stand-ins (reference policies, the sample cell,
    your runs: :func:`computed_on`) when no published verdicts are among ``sources``."""
    if "published" in sources:
        return title
    return f"{title}\n{computed_on(sources)[0]}, not the paper's results"


def stand_in_caption(caption: str, sources: list[str]) -> str:
    """``caption`` with the same mark as :func:`stand_in_title`, naming your runs."""
    if "published" in sources:
        return caption
    return (
        f"{caption} Computed on {computed_on(sources)[1]} (the public release lacks "
        "per-scenario verdicts): not the paper's results."
    )
