"""The notebook sections' package functions: opening a section, and each section's numbers,
tables and figures, on hand-worked cells and on the imported release (expected values by a
plain loop or by hand)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import pytest
from factories import HAND_CELLS, LABEL_A, LABEL_B, A, B, always_cells, hand_cells

from analysis import paths
from analysis.paper.figures import FIGURE_ROWS
from analysis.paper.provenance import NumberBook, numbers_table, ratio_number, slug, value_number
from analysis.paper.sections import READS, open_section, stability
from analysis.paper.sections.corpus import reconciliation_numbers
from analysis.paper.sections.inference_pass_k import PASS_K_LINES, pass_k_figure
from analysis.paper.sections.inference_per_trial import by_source
from analysis.paper.sections.inference_ranks import rank_figure
from analysis.paper.sections.inference_reasoning import unpaired_contrasts, unpaired_numbers
from analysis.paper.sections.labels import (
    AgreementReportError,
    disagreements,
    human_key_numbers,
    reported_agreement,
)
from analysis.paper.sections.leaderboard import leader_numbers, leaderboard_figure
from analysis.paper.sections.mirrors import incident_mirror, mirror_numbers
from analysis.paper.sections.reasoning import reasoning_figure, reasoning_table
from analysis.paper.sections.sensitivity import sensitivity_numbers
from analysis.paper.sections.stability import split_figure, split_table, unanimous_numbers
from analysis.scoring.breakdowns import pool_cells
from analysis.scoring.composition import reconciliation
from analysis.scoring.metrics import degenerate_gates, reasoning_contrasts
from analysis.scoring.ranking import rank_conditions
from analysis.scoring.reads import split_distribution


def recorded(table: pd.DataFrame) -> dict[str, dict]:
    book = NumberBook("test", [])
    book.record(table)
    return book.numbers


# --- recording a numbers table ------------------------------------------------------------


def test_a_numbers_table_records_ratios_values_and_labels() -> None:
    numbers = recorded(
        numbers_table(
            [
                ratio_number("a.rate", 1, 3, "one in three"),
                ratio_number("a.ratio", 7, 2, "seven per two", scale=1, digits=2, unit=": 1"),
                value_number("a.count", 12, "twelve things", unit="things", digits=None),
                value_number("a.exact", Fraction(1, 8), "an eighth", unit="ratio", digits=3),
                value_number("a.label", "m (off)", "a condition", unit="condition"),
            ]
        )
    )
    assert numbers["a.rate"]["value"] == 33.3
    assert (numbers["a.rate"]["numerator"], numbers["a.rate"]["denominator"]) == (1, 3)
    assert numbers["a.ratio"]["value"] == 3.5 and numbers["a.ratio"]["unit"] == ": 1"
    assert numbers["a.count"]["value"] == 12 and "numerator" not in numbers["a.count"]
    assert numbers["a.exact"]["value"] == 0.125  # 0.125 rounds half up to 0.125 at 3 digits
    assert numbers["a.label"]["value"] == "m (off)"


def test_a_numbers_table_keeps_the_books_refusals() -> None:
    with pytest.raises(ValueError, match="recorded twice"):
        recorded(numbers_table([value_number("x", 1, "one", unit="u")] * 2))
    with pytest.raises(ValueError, match="not a slug path"):
        recorded(numbers_table([value_number("X Y", 1, "one", unit="u")]))


# --- opening a section ----------------------------------------------------------------------


def test_every_notebook_is_a_known_section() -> None:
    assert sorted(READS) == sorted(p.stem for p in paths.NOTEBOOKS_DIR.glob("*.ipynb"))


def test_an_unknown_section_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown section '99-x'"):
        open_section("99-x")


def test_opening_reads_what_the_section_declares(tmp_path: Path) -> None:
    section = open_section("09-labels", output_dir=tmp_path)
    assert section.conditions is None and section.cells is None
    results = section.locations.results
    assert results.name == paths.release()
    assert results / "human-validation" / "gold-labels.json" in section.inputs
    assert section.locations.scenarios in section.inputs
    section.close()
    assert (tmp_path / "numbers" / "09-labels.json").is_file()
    assert (tmp_path / "catalogue" / "09-labels.json").is_file()


def test_opening_per_trial_verdicts_pools_them(tmp_path: Path, capsys) -> None:
    reference = paths.reference_runs_dir() / "trials.csv"
    if not reference.is_file():
        pytest.skip("no committed reference runs in this checkout")
    section = open_section("05-patterns", output_dir=tmp_path, verdict_paths=str(reference))
    assert "Pools" in capsys.readouterr().out
    expected = sorted(
        {
            f"{s}: {c}"
            for s, c in zip(section.trials["source"], section.trials["condition"], strict=True)
        }
    )
    assert section.sources == expected
    assert reference in section.inputs


def test_a_section_reads_the_data_folder_it_is_given(tmp_path: Path) -> None:
    """A copy of the data folder without the sample run: the section opened on it reads
    the copy's scenarios, leaderboard and runs, and finds no sample run."""
    import shutil

    data = tmp_path / "data"
    shutil.copytree(paths.data_dir() / "scenarios", data / "scenarios")
    for folder in (paths.release(), paths.REFERENCE_RUNS_NAME):
        shutil.copytree(paths.data_dir() / "runs" / folder, data / "runs" / folder)
    shutil.copy(paths.data_dir() / ".imported", data / ".imported")
    section = open_section("07-stability", output_dir=tmp_path / "out", data_dir=data)
    default = open_section("07-stability", output_dir=tmp_path / "default")
    assert section.inputs and all(data in p.parents for p in section.inputs)
    gone = set(default.sources) - set(section.sources)
    assert gone and all(pool.startswith(("run: ", "your run: ")) for pool in gone)
    assert len(section.conditions) == len(default.conditions)


