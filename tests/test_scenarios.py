"""The scenario table reproduces the paper's corpus counts."""

from __future__ import annotations

import published
import pytest

from analysis.corpus.scenarios import infer_pattern


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


def _scenario_copy(tmp_path):
    import shutil

    from analysis import paths

    shutil.copytree(paths.scenarios_dir(), tmp_path / "scenarios")
    shutil.copytree(paths.results_dir(), tmp_path / "results")
    return tmp_path / "scenarios", tmp_path / "results"


MIRROR = "apple-card-mirror-credit-extension-tier-b-004"


def test_a_pattern_the_release_defines_beyond_the_papers_eight_gets_its_own_category(tmp_path):
    import json

    from analysis.corpus.scenarios import load_scenarios

    folder, results = _scenario_copy(tmp_path)
    sidecar = folder / "_SCENARIO_PATTERNS.json"
    document = json.loads(sidecar.read_text())
    document["scenarios"][MIRROR]["boundary_pattern"] = "novel_boundary"
    sidecar.write_text(json.dumps(document))
    manifest = folder / "MANIFEST.md"
    rows = manifest.read_text().splitlines()
    rows = [
        r.replace(" | incident_mirror | ", " | novel_boundary | ") if MIRROR in r else r
        for r in rows
    ]
    manifest.write_text("\n".join(rows) + "\n")
    table = load_scenarios(folder, results)
    assert list(table["boundary_pattern"].cat.categories)[-1] == "novel_boundary"
    assert table["boundary_pattern"].notna().all()
    assert table.set_index("scenario_id").loc[MIRROR, "boundary_pattern"] == "novel_boundary"


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda labels: labels.pop(MIRROR), f"no label for {MIRROR}"),
        (
            lambda labels: labels.update({"not-a-scenario": {"gate_state": "allowed"}}),
            "a label for not-a-scenario, not in the scenario set",
        ),
        (
            lambda labels: labels[MIRROR].update({"gate_state": "hold"}),
            f"{MIRROR}: field gate_state: unknown value 'hold' (known: allowed, blocked)",
        ),
    ],
)
def test_gold_labels_must_label_every_scenario_with_a_known_gate(tmp_path, edit, said):
    import json

    from analysis.corpus.scenarios import ScenarioError, load_scenarios

    folder, results = _scenario_copy(tmp_path)
    gold_path = results / "human-validation" / "gold-labels.json"
    gold = json.loads(gold_path.read_text())
    edit(gold["labels"])
    gold_path.write_text(json.dumps(gold))
    with pytest.raises(ScenarioError) as refused:
        load_scenarios(folder, results)
    assert str(refused.value) == f"{gold_path}: {said}"


def test_a_release_without_gold_labels_gives_no_human_gate_and_a_pinned_one_is_refused(
    tmp_path,
):
    import shutil

    from analysis.corpus.scenarios import has_human_labels, load_scenarios
    from analysis.files.parts import MissingPartError

    folder, results = _scenario_copy(tmp_path)
    assert has_human_labels(load_scenarios(folder, results))
    gold = results / "human-validation" / "gold-labels.json"
    gold.unlink()  # still pinned by the release's checksums.txt
    with pytest.raises(MissingPartError, match=f"^{gold}: missing, though checksums.txt pins"):
        load_scenarios(folder, results)
    shutil.rmtree(results / "human-validation")
    listing = results / "checksums.txt"
    lines = listing.read_text().splitlines()
    listing.write_text("\n".join(x for x in lines if "human-validation" not in x) + "\n")
    table = load_scenarios(folder, results)
    assert table["human_gate"].isna().all() and not has_human_labels(table)
    assert len(table) == len(load_scenarios())
