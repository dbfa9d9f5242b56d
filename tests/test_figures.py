"""The rate heatmap stays readable and bounded in size however many conditions it shows."""

from __future__ import annotations

import time

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from analysis.paper.figures import FIGURE_ROWS, rate_heatmap_figure


def rate_table(n_rows: int, n_columns: int = 6, seed: int = 3):
    rng = np.random.default_rng(seed)
    index = [f"model-{i:03d} (off) [published]" for i in range(n_rows)]
    columns = [f"domain {j}" for j in range(n_columns)]
    counts = pd.DataFrame(rng.integers(1, 20, (n_rows, n_columns)), index, columns)
    rates = pd.DataFrame(rng.random((n_rows, n_columns)), index, columns).round(2)
    rates.iloc[0, 0] = np.nan  # a cell with no data
    return rates, counts


def test_a_small_heatmap_shows_and_annotates_every_cell():
    rates, counts = rate_table(4)
    fig, ax = rate_heatmap_figure(rates, counts)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    texts = [t.get_text() for t in ax.texts]
    plt.close(fig)
    assert labels == list(rates.index)
    assert "no cells" in texts and f"{100 * rates.iloc[1, 2]:.0f}%\nn={counts.iloc[1, 2]}" in texts


def test_a_large_heatmap_shows_the_highest_and_lowest_rows_in_bounded_height():
    rates, counts = rate_table(224)
    overall = {}  # plain loop: count-weighted rate of each row over its cells with data
    for row in rates.index:
        pairs = [(r, n) for r, n in zip(rates.loc[row], counts.loc[row], strict=True) if r == r]
        overall[row] = sum(r * n for r, n in pairs) / sum(n for _, n in pairs)
    ranked = sorted(overall, key=lambda row: -overall[row])
    half = FIGURE_ROWS // 2
    started = time.perf_counter()
    fig, ax = rate_heatmap_figure(rates, counts)
    fig.canvas.draw()
    seconds = time.perf_counter() - started
    labels = [t.get_text() for t in ax.get_yticklabels()]
    height = fig.get_size_inches()[1]
    notes = [t.get_text() for t in fig.texts]
    plt.close(fig)
    assert labels == ranked[:half] + ranked[-half:]
    assert height <= 0.3 * FIGURE_ROWS + 2
    assert any(f"{FIGURE_ROWS} of 224 rows shown" in note for note in notes)
    assert seconds < 20  # bounded: no per-cell text for thousands of cells


def two_panel_figure(layout: str) -> plt.Figure:
    """Two panels, titled, with a legend, laid out by ``layout``: ``none``, ``tight``
    (:func:`analysis.paper.figures.tight_layout`) or ``constrained`` (a legend below the axes)."""
    from analysis.paper.figures import tight_layout

    fig, axes = plt.subplots(1, 2, layout="constrained" if layout == "constrained" else None)
    for ax in axes:
        ax.plot([0, 1], [0, 1], label="a line with a long name")
        ax.set(title="A title", xlabel="x")
    axes[0].set_yticks([0, 1], ["a long tick label", "b"])
    if layout == "constrained":
        fig.legend(*axes[1].get_legend_handles_labels(), loc="outside lower center")
    else:
        axes[1].legend()
    fig.suptitle("A figure title")
    if layout == "tight":
        tight_layout(fig)
    return fig


@pytest.mark.parametrize("layout", ["none", "tight", "constrained"])
def test_save_figure_writes_what_savefig_writes(tmp_path, layout):
    import struct

    from analysis.paper.figures import save_figure, shown_width, use_style

    use_style()
    plain = two_panel_figure(layout)
    plain.savefig(tmp_path / "plain.png")  # the savefig.* settings: tight, 200 dpi
    plt.close(plain)
    fig = two_panel_figure(layout)
    assert fig.get_layout_engine() is None or layout == "constrained"
    pdf, png = save_figure(fig, tmp_path / "saved")
    plt.close(fig)
    assert pdf.read_bytes().startswith(b"%PDF") and b"/FontFile2" in pdf.read_bytes()
    plain = struct.unpack(">II", (tmp_path / "plain.png").read_bytes()[16:24])
    saved = struct.unpack(">II", png.read_bytes()[16:24])
    assert all(abs(a - b) <= 0.02 * a for a, b in zip(plain, saved, strict=True))
    assert shown_width(fig, png.read_bytes()) == round(saved[0] * 110 / 200)
    # zlib's header in the first IDAT chunk: compression levels 2-5 say "fast" (1), the
    # default 6 says "default" (2)
    data = png.read_bytes()
    start = data.index(b"IDAT") + 4
    assert data[start + 1] >> 6 == 1


def test_a_pool_is_named_in_legends_as_its_figure_rows_are():
    from analysis.paper.figures import row_label, source_style

    policy = source_style("reference-policy: always-hold (policy)")
    run = source_style("run: gpt-5.4-mini (off)")
    assert policy["label"] == "always-hold (policy) [reference policy]"
    assert run["label"] == row_label("gpt-5.4-mini (off)", "run") == "gpt-5.4-mini (off) [run]"
    assert policy["marker"] != run["marker"]