def test_conditions_whose_names_would_share_a_number_name_are_refused(tmp_path: Path) -> None:
    import shutil

    from analysis.paper.sections.loading import write_checked_inputs

    data = tmp_path / "data"
    shutil.copytree(paths.data_dir() / "scenarios", data / "scenarios")
    shutil.copytree(paths.data_dir() / "runs" / paths.release(), data / "runs" / paths.release())
    shutil.copy(paths.data_dir() / ".imported", data / ".imported")
    board_path = data / "runs" / paths.release() / "leaderboard.json"
    board = json.loads(board_path.read_text())
    first, other = board["rows"][0], board["rows"][1]
    was = f"{other['model']} ({other['reasoning']})"
    other["model"], other["reasoning"] = first["model"].replace(".", "-"), first["reasoning"]
    board_path.write_text(json.dumps(board))
    named = f"{other['model']} ({other['reasoning']})"
    manifest_path = board_path.with_name("release-manifest.json")
    manifest = json.loads(manifest_path.read_text())
    manifest["published_rows"] = [named if r == was else r for r in manifest["published_rows"]]
    manifest_path.write_text(json.dumps(manifest))
    with pytest.raises(ValueError, match=f"{board_path}: conditions .* both named") as refused:
        write_checked_inputs(tmp_path / "checked.pkl", data)
    assert named in str(refused.value)
    assert f"{first['model']} ({first['reasoning']})" in str(refused.value)
    assert not (tmp_path / "checked.pkl").exists()


def test_runs_whose_names_would_share_a_number_name_are_refused(tmp_path: Path) -> None:
    import shutil

    from factories import trials_frame

    from analysis.paper.sections.loading import write_checked_inputs

    data = tmp_path / "data"
    shutil.copytree(paths.data_dir() / "scenarios", data / "scenarios")
    shutil.copytree(paths.data_dir() / "runs" / paths.release(), data / "runs" / paths.release())
    shutil.copy(paths.data_dir() / ".imported", data / ".imported")
    scenario = "bulk-email-001"
    local = data / "runs" / "local"
    local.mkdir()
    for model in ("acme-1.5", "acme-1-5"):
        run = trials_frame({(scenario, (model, "off")): [A] * 5})
        run.drop(columns=["condition"]).to_csv(local / f"{model}.csv", index=False)
    with pytest.raises(ValueError, match=r"\(run verdicts\): conditions 'acme-1-5 \(off\)' and"):
        write_checked_inputs(tmp_path / "checked.pkl", data)


def test_reference_policies_made_for_another_corpus_are_refused_with_the_remedy(
    tmp_path: Path,
) -> None:
    import shutil

    from analysis.paper.sections.loading import write_checked_inputs

    data = tmp_path / "data"
    shutil.copytree(paths.data_dir() / "scenarios", data / "scenarios")
    for folder in (paths.release(), paths.REFERENCE_RUNS_NAME):
        shutil.copytree(paths.data_dir() / "runs" / folder, data / "runs" / folder)
    shutil.copy(paths.data_dir() / ".imported", data / ".imported")
    table = data / "runs" / paths.REFERENCE_RUNS_NAME / "trials.csv"
    trials = pd.read_csv(table)
    dropped = sorted(trials["scenario_id"].unique())[0]  # as if made before it was added
    trials[trials["scenario_id"] != dropped].to_csv(table, index=False)
    with pytest.raises(ValueError, match="make reference-runs") as refused:
        write_checked_inputs(tmp_path / "checked.pkl", data)
    message = str(refused.value)
    assert message.startswith(f"{data / 'runs' / paths.REFERENCE_RUNS_NAME}: ")
    assert f"covers 105 of the 106 scenarios of this release (none of {dropped})" in message
    extra = trials.iloc[:5].assign(scenario_id="made-for-another-corpus-001")
    pd.concat([trials, extra]).to_csv(table, index=False)
    with pytest.raises(ValueError, match="make reference-runs") as refused:
        write_checked_inputs(tmp_path / "checked.pkl", data)
    assert str(refused.value).startswith(
        f"{data / 'runs' / paths.REFERENCE_RUNS_NAME}: the reference policies hold 1 scenario(s) "
        "this release does not (made-for-another-corpus-001)"
    )


def test_the_input_check_reads_the_agreement_reports(tmp_path: Path) -> None:
    import shutil

    from analysis.paper.sections.loading import write_checked_inputs

    data = tmp_path / "data"
    shutil.copytree(paths.data_dir() / "scenarios", data / "scenarios")
    shutil.copytree(paths.data_dir() / "runs" / paths.release(), data / "runs" / paths.release())
    shutil.copytree(paths.reference_runs_dir(), paths.reference_runs_dir(data))
    shutil.copy(paths.data_dir() / ".imported", data / ".imported")
    report = data / "runs" / paths.release() / "human-validation" / "agreement-report.json"
    human = json.loads(report.read_text())
    human["inter_annotator_agreement"]["gate_state"]["value"] = None
    report.write_text(json.dumps(human))
    with pytest.raises(AgreementReportError, match=f"{report}: field inter_annotator_agreement"):
        write_checked_inputs(tmp_path / "checked.pkl", data)
    assert not (tmp_path / "checked.pkl").exists()


