"""How figures look: the house style, colours, percent axes and the rate heatmap.

Colours come from the Okabe-Ito palette, distinguishable with every common colour-vision
deficiency; every verdict source has a marker as well as a colour, so figures read in
grayscale.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import TypeVar

import matplotlib as mpl
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.layout_engine import TightLayoutEngine
from matplotlib.legend import Legend
from matplotlib.text import Annotation, Text
from matplotlib.ticker import PercentFormatter
from matplotlib.transforms import Bbox

from analysis import paths
from analysis.paper.pdf_fonts import shared_font_subsets

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


#: Each pool's place in the order pools were first drawn in (its colour and hatch).
_POOL_COLOURS: dict[str, int] = {}
#: Bar hatches of the pools drawn after the colours ran out, once per round of colours.
POOL_HATCHES = ("", "////", "....", "xxxx")


def source_style(source: str) -> dict:
    """Colour, marker, bar hatch and legend label of a verdict source or pool
    (``published``, ``reference-policy: surface-flag (policy)``, ...): the marker tells the
    origin, the colour (and, past five pools, the hatch) the pool; a pool is labelled as
    :func:`row_label` names a figure row."""
    origin, _, condition = str(source).partition(": ")
    base = SOURCE_STYLE.get(origin, {"color": PALETTE["purple"], "marker": "D", "label": origin})
    if not condition:
        return {"hatch": "", **base}
    others = [c for k, c in PALETTE.items() if k not in ("black", "yellow", "blue")]
    index = _POOL_COLOURS.setdefault(str(source), len(_POOL_COLOURS))
    return {
        "color": others[index % len(others)],
        "marker": base["marker"],
        "label": row_label(condition, origin),
        # once the colours run out, a bar of a later pool is hatched: no two pools look alike
        "hatch": POOL_HATCHES[(index // len(others)) % len(POOL_HATCHES)],
    }


def percent_axis(ax: plt.Axes, axis: str = "x", *, limits: bool = True) -> None:
    """Label ``axis`` of ``ax`` in percent (values already in 0-100), 0-100 with a margin."""
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(PercentFormatter(100, decimals=0))
    if limits:
        (ax.set_xlim if axis == "x" else ax.set_ylim)(-3, 103)


#: Rows a per-condition figure (heatmap, ranks, reads, splits) draws at most: beyond, the
#: first and the last in the figure's order (every row stays in the table it illustrates),
#: so that a figure's height and drawing time stay bounded on any number of conditions.
FIGURE_ROWS = 40
#: A frame or a series whose rows a figure shows.
Rows = TypeVar("Rows", pd.DataFrame, pd.Series)
#: Cells a rate heatmap annotates at most; beyond, the colours alone carry the rates.
HEATMAP_NOTES = 400


def coinciding_points(x: pd.Series, y: pd.Series) -> pd.DataFrame:
    """``x, y, n``: one row per distinct point of a scatter and ``n``, how many of its rows
    fall there (coordinates compared to 6 decimals, so that one rate computed two ways meets
    itself), most crowded first; a figure draws each once, its area proportional to ``n``.

    Examples
    --------
    >>> coinciding_points(pd.Series([50.0, 50.0, 20.0]), pd.Series([10.0, 10.0, 0.0]))
          x     y  n
    0  50.0  10.0  2
    1  20.0   0.0  1
    """
    points = pd.DataFrame({"x": np.asarray(x, dtype="float64"), "y": np.asarray(y, "float64")})
    return points.round(6).value_counts(sort=True).rename("n").reset_index()


#: The largest marker of a scatter of coinciding points, in areas of a single point's.
LARGEST_SHARED_MARKER = 6


def point_areas(n: pd.Series, single: float) -> pd.Series:
    """Marker areas proportional to ``n`` (points per marker, :func:`coinciding_points`):
    ``single`` for one point, scaled down so that the largest is at most
    :data:`LARGEST_SHARED_MARKER` times ``single``.

    Examples
    --------
    >>> point_areas(pd.Series([1, 2]), 40.0).tolist()
    [40.0, 80.0]
    >>> point_areas(pd.Series([12, 3]), 40.0).tolist()
    [240.0, 60.0]
    """
    return single * n * min(1.0, LARGEST_SHARED_MARKER / max([1, *n.tolist()]))


def scatter_coinciding(
    ax: plt.Axes,
    x: pd.Series,
    y: pd.Series,
    *,
    size: float,
    label: str,
    fontsize: float = 7,
    **style,
) -> pd.DataFrame:
    """Scatter ``x`` against ``y``, the rows at one point drawn as one marker, its area
    growing with their number (:func:`point_areas`, ``size`` for one) and labelled with it;
    the legend shows ``label`` at a single point's size. ``style`` goes to ``ax.scatter``
    (marker, color). Returns the points (:func:`coinciding_points`)."""
    points = coinciding_points(x, y)
    areas = point_areas(points.n, size)
    ax.scatter(points.x, points.y, s=areas, alpha=0.8, edgecolor="white", **style)
    ax.scatter([], [], s=size, alpha=0.8, edgecolor="white", label=label, **style)  # legend
    for p in points[points.n > 1].itertuples():
        ax.annotate(
            str(p.n), (p.x, p.y), xytext=(5, 4), textcoords="offset points", fontsize=fontsize
        )
    return points


def first_and_last(ordered: Rows, limit: int = FIGURE_ROWS) -> tuple[Rows, str]:
    """The rows of ``ordered`` a figure shows, and a note for its title: every row and ``""``
    when there are at most ``limit``; otherwise the ``limit // 2`` first and the rest of
    ``limit`` last, with a note saying so.

    Examples
    --------
    >>> import pandas as pd
    >>> shown, note = first_and_last(pd.DataFrame({"rank": range(1, 8)}), limit=4)
    >>> list(shown["rank"]), note
    ([1, 2, 6, 7], '(the 2 first and 2 last of 7; the table has all)')
    """
    if len(ordered) <= limit:
        return ordered, ""
    half = limit // 2
    shown = pd.concat([ordered.head(half), ordered.tail(limit - half)])
    return shown, f"(the {half} first and {limit - half} last of {len(ordered)}; the table has all)"


def heatmap_rows(rates: pd.DataFrame, counts: pd.DataFrame, limit: int = FIGURE_ROWS) -> list:
    """The rows of ``rates`` a heatmap shows: every row when there are at most ``limit``,
    otherwise the ``limit // 2`` with the highest and as many with the lowest overall rate
    (cells weighted by their counts), highest first.

    Examples
    --------
    >>> import pandas as pd
    >>> rates = pd.DataFrame({"a": [0.9, 0.1, 0.5, 0.7]}, index=["w", "x", "y", "z"])
    >>> heatmap_rows(rates, rates * 0 + 10, limit=2)
    ['w', 'x']
    """
    if len(rates) <= limit:
        return list(rates.index)
    weights = counts.reindex_like(rates).fillna(0).where(rates.notna(), 0)
    overall = (rates.fillna(0) * weights).sum(axis=1) / weights.sum(axis=1).where(lambda n: n > 0)
    shown, _ = first_and_last(overall.sort_values(ascending=False, kind="stable"), limit)
    return list(shown.index)


def rate_heatmap_figure(
    rates: pd.DataFrame, counts: pd.DataFrame, *, label: str = "modal accuracy"
) -> tuple[plt.Figure, plt.Axes]:
    """A figure holding :func:`rate_heatmap` of ``rates``, its height bounded: at most
    :data:`FIGURE_ROWS` rows (see :func:`heatmap_rows`; a line separates the highest from
    the lowest, and a note under the figure says how many rows are shown)."""
    shown = heatmap_rows(rates, counts)
    row_height = 0.45 if len(shown) <= 20 else 0.3
    fig, ax = plt.subplots(figsize=(0.75 * rates.shape[1] + 3, row_height * len(shown) + 2))
    rate_heatmap(ax, rates.loc[shown], counts.reindex_like(rates).loc[shown], label=label)
    if len(shown) < len(rates):
        ax.axhline(len(shown) // 2, color="white", linewidth=3)
        fig.text(
            0.01,
            0.005,
            f"{len(shown)} of {len(rates)} rows shown: the {len(shown) // 2} highest and the "
            f"{len(shown) - len(shown) // 2} lowest overall; the table lists every row.",
            fontsize=7,
            color="0.3",
        )
    return fig, ax


def rate_heatmap(
    ax: plt.Axes, rates: pd.DataFrame, counts: pd.DataFrame, *, label: str = "modal accuracy"
) -> None:
    """A 0-100 % heatmap annotated with each cell's rate and n (when it has at most
    :data:`HEATMAP_NOTES` cells); a cell with no data is hatched grey and marked "no cells"
    (when annotated), never drawn as 0."""
    import seaborn as sns

    shown = 100 * rates.astype(float)
    values = shown.to_numpy()
    n = counts.reindex_like(shown).to_numpy(dtype=float)
    annotate = values.size <= HEATMAP_NOTES
    notes = (
        [
            [
                "no cells" if np.isnan(v) else f"{v:.0f}%\nn={k:.0f}"
                for v, k in zip(*row, strict=True)
            ]
            for row in zip(values, n, strict=True)
        ]
        if annotate
        else False
    )
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
        linewidths=0.5 if annotate else 0,
        linecolor="white",
        cbar_kws={"label": f"{label} (%)", "format": PercentFormatter(100, decimals=0)},
    )
    ax.set_facecolor("0.93")
    ax.patch.set_hatch("///")
    ax.patch.set_edgecolor("0.75")
    if annotate:
        for i, j in zip(*np.nonzero(np.isnan(values)), strict=True):
            ax.text(
                j + 0.5, i + 0.5, "no cells", ha="center", va="center", fontsize=6, color="0.35"
            )


#: How far a point's name sits from it (points), and how far it may be moved away at most,
#: in steps of its own height, before it is placed where it overlaps least.
LABEL_OFFSET = (5.0, 4.0)
LABEL_STEPS = 12


def _text_box(text: Text, renderer) -> Bbox:
    """The extent of ``text``'s own characters (an annotation's line left out), in pixels."""
    if isinstance(text, Annotation):
        text.update_positions(renderer)  # where its offset puts it now
    return Text.get_window_extent(text, renderer)


def marker_boxes(ax: plt.Axes, scale: float) -> list[Bbox]:
    """A box around every scatter marker drawn on ``ax`` (its area in points squared)."""
    boxes = []
    for collection in ax.collections:
        offsets = np.asarray(collection.get_offsets(), dtype="float64").reshape(-1, 2)
        sizes = np.asarray(collection.get_sizes(), dtype="float64")
        if not len(offsets) or not len(sizes):
            continue
        for (x, y), size in zip(offsets, np.resize(sizes, len(offsets)), strict=True):
            if np.isfinite(x) and np.isfinite(y):
                cx, cy = ax.transData.transform((x, y))
                half = np.sqrt(size) / 2 * scale
                boxes.append(Bbox.from_extents(cx - half, cy - half, cx + half, cy + half))
    return boxes


def label_points(
    ax: plt.Axes, labels: dict[tuple[float, float], str], *, fontsize: float = 6
) -> list[Annotation]:
    """Name points of ``ax`` (``labels``: data position -> text) so that no two names
    overlap each other, the texts already on ``ax`` or any scatter marker. Names are placed
    from the highest point down; each is tried just above its point (right of it in the
    left half of the x axis, left of it in the right half), then below it in steps of its
    own height (so that the names of a cluster of points stand in the points' order and
    their lines do not cross), then above, then on the other side, inside the axes; a name
    moved off its point is joined to it by a thin line. Place the names once the figure is
    laid out (its legend drawn): they are measured where they will be."""
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    scale = fig.dpi / 72
    obstacles = [_text_box(text, renderer) for text in ax.texts if text.get_text()]
    obstacles += marker_boxes(ax, scale)
    frame = ax.get_window_extent(renderer)
    middle = sum(ax.get_xlim()) / 2
    placed: list[Annotation] = []
    for (x, y), text in sorted(labels.items(), key=lambda item: (-item[0][1], item[0][0])):
        first = "right" if x > middle else "left"
        note = ax.annotate(
            text,
            (x, y),
            xytext=LABEL_OFFSET,
            textcoords="offset points",
            fontsize=fontsize,
            va="bottom",
            arrowprops={"arrowstyle": "-", "color": "0.55", "linewidth": 0.5, "shrinkB": 3},
        )
        best = None
        for ha in (first, "left" if first == "right" else "right"):
            dx = -LABEL_OFFSET[0] if ha == "right" else LABEL_OFFSET[0]
            note.set_horizontalalignment(ha)
            note.set_position((dx, LABEL_OFFSET[1]))
            height = _text_box(note, renderer).height / scale + 1
            steps = [LABEL_OFFSET[1]]
            steps += [-LABEL_OFFSET[1] - k * height for k in range(1, LABEL_STEPS + 1)]
            steps += [LABEL_OFFSET[1] + k * height for k in range(1, LABEL_STEPS + 1)]
            for dy in steps:
                note.set_position((dx, dy))
                box = _text_box(note, renderer)
                clash = sum(box.overlaps(other) for other in obstacles)
                inside = (
                    frame.x0 - 2 <= box.x0 and box.x1 <= frame.x1 + 2 and box.y0 >= frame.y0 - 2
                )
                score = (clash, not inside, abs(dy))
                if best is None or score < best[0]:
                    best = (score, ha, dx, dy)
                if not clash and inside:
                    break
            if not best[0][0] and not best[0][1]:
                break
        _, ha, dx, dy = best
        note.set_horizontalalignment(ha)
        note.set_position((dx, dy))
        note.arrow_patch.set_visible(dy != LABEL_OFFSET[1])
        obstacles.append(_text_box(note, renderer))
        placed.append(note)
    return placed


def legend_below(ax: plt.Axes, pad: float = 9, **options) -> Legend:
    """A legend centred under ``ax``, ``pad`` points below its x axis (tick labels and
    label, measured), so that the gap is the same whatever the figure's height or the
    labels' rotation; ``options`` go to ``ax.legend`` (by default two columns, 7-point)."""
    fig = ax.figure
    axis_bottom = ax.xaxis.get_tightbbox(fig.canvas.get_renderer()).y0 - pad * fig.dpi / 72
    below = ax.transAxes.inverted().transform((0, axis_bottom))[1]
    options = {"ncols": 2, "fontsize": 7} | options
    return ax.legend(loc="upper center", bbox_to_anchor=(0.5, below), borderaxespad=0, **options)


