"""Draw precomputed rates with their intervals: :func:`plot_rates`.

Seaborn draws intervals it computes itself; the package's intervals
(``analysis.exploring.rate_table``, ``analysis.inference``) are computed already, so this draws
them: one row per category, the estimate as a point (or a bar) and its interval as a line, in
percent, in the house style, optionally one colour per ``hue`` value and one panel per ``col``
value.
"""

from __future__ import annotations

import io

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from analysis import paths
from analysis.paper.figures import FIGURE_ROWS, percent_axis

_NEEDS = ("estimate", "ci_low", "ci_high")


class RatesFigure(Figure):
    """A figure that a notebook shows as a cell's last value, whatever pyplot's state."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", dpi=self.dpi)
        return buffer.getvalue()


_KINDS = ("point", "bar")


def _values(frame: pd.DataFrame, column: str) -> list:
    series = frame[column]
    if isinstance(series.dtype, pd.CategoricalDtype):
        return [v for v in series.cat.categories if (series == v).any()]
    return list(pd.unique(series))


def _label(metric_values: list) -> str:
    names = [str(m).replace("_", " ") for m in metric_values]
    return ", ".join(names) if names else "rate"


def _one_row_each(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """``frame`` with one row per ``keys`` value: where rows of one condition name from
    several sources share a place and ``condition`` is a key, each is labelled with its
    source (``"source: name"``); any other shared place is a ``ValueError`` (two rows are
    never drawn on top of each other)."""
    shared = frame.duplicated(keys, keep=False)
    if not shared.any():
        return frame
    if "condition" in keys and "source" in frame.columns:
        from analysis.exploring.joined import condition_labels

        labelled = frame.assign(condition=condition_labels(frame).to_numpy())
        if not labelled.duplicated(keys).any():
            return labelled
    apart = [c for c in ("source", "condition") if c in frame.columns and c not in keys]
    hint = (
        f"they differ in {', '.join(apart)}: draw it as hue= or col=, or filter to one"
        if apart
        else "filter to one"
    )
    raise ValueError(
        f"plot_rates: {int(shared.sum())} rows share their {', '.join(keys)} value; {hint}"
    )


def plot_rates(
    frame: pd.DataFrame,
    y: str,
    *,
    hue: str | None = None,
    col: str | None = None,
    kind: str = "point",
    title: str | None = None,
) -> Figure:
    """A figure of precomputed intervals: one row per ``y`` value, one colour per ``hue``
    value (dodged), one panel per ``col`` value.

    An estimate without an interval (NaN bounds) is drawn alone; a row with no estimate is
    left blank. At most ``FIGURE_ROWS`` ``y`` values are drawn. The house style applies to
    this figure alone: the caller's settings and backend are left as they were. The figure
    is not pyplot's: a notebook shows it as a cell's last value (``display(fig)``
    elsewhere); ``fig.savefig`` writes it.

    Parameters
    ----------
    frame : DataFrame
        Rows with ``estimate, ci_low, ci_high`` as fractions, such as :func:`rates` returns.
    y : str
        The column whose values are the figure's rows.
    hue : str, optional
        The column whose values get one colour each, dodged within a row.
    col : str, optional
        The column whose values get one panel each. None: ``metric`` when the frame holds
        several metrics and ``hue`` is not ``metric``.
    kind : {"point", "bar"}
        Points with interval lines, or bars with error lines.
    title : str, optional
        The figure's title.

    Returns
    -------
    Figure
        A matplotlib figure (not registered with pyplot), the rates in percent.

    Raises
    ------
    ValueError
        Rows sharing a place (``y``, ``hue``, ``col``) that are not one condition's name in
        several sources (those are labelled ``"source: name"``), naming how to tell them
        apart; or more than ``FIGURE_ROWS`` ``y`` values (filter first).

    See Also
    --------
    rates : The rows with intervals this draws.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame(
    ...     {
    ...         "condition": ["a (off)", "b (off)"],
    ...         "estimate": [0.8, 0.6],
    ...         "ci_low": [0.7, 0.45],
    ...         "ci_high": [0.88, 0.73],
    ...     }
    ... )
    >>> fig = plot_rates(frame, y="condition")
    >>> [label.get_text() for label in fig.axes[0].get_yticklabels()]
    ['a (off)', 'b (off)']

    The estimates, lower and upper bounds as drawn, in percent:

    >>> [line.get_xdata().tolist() for line in fig.axes[0].lines]
    [[80.0, 60.0], [70.0, 45.0], [88.0, 73.0]]
    """
    missing = [c for c in (*_NEEDS, y, hue, col) if c is not None and c not in frame.columns]
    if missing:
        raise ValueError(f"plot_rates: column(s) {missing} not in the frame")
    if kind not in _KINDS:
        raise ValueError(f"plot_rates: unknown kind {kind!r}; choices: {', '.join(_KINDS)}")
    several_metrics = "metric" in frame.columns and frame["metric"].nunique() > 1
    if col is None and hue != "metric" and several_metrics:
        col = "metric"
    frame = _one_row_each(frame, [c for c in (y, hue, col) if c is not None])
    rows = _values(frame, y)
    if len(rows) > FIGURE_ROWS:
        raise ValueError(f"plot_rates: {len(rows)} {y} values; draw at most {FIGURE_ROWS}")
    panels = _values(frame, col) if col else [None]
    hues = _values(frame, hue) if hue else [None]
    # "default" resets every setting but the backend (matplotlib's style blacklist)
    with plt.style.context(["default", str(paths.FIGURE_STYLE)]):
        return _draw(frame, y, hue, col, kind, title, rows, panels, hues)


def _draw(
    frame: pd.DataFrame,
    y: str,
    hue: str | None,
    col: str | None,
    kind: str,
    title: str | None,
    rows: list,
    panels: list,
    hues: list,
) -> Figure:
    height = 1.0 + 0.28 * len(rows) * max(1, len(hues) / 2)
    fig = RatesFigure(figsize=(3.2 * len(panels) + 1.6, height))
    FigureCanvasAgg(fig)  # a figure of its own: shown when returned, never kept by pyplot
    axes = fig.subplots(1, len(panels), sharey=True, squeeze=False)
    colours = plt.rcParams["axes.prop_cycle"].by_key()
    width = 0.8 / len(hues)
    for ax, panel in zip(axes[0], panels, strict=True):
        part = frame if col is None else frame.loc[frame[col] == panel]
        for i, level in enumerate(hues):
            mine = part if hue is None else part.loc[part[hue] == level]
            position = {v: j for j, v in enumerate(rows)}
            ys = mine[y].map(position).to_numpy(dtype=float) + (i - (len(hues) - 1) / 2) * width
            est = 100 * mine["estimate"].to_numpy(dtype=float)
            low = 100 * mine["ci_low"].to_numpy(dtype=float)
            high = 100 * mine["ci_high"].to_numpy(dtype=float)
            colour = colours["color"][i % len(colours["color"])]
            marker = colours["marker"][i % len(colours["marker"])]
            label = None if hue is None else str(level)
            if kind == "bar":
                ax.barh(ys, np.nan_to_num(est), height=width * 0.9, color=colour, alpha=0.6)
            errors = np.vstack([est - low, high - est])
            ax.errorbar(
                est,
                ys,
                xerr=np.where(np.isnan(errors), 0, errors),
                fmt=marker if kind == "point" else "none",
                color=colour,
                ecolor=colour,
                elinewidth=1.2,
                capsize=2,
                label=label,
            )
        ax.set_yticks(range(len(rows)), [str(v) for v in rows])
        percent_axis(ax, "x")
        metric_values = _values(part, "metric") if "metric" in part.columns else []
        ax.set_xlabel(f"{_label(metric_values)} (95% interval)")
        if panel is not None:
            ax.set_title(str(panel).replace("_", " ") if col == "metric" else f"{col}: {panel}")
    axes[0][0].invert_yaxis()  # the first row on top (the panels share the axis)
    axes[0][0].set_ylabel(y.replace("_", " "))
    if hue is not None:
        axes[0][-1].legend(
            title=hue.replace("_", " "), loc="upper left", bbox_to_anchor=(1.02, 1), fontsize=7
        )
    if title:
        fig.suptitle(title)
    methods = sorted(frame["method"].dropna().astype(str).unique()) if "method" in frame else []
    if methods:
        fig.text(0.01, 0.0, "Intervals: " + "; ".join(methods), fontsize=6, va="top")
    fig.tight_layout()
    return fig