def test_checked_inputs_give_a_section_the_frames_it_would_load(tmp_path: Path) -> None:
    from analysis.paper.sections.loading import write_checked_inputs

    checked = write_checked_inputs(tmp_path / "checked.pkl")
    given = open_section("07-stability", output_dir=tmp_path / "a", checked_inputs=checked)
    loaded = open_section("07-stability", output_dir=tmp_path / "b")
    for frame in ("scenarios", "conditions", "trials", "cells"):
        pd.testing.assert_frame_equal(getattr(given, frame), getattr(loaded, frame))
    assert given.inputs == loaded.inputs
    # a section that reads neither conditions nor verdicts gets neither
    labels = open_section("09-labels", output_dir=tmp_path / "c", checked_inputs=checked)
    assert labels.conditions is None and labels.cells is None
    with pytest.raises(ValueError, match="not both"):
        open_section("05-patterns", checked_inputs=checked, verdict_paths=str(tmp_path))
    with pytest.raises(ValueError, match="checked inputs of"):
        open_section("05-patterns", data_dir=tmp_path, checked_inputs=checked)


# --- 01, 02, 04: corpus, leaderboard, reasoning ------------------------------------------------


def test_reconciliation_numbers_are_the_nonzero_pattern_direction_counts() -> None:
    scenarios = pd.DataFrame(
        {
            "boundary_pattern": ["p", "p", "q", "q", "q"],
            "direction": ["over", "over", "under", "under", "calibration"],
        }
    )
    numbers = recorded(reconciliation_numbers(reconciliation(scenarios)))
    expected = {}
    for pattern, direction in zip(scenarios.boundary_pattern, scenarios.direction, strict=True):
        key = f"corpus.reconciliation.{pattern}.{direction}"
        expected[key] = expected.get(key, 0) + 1
    assert {name: entry["value"] for name, entry in numbers.items()} == expected


def test_leaders_and_conditions_beating_both_gates(scenarios, conditions) -> None:
    ranked = rank_conditions(conditions)
    numbers = recorded(leader_numbers(ranked, degenerate_gates(scenarios)))
    best_gate = max(
        Fraction(int((scenarios["required_gate"] == gate).sum()), len(scenarios)) for gate in (A, B)
    )  # a degenerate gate is right on every scenario of its label
    rates = [
        Fraction(int(k), int(n))
        for k, n in zip(ranked.n_modal_correct, ranked.n_cells, strict=True)
    ]
    assert numbers["leaderboard.conditions_beating_both_gates"]["value"] == sum(
        rate > best_gate for rate in rates
    )
    best = rates.index(max(rates))
    assert numbers["leaderboard.modal_leader"]["value"] == ranked.iloc[best]["label"]
    assert numbers["leaderboard.leader"]["value"] == ranked.iloc[0]["label"]


def test_the_modal_leader_and_the_gates_compare_rates_over_each_conditions_cells(
    scenarios,
) -> None:
    gates = degenerate_gates(scenarios)  # 56 of 106 cells is the better gate: 52.8%
    counts = {  # label: (modal correct, scored cells); filtered cells leave the denominator
        "wide (off)": (103, 106),  # 97.2%: the most cells right
        "narrow (off)": (100, 100),  # 100%: the best rate
        "half (off)": (54, 56),  # 96.4%, more than the gates although fewer cells right
        "weak (off)": (55, 106),  # 51.9%: beats neither gate
    }
    frame = pd.concat([gates.iloc[[0]]] * len(counts), ignore_index=True)
    frame["label"] = list(counts)
    frame["n_modal_correct"] = [k for k, _ in counts.values()]
    frame["n_cells"] = [n for _, n in counts.values()]
    numbers = recorded(leader_numbers(rank_conditions(frame), gates))
    assert numbers["leaderboard.modal_leader"]["value"] == "narrow (off)"
    leader = numbers["leaderboard.modal_leader.modal_accuracy"]
    assert (leader["numerator"], leader["denominator"]) == (100, 100)
    assert numbers["leaderboard.conditions_beating_both_gates"]["value"] == 3


def test_leaderboard_figure_has_one_row_per_condition(scenarios, conditions) -> None:
    fig = leaderboard_figure(rank_conditions(conditions), degenerate_gates(scenarios))
    assert len(fig.axes[0].get_yticks()) == len(conditions)
    plt.close(fig)


def test_leaderboard_figure_of_many_conditions_shows_the_first_and_last(
    scenarios, conditions
) -> None:
    ranked = rank_conditions(conditions)
    many = pd.concat(
        [ranked.assign(label=ranked["label"].astype(str) + f" #{n}") for n in range(4)],
        ignore_index=True,
    )
    fig = leaderboard_figure(many, degenerate_gates(scenarios))
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == FIGURE_ROWS
    # Table 2's order from the top: the first rows, then the last
    assert labels[0] == many["label"].iloc[0] and labels[-1] == many["label"].iloc[-1]
    assert f"of {len(many)}; the table has all" in fig.axes[0].get_title()
    plt.close(fig)


