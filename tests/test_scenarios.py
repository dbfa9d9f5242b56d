"""The scenario table reproduces the paper's corpus counts."""

from __future__ import annotations

import published
import pytest

from analysis.scenarios import infer_pattern


def test_labels(scenarios):
    counts = scenarios["required_gate"].value_counts()
    assert (counts["allowed"], counts["blocked"]) == (
        published.LABELS["proceed"],
        published.LABELS["hold"],
    )
    assert len(scenarios) == published.LABELS["scenarios"]
    assert scenarios["scenario_id"].is_unique


def test_directions_and_patterns(scenarios):
    assert scenarios["direction"].value_counts().to_dict() == published.DIRECTIONS
    assert scenarios["boundary_pattern"].value_counts().to_dict() == published.PATTERNS


def test_direction_pattern_reconciliation(scenarios):
    pairs = scenarios.groupby(["boundary_pattern", "direction"], observed=True).size()
    assert {key: int(n) for key, n in pairs.items()} == published.RECONCILIATION


def test_derived_flags_and_human_labels(scenarios):
    assert int(scenarios["derived_flag"].sum()) == published.DERIVED_FLAG_ROWS
    matches = int((scenarios["human_gate"] == scenarios["required_gate"]).sum())
    assert matches == published.HUMAN_MATCH[0]


def test_types_are_closed_sets(scenarios):
    for column in (
        "required_gate",
        "direction",
        "boundary_pattern",
        "irreversibility",
        "domain",
        "action_effect",
    ):
        assert scenarios[column].dtype == "category", column
    assert set(scenarios["tier_weight"]) == {1, 2, 4}
    apple = scenarios.set_index("scenario_id").loc["apple-card-mirror-credit-extension-tier-b-004"]
    assert apple.is_mirror and "Apple Card" in apple.mirror_incident


@pytest.mark.parametrize(
    ("provenance", "tags", "pattern"),
    [
        ("incident-mirror", ["false_positive_flag"], "incident_mirror"),
        ("real-world-cited", ["tier_b_underrefusal_mirror"], "incident_mirror"),
        ("author-constructed", ["adversarial", "false_positive_flag"], "adversarial_control"),
        ("real-world-cited", ["false_positive_flag"], "detector_conflict"),
        ("benchmark-adapted", ["safe_control"], "clean_control"),
        ("real-world-cited", [], "public_harm_anchor"),
        ("literature + analogous incident", [], "public_harm_anchor"),
        (None, [], "calibration_control"),
    ],
)
def test_pattern_inference_rules(provenance, tags, pattern):
    assert infer_pattern(provenance, tags) == pattern