def test_published_conditions_at_one_point_share_a_larger_labelled_marker():
    from analysis.paper.sections.mirrors import mirror_figure
    from analysis.scoring.breakdowns import ANCHOR, MIRROR

    scatter = pd.DataFrame(
        {
            "source": ["published"] * 3
            + ["reference-policy: always-hold (policy)", "run: m (off)"],
            "condition": ["a (off)", "b (off)", "c (off)", "always-hold (policy)", "m (off)"],
            f"{ANCHOR}_accuracy": [0.5, 0.5, 0.9, 1.0, None],
            f"{MIRROR}_accuracy": [0.25, 0.25, 0.75, 0.0, None],
        }
    )
    fig = mirror_figure(scatter, ["published"])
    ax = fig.axes[0]
    published, legend_marker = ax.collections[:2]
    notes = sorted(text.get_text() for text in ax.texts)
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    plt.close(fig)
    assert published.get_offsets().tolist() == [[50.0, 25.0], [90.0, 75.0]]
    assert published.get_sizes().tolist() == [80.0, 40.0]
    assert legend_marker.get_label() == "published verdicts" in legend
    assert legend_marker.get_sizes().tolist() == [40.0]
    assert notes == ["2", "always-hold (policy) [reference policy]"]
    assert any(
        line.endswith("no point (no scored anchor or mirror): m (off) [run]") for line in legend
    )


def test_other_conditions_at_one_point_share_one_label():
    from analysis.paper.sections.mirrors import mirror_figure
    from analysis.scoring.breakdowns import ANCHOR, MIRROR

    scatter = pd.DataFrame(
        {
            "source": ["run: local-a (off)", "run: local-b (off)", "run: m1 (off)"],
            "condition": ["local-a (off)", "local-b (off)", "m1 (off)"],
            f"{ANCHOR}_accuracy": [1.0, 1.0, 0.5],
            f"{MIRROR}_accuracy": [1.0, 1.0, 0.25],
        }
    )
    fig = mirror_figure(scatter, ["run"])
    notes = sorted(text.get_text() for text in fig.axes[0].texts)
    plt.close(fig)
    assert notes == ["local-a (off) [run]\nlocal-b (off) [run]", "m1 (off) [run]"]


def test_published_conditions_without_a_point_are_counted_in_the_legend():
    from analysis.paper.sections.mirrors import mirror_figure
    from analysis.scoring.breakdowns import ANCHOR, MIRROR

    scatter = pd.DataFrame(
        {
            "source": ["published"] * 3,
            "condition": ["a (off)", "b (off)", "c (high)"],
            f"{ANCHOR}_accuracy": [0.5, 0.9, 1.0],
            f"{MIRROR}_accuracy": [0.25, 0.75, None],  # c: every mirror cell filtered
        }
    )
    fig = mirror_figure(scatter, ["published"])
    legend = [text.get_text() for text in fig.axes[0].get_legend().get_texts()]
    plt.close(fig)
    expected = "published verdicts (1 of 3 conditions without a point: no scored anchor or mirror)"
    assert expected in legend


@pytest.mark.parametrize("height", [2.5, 12.0])
def test_a_legend_below_the_axes_keeps_one_gap_whatever_the_height(height):
    from analysis.paper.figures import legend_below, use_style

    use_style()
    fig, ax = plt.subplots(figsize=(5, height))
    ax.plot([0, 1], [0, 1], label="a line")
    ax.set_xticks([0, 1], ["a long tick label", "b"], rotation=45)
    ax.set_xlabel("x")
    legend = legend_below(ax, pad=6)
    renderer = fig.canvas.get_renderer()
    axis_bottom = ax.xaxis.get_tightbbox(renderer).y0
    legend_top = legend.get_window_extent(renderer).y1
    plt.close(fig)
    assert abs((axis_bottom - legend_top) - 6 * fig.dpi / 72) < 1  # pixels


def test_the_png_is_the_pdf_rasterised(tmp_path):
    """The PNG shows what the PDF holds, drawn at savefig.dpi: a black square on white
    comes out black in the middle and white at the corners, the page's size in pixels."""
    from PIL import Image

    from analysis.paper.figures import png_from_pdf

    with matplotlib.rc_context({"savefig.bbox": "standard"}):  # the whole 2 x 1 inch page
        fig = plt.figure(figsize=(2, 1))
        fig.add_artist(plt.Rectangle((0.25, 0.25), 0.5, 0.5, color="black"))
        fig.savefig(tmp_path / "square.pdf")
        plt.close(fig)
    png = png_from_pdf(tmp_path / "square.pdf", tmp_path / "square.png", dpi=100)
    image = Image.open(png).convert("L")
    assert abs(image.width - 200) <= 1 and abs(image.height - 100) <= 1
    assert image.getpixel((image.width // 2, image.height // 2)) < 10
    assert image.getpixel((2, 2)) > 245