def test_reasoning_table_rounds_once_from_the_counts() -> None:
    contrasts = reasoning_contrasts(
        pd.DataFrame(
            {
                "model": ["m", "m"],
                "reasoning": ["off", "high"],
                "reasoning_level": ["floor", "high"],
                "n_trials_correct": [1, 2],
                "n_trials": [3, 3],
                "n_over_refusals": [1, 0],
                "n_proceed_opportunities": [8, 8],
                "n_modal_correct": [1, 1],
                "n_cells": [1, 1],
                "n_under_refusals": [0, 0],
                "n_hold_opportunities": [1, 1],
            }
        )
    )
    row = reasoning_table(contrasts).iloc[0]
    assert (row["floor"], row["high"]) == ("off", "high")
    assert (row["accuracy floor"], row["accuracy high"]) == ("33.3%", "66.7%")
    # 2/3 - 1/3 = 33.333... points, rounded once (not 66.7 - 33.3 = 33.4)
    assert row["accuracy diff (pts)"] == "+33.3"
    assert row["over-refusal diff (pts)"] == "-12.5"  # 0/8 - 1/8
    low, high = row["accuracy 95% CI"].strip("[]").split(", ")
    assert float(low) < 33.3 < float(high)


# --- 06, 07, 08: mirrors, stability, sensitivity ----------------------------------------------


def test_incident_mirror_is_found_by_name_only_when_unique() -> None:
    scenarios = pd.DataFrame(
        {
            "scenario_id": ["a", "b", "c"],
            "mirror_incident": ["Apple Card / Goldman Sachs credit-limit bias", None, "Other"],
        }
    )
    assert incident_mirror(scenarios, "apple card") == "a"
    assert incident_mirror(scenarios, "Therac") is None
    twice = scenarios.assign(mirror_incident=["Apple Card", "Apple Card", None])
    assert incident_mirror(twice, "Apple Card") is None


def test_the_release_names_one_apple_card_mirror(scenarios) -> None:
    found = incident_mirror(scenarios, "Apple Card")
    assert found is not None and found.startswith("apple-card")


def test_mirror_numbers_per_pool(scenarios) -> None:
    """Always-hold on every scenario: each anchor (hold-labelled) right, each mirror
    (proceed-labelled) wrong, so the gap is 100 points and no condition gets the Apple
    Card mirror right."""
    cells = always_cells(scenarios, B, "reference-policy", "always-hold (gate)")
    numbers = recorded(mirror_numbers(cells, scenarios))
    prefix = "reference.mirrors.always-hold-gate"
    patterns = scenarios["boundary_pattern"].astype(str)
    anchors = int((patterns == "public_harm_anchor").sum())
    anchors_held = int(
        ((patterns == "public_harm_anchor") & (scenarios["required_gate"] == B)).sum()
    )
    entry = numbers[f"{prefix}.public_harm_anchor.modal_accuracy"]
    assert (entry["numerator"], entry["denominator"]) == (anchors_held, anchors)
    assert numbers[f"{prefix}.apple_card.modal_correct"]["value"] == 0


def test_a_run_over_some_scenarios_leaves_out_only_the_derived_flag_ones_it_holds(
    scenarios,
) -> None:
    cells = always_cells(scenarios, B, "run", "few (off)")
    flagged = scenarios.loc[scenarios.derived_flag, "scenario_id"].astype(str)
    unflagged = scenarios.loc[~scenarios.derived_flag, "scenario_id"].astype(str)
    held = {flagged.iloc[0], unflagged.iloc[0], unflagged.iloc[1]}
    few = cells[cells["scenario_id"].astype(str).isin(held)]
    numbers = recorded(sensitivity_numbers(few, scenarios))
    assert numbers["runs.sensitivity.few-off.derived.excluded_scenarios"]["value"] == 1


def test_sensitivity_numbers_of_always_hold(scenarios) -> None:
    """Always-hold refuses every proceed-labelled cell: each over-refusal is n of n, with n
    the proceed scenarios each check keeps (counted here by a plain loop)."""
    cells = always_cells(scenarios, B, "reference-policy", "always-hold (gate)")
    numbers = recorded(sensitivity_numbers(cells, scenarios))
    prefix = "reference.sensitivity.always-hold-gate"
    kept_proceed = sum(
        1
        for gate, derived in zip(scenarios.required_gate, scenarios.derived_flag, strict=True)
        if gate == A and not derived
    )
    entry = numbers[f"{prefix}.derived.over_refusal"]
    assert (entry["numerator"], entry["denominator"]) == (kept_proceed, kept_proceed)
    assert numbers[f"{prefix}.derived.excluded_scenarios"]["value"] == int(
        scenarios.derived_flag.sum()
    )
    human_proceed = sum(1 for gate in scenarios.human_gate if gate == A)
    entry = numbers[f"{prefix}.human.over_refusal"]
    assert (entry["numerator"], entry["denominator"]) == (human_proceed, human_proceed)
    under = numbers[f"{prefix}.human.under_refusal"]
    assert under["numerator"] == 0 and under["value"] == 0.0


