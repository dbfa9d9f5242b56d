"""How figures look: the house style, colours, percent axes and the rate heatmap.

Colours come from the Okabe-Ito palette, distinguishable with every common colour-vision
deficiency; every verdict source has a marker as well as a colour, so figures read in
grayscale.
"""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
import pandas as pd
from matplotlib.ticker import PercentFormatter

from analysis import paths

#: Okabe-Ito colours: distinguishable with every common colour-vision deficiency.
PALETTE = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky": "#56B4E9",
    "green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "purple": "#CC79A7",
}
#: Two-level contrasts (floor vs high, anchor vs mirror, mean vs pass5).
PAIR = (PALETTE["blue"], PALETTE["orange"])
#: How each verdict source is drawn and named in legends.
SOURCE_STYLE = {
    "published": {"color": PALETTE["blue"], "marker": "o", "label": "published verdicts"},
    "reference-policy": {
        "color": PALETTE["vermillion"],
        "marker": "s",
        "label": "reference policy (not a published result)",
    },
    "run": {
        "color": PALETTE["green"],
        "marker": "^",
        "label": "sample cell / local run (not a published result)",
    },
}


def use_style() -> None:
    """The house figure style (``figures/steerbench.mplstyle``): colour-blind-safe palette."""
    mpl.rcParams.update(mpl.rcParamsDefault)
    plt.style.use(paths.FIGURE_STYLE)


def row_label(condition: str, source: str) -> str:
    """``condition [reference policy]``: a figure row naming where its verdicts come from."""
    short = {"published": "published", "reference-policy": "reference policy", "run": "run"}
    origin = str(source).partition(": ")[0]
    return f"{condition} [{short.get(origin, origin)}]"


_POOL_COLOURS: dict[str, str] = {}


def source_style(source: str) -> dict:
    """Colour, marker and legend label of a verdict source or pool (``published``,
    ``reference-policy: surface-flag (policy)``, ...): the marker tells the origin, the colour
    the pool."""
    origin, _, condition = str(source).partition(": ")
    base = SOURCE_STYLE.get(origin, {"color": PALETTE["purple"], "marker": "D", "label": origin})
    if not condition:
        return dict(base)
    others = [c for k, c in PALETTE.items() if k not in ("black", "yellow", "blue")]
    colour = _POOL_COLOURS.setdefault(str(source), others[len(_POOL_COLOURS) % len(others)])
    kind = "reference policy" if origin == "reference-policy" else origin
    return {"color": colour, "marker": base["marker"], "label": f"{condition} ({kind})"}


def percent_axis(ax: plt.Axes, axis: str = "x", *, limits: bool = True) -> None:
    """Label ``axis`` of ``ax`` in percent (values already in 0-100), 0-100 with a margin."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(PercentFormatter(100, decimals=0))
    if limits:
        (ax.set_xlim if axis == "x" else ax.set_ylim)(-3, 103)


def rate_heatmap(
    ax: plt.Axes, rates: pd.DataFrame, counts: pd.DataFrame, *, label: str = "modal accuracy"
) -> None:
    """A 0-100 % heatmap annotated with each cell's rate and n; a cell with no data is
    hatched grey and marked "no cells", never drawn as 0."""
    import seaborn as sns

    shown = 100 * rates.astype(float)
    notes = shown.copy().astype(object)
    for row in shown.index:
        for column in shown.columns:
            value, n = shown.loc[row, column], counts.loc[row, column]
            notes.loc[row, column] = "no cells" if pd.isna(value) else f"{value:.0f}%\nn={n:.0f}"
    sns.heatmap(
        shown,
        ax=ax,
        mask=shown.isna(),
        cmap="cividis",
        vmin=0,
        vmax=100,
        annot=notes,
        fmt="",
        annot_kws={"fontsize": 6},
        linewidths=0.5,
        linecolor="white",
        cbar_kws={"label": f"{label} (%)", "format": PercentFormatter(100, decimals=0)},
    )
    ax.set_facecolor("0.93")
    ax.patch.set_hatch("///")
    ax.patch.set_edgecolor("0.75")
    for (i, row), (j, column) in (
        (a, b) for a in enumerate(shown.index) for b in enumerate(shown.columns)
    ):
        if pd.isna(shown.loc[row, column]):
            ax.text(
                j + 0.5, i + 0.5, "no cells", ha="center", va="center", fontsize=6, color="0.35"
            )
