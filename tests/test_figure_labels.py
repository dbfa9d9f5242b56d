"""Names at points never overlap, and each appears once per panel, even for two runs of one
model at nearly one point and a run named like a reference policy at the policy's point."""

from __future__ import annotations

import itertools

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from matplotlib.text import Annotation, Text

from analysis.paper.figures import label_points, marker_boxes, use_style
from analysis.paper.sections.mirrors import mirror_figure
from analysis.scoring.breakdowns import ANCHOR, MIRROR


def scatter(rows: list[tuple[str, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        rows, columns=["source", "condition", f"{ANCHOR}_accuracy", f"{MIRROR}_accuracy"]
    )


def text_boxes(fig: plt.Figure) -> list[tuple[str, object]]:
    """Every visible text drawn in ``fig``'s axes (titles, ticks and legend aside), with its
    extent in pixels."""
    renderer = fig.canvas.get_renderer()
    boxes = []
    for ax in fig.axes:
        for text in ax.texts:
            if isinstance(text, Annotation):
                text.update_positions(renderer)
            if text.get_visible() and text.get_text():
                boxes.append((text.get_text(), Text.get_window_extent(text, renderer)))
    return boxes


def names_in(fig: plt.Figure) -> list[str]:
    """Every line of every text in the axes and their legends."""
    lines = []
    for ax in fig.axes:
        texts = list(ax.texts)
        if ax.get_legend() is not None:
            texts += ax.get_legend().get_texts()
        for text in texts:
            lines += text.get_text().split("\n")
    return lines


@pytest.fixture
def two_runs_of_one_model() -> plt.Figure:
    use_style()
    fig = mirror_figure(
        scatter(
            [
                ("published", "a (off)", 0.90, 0.60),
                ("published", "b (off)", 0.90, 0.60),
                ("reference-policy: surface-flag (policy)", "surface-flag (policy)", 0.96, 0.54),
                ("run: surface-flag (policy)", "surface-flag (policy)", 0.96, 0.54),
                ("run: my-gate (high)", "my-gate (high)", 0.95, 0.25),
                ("run: my-gate (off)", "my-gate (off)", 0.95, 0.26),
                ("run: my-gate (low)", "my-gate (low)", 0.94, 0.27),
                ("reference-policy: always-hold (policy)", "always-hold (policy)", 1.0, 0.0),
                ("run: sample (off)", "sample (off)", float("nan"), float("nan")),
            ]
        ),
        ["reference-policy: surface-flag (policy)", "your run: my-gate (high)"],
    )
    yield fig
    plt.close(fig)


def test_no_two_labels_of_the_mirror_figure_overlap(two_runs_of_one_model):
    boxes = text_boxes(two_runs_of_one_model)
    assert len(boxes) >= 5  # the named points and the published count
    for (first, a), (second, b) in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), f"{first!r} overlaps {second!r}"
    ax = two_runs_of_one_model.axes[0]
    markers = marker_boxes(ax, two_runs_of_one_model.dpi / 72)
    for name, box in boxes:
        if name != "2":  # a shared marker's count sits on its corner
            assert not any(box.overlaps(marker) for marker in markers), name


def test_each_name_appears_once_per_panel(two_runs_of_one_model):
    lines = names_in(two_runs_of_one_model)
    for name, times in (
        ("my-gate (high)", 1),
        ("my-gate (off)", 1),
        ("my-gate (low)", 1),
        ("surface-flag (policy)", 2),  # a reference policy and a run: each with its source
        ("sample (off)", 1),  # no point: named in the legend
    ):
        naming = [line for line in lines if name in line]
        assert len(naming) == times and len(set(naming)) == times, (name, naming)
    assert "surface-flag (policy) [reference policy]" in lines
    assert "surface-flag (policy) [run]" in lines


def test_label_points_keeps_many_names_at_one_spot_apart():
    use_style()
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_xlim(0, 100)
    ax.set_ylim(0, 100)
    points = {(50.0 + i * 0.2, 50.0 + i * 0.2): f"run-{i} (off)" for i in range(8)}
    ax.scatter([x for x, _ in points], [y for _, y in points])
    label_points(ax, points)
    boxes = text_boxes(fig)
    assert len(boxes) == 8
    for (first, a), (second, b) in itertools.combinations(boxes, 2):
        assert not a.overlaps(b), f"{first!r} overlaps {second!r}"
    plt.close(fig)


def test_no_two_pools_are_drawn_alike():
    from analysis.paper.figures import source_style

    pools = [f"reference-policy: policy-{i} (policy)" for i in range(3)]
    pools += [f"run: my-gate-{i} (off)" for i in range(9)]
    looks = [
        (style["color"], style["marker"], style["hatch"]) for style in map(source_style, pools)
    ]
    bars = [(colour, hatch) for colour, _, hatch in looks]  # a bar has no marker
    assert len(set(bars)) == len(pools)