def test_unanimous_cells_by_hand() -> None:
    """Of the modal-scored cells of the hand-worked set, one per condition has every trial
    agree: s-hold-1 under model-a (five blocked) and s-go-1 under model-b (five allowed).
    model-a has four scored cells (s-go-2, all parse failures, is a scored miss), model-b
    three (its filtered s-hold-1 leaves)."""
    numbers = recorded(unanimous_numbers(pool_cells(hand_cells())))
    for label, scored in ((LABEL_A, 4), (LABEL_B, 3)):
        entry = numbers[f"runs.stability.{slug(label)}.unanimous_cells"]
        assert (entry["numerator"], entry["denominator"]) == (1, scored)
    assert len(numbers) == 2


def test_split_table_has_one_column_per_split_most_unanimous_first() -> None:
    cells = pool_cells(hand_cells())
    table = split_table(cells)
    splits = [c for c in table.columns if c not in ("source", "condition")]
    assert splits[0] == "5-0"
    long = split_distribution(cells)
    for row in long.itertuples():
        at = table[(table["source"] == row.source) & (table["condition"] == row.condition)]
        assert int(at[row.split].iloc[0]) == row.n_cells


# --- 09: labels -------------------------------------------------------------------------------


def test_human_key_agreement_and_disagreements() -> None:
    scenarios = pd.DataFrame(
        {
            "scenario_id": ["a", "b", "c", "d"],
            "boundary_pattern": ["p"] * 4,
            "required_gate": [A, B, B, A],
            "human_gate": [A, A, B, None],
        }
    )
    entry = recorded(human_key_numbers(scenarios))["labels.human_majority_match"]
    assert (entry["numerator"], entry["denominator"]) == (2, 4)  # a and c
    assert list(disagreements(scenarios)["scenario_id"]) == ["b", "d"]


def write_reports(results: Path, audit: dict | None = None) -> None:
    human = {
        "inter_annotator_agreement": {
            "gate_state": {"value": 0.815},
            "irreversibility_tier": {"value": 0.5},
            "functional_category": {"value": 0.125},
        }
    }
    audit = audit or {
        "inter_annotator_agreement": {
            "gate_state": {"value": 0.6667, "percent_agreement": 0.9, "n_items": 40}
        },
        "canonical_alignment": {"gate_state": {"majority_match_count": 37, "n": 40}},
    }
    for folder, report in (("human-validation", human), ("annotation-audit", audit)):
        (results / folder).mkdir(parents=True, exist_ok=True)
        (results / folder / "agreement-report.json").write_text(json.dumps(report))


def test_reported_agreement_reads_both_reports(tmp_path: Path) -> None:
    results = tmp_path / "v-test"
    write_reports(results)
    numbers, table = reported_agreement(results)
    values = recorded(numbers)
    assert values["labels.human.fleiss_kappa.gate"]["value"] == 0.82  # 0.815 half up
    assert values["labels.llm_panel.gate_kappa"]["value"] == 0.667
    exact = values["labels.llm_panel.exact_agreement"]
    assert (exact["numerator"], exact["denominator"]) == (36, 40)  # 0.9 x 40
    assert list(table["reported"]) == ["0.82", "0.50", "0.13", "0.667", "90.0%", "92.5%"]
    assert set(table["source_file"]) == {
        "results/v-test/human-validation/agreement-report.json",
        "results/v-test/annotation-audit/agreement-report.json",
    }


def test_the_human_reports_match_count_must_be_the_gold_labels(tmp_path: Path) -> None:
    results = tmp_path / "v-test"
    write_reports(results)
    report = results / "human-validation" / "agreement-report.json"
    human = json.loads(report.read_text())
    human["canonical_alignment"] = {"gate_state": {"n": 4, "match": 3}}
    report.write_text(json.dumps(human))
    scenarios = pd.DataFrame(
        {"scenario_id": list("abcd"), "required_gate": [A, B, B, A], "human_gate": [A, A, B, B]}
    )  # the gold labels match on a and c: 2 of 4
    with pytest.raises(AgreementReportError, match=r"3 of 4 .* gold-labels\.json gives 2 of 4"):
        reported_agreement(results, scenarios)
    human["canonical_alignment"]["gate_state"]["match"] = 2
    report.write_text(json.dumps(human))
    assert len(reported_agreement(results, scenarios)[0]) == 6


def test_an_agreement_report_without_a_field_is_named(tmp_path: Path) -> None:
    results = tmp_path / "v-test"
    write_reports(results, audit={"inter_annotator_agreement": {}})
    with pytest.raises(AgreementReportError, match=r"annotation-audit.*gate_state"):
        reported_agreement(results)


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        ("value", None, "field inter_annotator_agreement.gate_state.value: None is not a number"),
        ("value", "68.55%", "gate_state.value: '68.55%' is not a number from -1 to 1"),
        ("majority_match_count", 41, "majority_match_count: 41 is more than the 40 items"),
    ],
)
def test_an_agreement_report_value_that_is_no_number_is_named(
    tmp_path: Path, field, value, said
) -> None:
    results = tmp_path / "v-test"
    audit = {
        "inter_annotator_agreement": {
            "gate_state": {"value": 0.6667, "percent_agreement": 0.9, "n_items": 40}
        },
        "canonical_alignment": {"gate_state": {"majority_match_count": 37, "n": 40}},
    }
    part = "canonical_alignment" if field == "majority_match_count" else "inter_annotator_agreement"
    audit[part]["gate_state"][field] = value
    write_reports(results, audit=audit)
    with pytest.raises(AgreementReportError) as refused:
        reported_agreement(results)
    assert str(refused.value).startswith(
        str(results / "annotation-audit" / "agreement-report.json")
    )
    assert said in str(refused.value)