def tight_layout(fig: plt.Figure) -> None:
    """Adjust ``fig``'s subplot margins as ``fig.tight_layout()`` does, leaving no layout
    engine on it: with one, ``savefig`` draws the figure once more before writing each
    format, about a quarter of the time :func:`save_figure` takes."""
    TightLayoutEngine().execute(fig)


#: zlib level of the PNGs (Pillow's default is 6): level 3 encoded the paper's 20 figures in
#: 0.85 s of CPU instead of 1.55 s, for files 6% larger (2.6 MB instead of 2.4 MB).
PNG_COMPRESS_LEVEL = 3


def save_figure(fig: plt.Figure, stem: Path) -> tuple[Path, Path]:
    """Write ``fig`` as ``stem.pdf`` with the ``savefig.*`` settings (the tight bounding box
    worked out after the figure's layout engine, if any, has laid it out; the font subsets
    lean and made once per process, :func:`analysis.paper.pdf_fonts.shared_font_subsets`), and
    ``stem.png`` rasterised from that PDF at ``savefig.dpi`` (:func:`png_from_pdf`)."""
    pdf, png = stem.with_suffix(".pdf"), stem.with_suffix(".png")
    engine = fig.get_layout_engine()
    if engine is not None:  # lay the figure out before measuring it (savefig does so later)
        engine.execute(fig)
    bbox = None
    if mpl.rcParams["savefig.bbox"] == "tight":
        pad = mpl.rcParams["savefig.pad_inches"]
        bbox = fig.get_tightbbox(fig.canvas.get_renderer()).padded(pad)
    with shared_font_subsets():
        fig.savefig(pdf, metadata={"CreationDate": None}, bbox_inches=bbox)
    dpi = mpl.rcParams["savefig.dpi"]
    png_from_pdf(pdf, png, fig.dpi if dpi == "figure" else float(dpi))
    return pdf, png


def png_from_pdf(pdf: Path, png: Path, dpi: float) -> Path:
    """Rasterise the one-page figure ``pdf`` at ``dpi`` into ``png`` with PDFium (pypdfium2),
    on white, compressed at :data:`PNG_COMPRESS_LEVEL`: the PNG shows what the PDF holds,
    and drawing it takes PDFium a tenth of the time matplotlib's Agg takes to draw the
    figure again."""
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(str(pdf))
    try:
        image = document[0].render(scale=dpi / 72).to_pil()
    finally:
        document.close()
    image.save(png, compress_level=PNG_COMPRESS_LEVEL)
    return png


def shown_width(fig: plt.Figure, png: bytes) -> int:
    """The width in screen pixels at which the PNG ``save_figure`` wrote for ``fig`` shows
    as large as ``fig`` itself (the PNG is drawn at ``savefig.dpi``, the screen at
    ``figure.dpi``)."""
    pixels = struct.unpack(">I", png[16:20])[0]  # the PNG header's width field
    dpi = mpl.rcParams["savefig.dpi"]
    return round(pixels * fig.dpi / (fig.dpi if dpi == "figure" else dpi))
