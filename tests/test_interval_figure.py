"""analysis.exploring.interval_figure.plot_rates draws precomputed intervals where they are."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from analysis.exploring.interval_figure import plot_rates


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "domain": ["ops", "legal", "ops", "legal"],
            "metric": ["over_refusal", "over_refusal", "under_refusal", "under_refusal"],
            "estimate": [0.25, np.nan, 0.5, 0.1],
            "ci_low": [0.1, np.nan, 0.3, np.nan],
            "ci_high": [0.4, np.nan, 0.7, np.nan],
            "method": "Wilson score (treats each cell as independent)",
        }
    )


def drawn_intervals(ax) -> list[tuple[float, float, float]]:
    """(y, left, right) of each horizontal interval line drawn on ``ax``."""
    lines = []
    for collection in ax.collections:
        for segment in collection.get_segments():
            if len(segment) == 0:  # a row with no estimate
                continue
            (x0, y0), (x1, _) = segment
            lines.append((round(float(y0), 3), float(x0), float(x1)))
    return sorted(lines)


def test_one_panel_per_metric_with_each_interval_at_its_row():
    fig = plot_rates(frame(), y="domain")
    axes = fig.axes
    assert [ax.get_title() for ax in axes] == ["over refusal", "under refusal"]
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["ops", "legal"]
    over = drawn_intervals(axes[0])
    under = drawn_intervals(axes[1])
    plt.close(fig)
    assert over == [(0.0, pytest.approx(10.0), pytest.approx(40.0))]
    # legal's estimate has no interval: drawn as a point with a zero-length line
    assert under == [(0.0, pytest.approx(30.0), pytest.approx(70.0)), (1.0, 10.0, 10.0)]
    texts = [t.get_text() for t in fig.texts]
    assert "Intervals: Wilson score (treats each cell as independent)" in texts


def test_hue_dodges_and_names_each_level():
    data = frame().loc[lambda f: f["metric"] == "under_refusal"].assign(metric="under_refusal")
    both = pd.concat([data.assign(condition="a"), data.assign(condition="b")])
    fig = plot_rates(both, y="domain", hue="condition", kind="bar")
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    ys = sorted({y for y, _, _ in drawn_intervals(ax)})
    plt.close(fig)
    assert legend == ["a", "b"]
    assert ys == [-0.2, 0.2, 0.8, 1.2]  # each level 0.2 off its row, legal and ops


@pytest.mark.parametrize(
    ("options", "message"),
    [({"y": "planet"}, r"column\(s\) \['planet'\]"), ({"y": "domain", "kind": "pie"}, "pie")],
)
def test_bad_options_are_one_value_error(options, message):
    with pytest.raises(ValueError, match=message):
        plot_rates(frame(), **options)


def test_one_name_from_two_sources_is_drawn_twice_labelled_by_source():
    rows = frame().loc[lambda f: f["metric"] == "over_refusal"].iloc[:1]
    both = pd.concat(
        [
            rows.assign(source="run", condition="surface-flag (policy)"),
            rows.assign(source="reference-policy", condition="surface-flag (policy)"),
            rows.assign(source="run", condition="m (off)"),
        ]
    )
    fig = plot_rates(both, y="condition")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    plt.close(fig)
    assert labels == [
        "run: surface-flag (policy)",
        "reference-policy: surface-flag (policy)",
        "m (off)",
    ]


def test_rows_of_several_conditions_in_one_place_are_refused():
    data = frame()
    both = pd.concat([data.assign(condition="a (off)"), data.assign(condition="b (off)")])
    with pytest.raises(ValueError, match="they differ in condition: draw it as hue= or col="):
        plot_rates(both, y="domain")
    fig = plot_rates(both, y="domain", hue="condition")
    assert len(fig.axes) == 2
    plt.close(fig)