# --- 10: inference --------------------------------------------------------------------------


def test_unpaired_numbers_are_named_by_model_not_by_contrast_text(conditions) -> None:
    unpaired = unpaired_contrasts(conditions)
    numbers = recorded(unpaired_numbers(unpaired))
    models = set(reasoning_contrasts(conditions)["model"].astype(str))
    names = {n.split(".")[2] for n in numbers if n.endswith(".unpaired_diff")}
    assert names == {slug(m) for m in models}
    tested = numbers["inference.reasoning.unpaired.n_tests"]["value"]
    assert tested == int(unpaired["p"].notna().sum()) == 2 * len(models)


def test_inference_runs_one_source_at_a_time() -> None:
    cells = pd.concat(
        [
            hand_cells(source="published"),
            hand_cells(source="run"),
        ],
        ignore_index=True,
    )
    seen = {source: len(part) for source, part in by_source(pool_cells(cells))}
    assert seen == dict.fromkeys(("published", "run"), len(HAND_CELLS))


def test_the_stability_caption_names_the_reads_by_the_trials_per_cell():
    reads = pd.DataFrame({"source": "published", "n_trials": [3 * 106], "n_cells": [106]})
    assert stability.reads_caption(reads).startswith(
        "Mean trial accuracy, modal-of-3 accuracy and pass3 of each published condition"
    )


def test_every_caption_and_description_names_the_reads_by_the_trials_per_cell():
    """At four trials per cell nothing a reader sees says pass5 or modal-of-5 (the numbers
    keep the paper's names)."""
    from analysis.paper.sections.leaderboard import figure_caption, table2_caption

    reads = pd.DataFrame(
        {
            "source": "published",
            "condition": ["a (off)", "b (off)"],
            "mean_trial_accuracy": [0.5, 0.4],
            "n_trials_correct": [212, 170],
            "n_trials": 4 * 106,
            "modal_accuracy": [0.5, 0.6],
            "n_modal_correct": [53, 64],
            "pass5": [0.3, 0.2],
            "n_pass5": [32, 21],
            "n_cells": 106,
            "modal_vs_pass5_differ": [True, True],
        }
    )
    texts = [
        table2_caption(reads),
        figure_caption(reads),
        stability.reads_table_caption(reads),
        stability.rank_flip_text(reads),
        *(row["description"] for _, row in stability.stability_numbers(reads).iterrows()),
    ]
    assert all("pass5" not in t and "of-5" not in t for t in texts), texts
    assert "then pass4" in texts[0] and "pass4 (squares)" in texts[1]
    assert (
        texts[3]
        == "2 of 2 published conditions rank differently by modal-of-4 accuracy and by pass4."
    )
    numbers = stability.stability_numbers(reads).set_index("name")
    assert "stability.a-off.pass5" in numbers.index  # the paper's name, at any count


def test_the_stability_figure_shows_the_best_and_worst_conditions_of_many():
    n = 100
    reads = pd.DataFrame(
        {
            "source": "published",
            "condition": [f"m{i} (off)" for i in range(n)],
            "mean_trial_accuracy": [i / n for i in range(n)],
            "modal_accuracy": [i / n for i in range(n)],
            "pass5": [i / n for i in range(n)],
            "rank_mean_trial_accuracy": [n - i for i in range(n)],
            "n_trials": 5 * 106,
            "n_cells": 106,
        }
    )
    fig = stability.stability_figure(reads)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == FIGURE_ROWS
    # ranked by mean trial accuracy: the best (m99) first, the worst (m0) last
    assert labels[0] == "m99 (off)" and labels[-1] == "m0 (off)"
    assert "m50 (off)" not in labels
    plt.close(fig)


def test_the_rank_figure_shows_the_best_and_worst_conditions_of_many():
    n = 100
    ranks = pd.DataFrame(
        {
            "condition": [f"m{i} (off)" for i in range(n)],
            "rank": [n - i for i in range(n)],
            "rank_low": [max(1, n - i - 2) for i in range(n)],
            "rank_high": [min(n, n - i + 2) for i in range(n)],
        }
    )
    fig = rank_figure(ranks, "Ranks")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == FIGURE_ROWS
    # best at the top: the last tick is rank 1 (m99), the first the worst (m0)
    assert labels[-1] == "m99 (off)" and labels[0] == "m0 (off)"
    assert "m50 (off)" not in labels
    assert f"of {n}; the table has all" in ax.get_title()
    plt.close(fig)


