"""Writing a notebook's outputs: figures (PDF + PNG), tables (LaTeX, Markdown, CSV), numbers.

A notebook opens one :class:`Output`, writes through it, and closes it; the build gives
each notebook a staging folder and moves everything into ``paper/`` only when all succeeded.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib as mpl
import matplotlib.pyplot as plt
import pandas as pd

from analysis import paths
from analysis.provenance import NumberBook

#: Grays for two-level contrasts (e.g. floor vs high, anchor vs mirror).
GRAYS = ("0.15", "0.6")


def use_style() -> None:
    """The house figure style (``figures/steerbench.mplstyle``): grayscale-safe markers."""
    mpl.rcParams.update(mpl.rcParamsDefault)
    plt.style.use(paths.FIGURE_STYLE)


class Output:
    """Where one notebook writes: ``<dir>/figures``, ``<dir>/tables`` and its numbers."""

    def __init__(self, output_dir: str | Path | None, notebook: str, inputs: list[Path]):
        self.root = Path(output_dir) if output_dir else paths.PAPER_DIR
        self.notebook = notebook
        self.numbers = NumberBook(notebook, inputs)
        use_style()

    def figure(self, fig: plt.Figure, name: str) -> Path:
        """Save ``fig`` as ``figures/<name>.pdf`` and ``.png``; close it."""
        folder = self.root / "figures"
        folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(folder / f"{name}.pdf", metadata={"CreationDate": None})
        fig.savefig(folder / f"{name}.png")
        plt.close(fig)
        return folder / f"{name}.png"

    def table(self, frame: pd.DataFrame, name: str, caption: str = "") -> pd.DataFrame:
        """Write ``frame`` as ``tables/<name>.tex`` (booktabs), ``.md`` and ``.csv``.

        The CSV keeps full precision; Markdown and LaTeX show fractions to three decimals.
        """
        folder = self.root / "tables"
        folder.mkdir(parents=True, exist_ok=True)
        frame.to_csv(folder / f"{name}.csv", index=False)
        shown = frame.assign(
            **{
                column: frame[column].map(lambda v: "–" if pd.isna(v) else f"{v:.3f}")
                for column in frame.select_dtypes("float").columns
            }
        )
        markdown = shown.to_markdown(index=False, disable_numparse=True)
        (folder / f"{name}.md").write_text(
            (f"{caption}\n\n" if caption else "") + markdown + "\n", "utf-8"
        )
        styler = frame.style.hide(axis="index").format(escape="latex", precision=3, na_rep="–")
        latex = styler.format_index(escape="latex", axis=1).to_latex(
            hrules=True, caption=caption or None, label=f"tab:{name}", position="t"
        )
        (folder / f"{name}.tex").write_text(latex, "utf-8")
        return frame

    def close(self) -> Path:
        """Write the notebook's numbers fragment."""
        return self.numbers.write(self.root)