def test_the_reasoning_figure_shows_the_largest_and_smallest_gains_of_many_models():
    n = 60
    diff = [0.5 - i / 100 for i in range(n)]  # the table's order: largest gain first
    contrasts = pd.DataFrame({"model": [f"m{i:02d}" for i in range(n)]})
    for metric in ("mean_trial_accuracy", "over_refusal"):
        contrasts[f"{metric}_diff"] = diff
        contrasts[f"{metric}_diff_low"] = [d - 0.05 for d in diff]
        contrasts[f"{metric}_diff_high"] = [d + 0.05 for d in diff]
    fig = reasoning_figure(contrasts)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == FIGURE_ROWS and labels[0] == "m00" and labels[-1] == f"m{n - 1}"
    assert "m30" not in labels
    assert fig.get_figheight() <= 0.3 * FIGURE_ROWS + 1.4
    assert f"of {n}; the table has all" in fig.get_suptitle()
    plt.close(fig)


def test_the_split_figure_shows_the_most_and_least_unanimous_conditions_of_many():
    n = 60
    table = pd.DataFrame(
        {
            "source": "published",
            "condition": [f"m{i:02d} (off)" for i in range(n)],
            "5-0": list(range(n)),
            "4-1": [n - i for i in range(n)],
        }
    )
    fig = split_figure(table, ["published"])
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == FIGURE_ROWS
    assert labels[0].startswith("m59 (off)") and labels[-1].startswith("m00 (off)")
    assert f"of {n}; the table has all" in ax.get_title()
    plt.close(fig)


@pytest.mark.parametrize("n_conditions", [3, 30])
def test_pass_k_figure_names_each_line_and_caps_them(n_conditions: int) -> None:
    conditions = [f"m{c:02d} (off)" for c in range(n_conditions)]
    passk = pd.DataFrame(
        [
            {"condition": name, "k": k, "estimate": (0.5 + c / 100) ** k}
            for c, name in enumerate(conditions)
            for k in range(1, 6)
        ]
    )
    fig = pass_k_figure(passk, "pass^k")
    ax = fig.axes[0]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(ax.get_lines()) == len(legend) == min(n_conditions, PASS_K_LINES)
    styles = {(line.get_marker(), line.get_color()) for line in ax.get_lines()}
    assert len(styles) == len(legend)  # no two lines drawn alike
    by_pass5 = conditions[::-1]  # the highest pass^5 first
    if n_conditions <= PASS_K_LINES:
        assert legend == by_pass5 and "\n" not in ax.get_title()
    else:
        half = PASS_K_LINES // 2
        assert legend == by_pass5[:half] + by_pass5[-half:]
        assert f"lowest pass^5 of {n_conditions} conditions" in ax.get_title()
    plt.close(fig)


def test_pass_k_figure_draws_probabilities_on_0_to_100_percent() -> None:
    passk = pd.DataFrame({"condition": "m (off)", "k": [1, 2, 3], "estimate": 1.0})
    fig = pass_k_figure(passk, "pass^k")
    low, high = fig.axes[0].get_ylim()
    assert low < 0 and 100 < high < 105  # one line at 100% is not drawn on a 96-104% axis
    plt.close(fig)


def test_per_trial_inference_on_a_source_whose_every_cell_was_filtered(tmp_path, capsys):
    from analysis.inference.simulate import simulated_cells
    from analysis.paper.sections.inference_per_trial import per_trial_inference

    cells, scenarios = simulated_cells(n_models=1, n_scenarios=20, seed=1)
    filtered = cells.assign(
        source="run", provider_filtered=True, modal_scored=False, directionally_scored=False
    )
    section = open_section("09-labels", output_dir=tmp_path)
    per_trial_inference(section, filtered, scenarios, "run", "runs")
    assert "every cell was provider-filtered" in capsys.readouterr().out
    assert not section.numbers.numbers and not section.out.catalogue


def test_rank_figure_ticks_whole_ranks() -> None:
    ranks = pd.DataFrame(
        {
            "condition": ["a", "b", "c"],
            "rank": [1, 2, 3],
            "rank_low": [1, 1, 2],
            "rank_high": [2, 3, 3],
        }
    )
    fig = rank_figure(ranks, "ranks")
    ticks = [t for t in fig.axes[0].get_xticks() if 1 <= t <= 3]
    assert ticks and all(float(t).is_integer() for t in ticks)
    plt.close(fig)


def test_rank_figure_of_one_condition_shows_rank_one_alone() -> None:
    ranks = pd.DataFrame({"condition": ["a"], "rank": [1], "rank_low": [1], "rank_high": [1]})
    fig = rank_figure(ranks, "ranks")
    ax = fig.axes[0]
    assert ax.get_xlim() == (1.5, 0.5)  # best at the right
    visible = [t for t in ax.get_xticks() if 0.5 <= t <= 1.5]
    assert visible == [1]
    plt.close(fig)


def test_rank_figure_of_many_ranks_draws_the_leader_whole() -> None:
    n = 300
    ranks = pd.DataFrame(
        {
            "condition": [f"c{i}" for i in range(30)],
            "rank": range(1, 31),
            "rank_low": [1] * 30,
            "rank_high": [n] * 30,
        }
    )
    fig = rank_figure(ranks, "ranks")
    ax = fig.axes[0]
    fig.canvas.draw()
    marker = ax.lines[0]
    radius = marker.get_markersize() / 2 * fig.dpi / 72  # pixels
    leader = ax.transData.transform((1, 0))[0]
    assert leader + radius <= ax.bbox.x1  # rank 1 at the right, its marker inside
    assert ax.get_xlim()[1] < 1 and ax.get_xlim()[0] > n
    assert min(ax.get_xticks()) == 1  # no tick at rank 0
    plt.close(fig)


def test_reasoning_figure_without_any_pair_says_so() -> None:
    contrasts = reasoning_contrasts(pd.DataFrame(columns=["model", "reasoning_level"]))
    fig = reasoning_figure(contrasts)
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert texts == ["no model has one floor\nand one high condition"] * 2
    plt.close(fig)


# --- a release without the optional parts ----------------------------------------------------


def test_without_human_gates_the_human_label_checks_are_left_out(scenarios) -> None:
    from analysis.paper.sections.mirrors import human_label_gap_numbers
    from analysis.scoring.sensitivity import sensitivity_table

    unlabelled = scenarios.assign(human_gate=pd.Series(pd.NA, index=scenarios.index))
    unlabelled["human_gate"] = unlabelled["human_gate"].astype(scenarios["human_gate"].dtype)
    cells = always_cells(scenarios, B, "reference-policy", "always-hold (gate)")
    with_humans = recorded(sensitivity_numbers(cells, scenarios))
    without = recorded(sensitivity_numbers(cells, unlabelled))
    human = {name for name in with_humans if ".human." in name}
    assert human and set(without) == set(with_humans) - human
    assert "human majority labels" in set(sensitivity_table(cells, scenarios)["check"])
    checks = sensitivity_table(cells, unlabelled)["check"]
    assert list(dict.fromkeys(checks)) == [
        "baseline",
        "without derived-flag rows",
        "without credit/hiring mirrors",
    ]
    assert len(human_label_gap_numbers(cells, scenarios)) == 1
    assert human_label_gap_numbers(cells, unlabelled).empty


def test_reported_agreement_reads_the_reports_the_release_has(tmp_path: Path) -> None:
    results = tmp_path / "v-test"
    write_reports(results)
    (results / "human-validation" / "agreement-report.json").unlink()
    numbers, table = reported_agreement(results)
    assert set(recorded(numbers)) == {
        "labels.llm_panel.gate_kappa",
        "labels.llm_panel.exact_agreement",
        "labels.llm_panel.majority_match",
    }
    assert set(table["panel"]) == {"three-model LLM audit"}
    (results / "annotation-audit" / "agreement-report.json").unlink()
    numbers, table = reported_agreement(results)
    assert numbers.empty and table.empty


def test_a_pinned_agreement_report_the_release_lacks_is_refused(tmp_path: Path) -> None:
    from analysis.files.parts import MissingPartError

    results = tmp_path / "v-test"
    write_reports(results)
    report = results / "annotation-audit" / "agreement-report.json"
    digest = "0" * 64
    (results / "checksums.txt").write_text(f"{digest}  annotation-audit/agreement-report.json\n")
    report.unlink()
    with pytest.raises(MissingPartError, match=f"^{report}: missing, though checksums.txt pins"):
        reported_agreement(results)


def test_a_section_says_what_it_left_out_and_why(tmp_path: Path, capsys) -> None:
    import shutil

    from analysis.files.parts import HUMAN_AGREEMENT, HUMAN_LABELS, LLM_AUDIT

    data = tmp_path / "data"
    shutil.copytree(paths.scenarios_dir(), data / "scenarios")
    shutil.copytree(paths.results_dir(), data / "runs" / paths.release())
    shutil.copy(paths.import_stamp(), paths.import_stamp(data))
    results = data / "runs" / paths.release()
    shutil.rmtree(results / "human-validation")
    listing = results / "checksums.txt"
    lines = listing.read_text().splitlines()
    listing.write_text("\n".join(x for x in lines if "human-validation" not in x) + "\n")
    section = open_section("09-labels", output_dir=tmp_path / "out", data_dir=data)
    assert section.scenarios["human_gate"].isna().all()
    assert not section.has(HUMAN_LABELS, "the human majority against the key")
    assert not section.has(HUMAN_AGREEMENT, "the human agreement")
    assert section.has(LLM_AUDIT, "the LLM audit")
    said = capsys.readouterr().out
    assert "Left out: the human agreement, because results/" in said
    assert "the LLM audit" not in said
    section.close()
    left = json.loads((tmp_path / "out" / "left-out" / "09-labels.json").read_text())
    assert [entry["what"] for entry in left] == [
        "the human majority against the key",
        "the human agreement",
    ]
    release = paths.release()
    assert left[0]["reason"] == (
        f"results/{release}/human-validation/gold-labels.json (the three human raters' "
        f"majority labels) is not in release {release}; upstream's pipeline does not make it"
    )


def test_a_data_folder_without_any_per_trial_verdicts_is_refused_with_the_remedy(
    tmp_path: Path,
) -> None:
    import shutil

    data = tmp_path / "data"
    shutil.copytree(paths.scenarios_dir(), data / "scenarios")
    shutil.copytree(paths.results_dir(), data / "runs" / paths.release())
    shutil.copy(paths.import_stamp(), paths.import_stamp(data))
    with pytest.raises(ValueError, match="no per-trial verdicts") as refused:
        open_section("05-patterns", output_dir=tmp_path / "out", data_dir=data)
    assert str(refused.value).startswith(f"{data / 'runs'}: ")
    assert str(refused.value).endswith("`make reference-runs`")
