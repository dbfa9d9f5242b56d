"""Loaders for every per-trial layout, the release-format writer, and their validation."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from factories import (
    MODEL_B,
    A,
    B,
    N,
    scenarios_frame,
    trial_rows,
    trials_frame,
    write_run_root,
)

from analysis import paths
from analysis.corpus.vocabulary import GATE_DTYPE, verdict_file_label
from analysis.exploring.export import write_scenarios_detail
from analysis.scoring.rules import score_cells
from analysis.trials import (
    TRIAL_COLUMNS,
    VerdictError,
    discover_runs,
    load_run_root,
    load_scenarios_detail,
    load_scenarios_detail_cells,
    load_tidy,
    load_trials,
    normalize_trials,
    split_condition_label,
)

DETAIL_CELL_COLUMNS = [
    "scenario_id",
    "condition",
    "model",
    "reasoning",
    "n_trials",
    "n_correct",
    "n_allowed",
    "n_blocked",
    "modal_decision",
    "modal_count",
    "modal_correct",
    "pass_all",
    "unanimous",
    "provider_filtered",
    "modal_scored",
    "directionally_scored",
]


def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Categories as plain values, for comparing tables built from different inputs."""
    out = frame.copy()
    for column in out.columns:
        if isinstance(out[column].dtype, pd.CategoricalDtype) and out[column].dtype != GATE_DTYPE:
            out[column] = out[column].astype(str)
    return out.reset_index(drop=True)


def test_trials_table_columns_and_dtypes() -> None:
    trials = trials_frame()
    assert tuple(trials.columns) == TRIAL_COLUMNS
    assert trials["commit_permission"].dtype == GATE_DTYPE
    assert trials["trial"].dtype == "int64"
    for column in ("scenario_id", "condition", "model", "reasoning", "status", "source"):
        assert isinstance(trials[column].dtype, pd.CategoricalDtype), column
    assert set(trials["condition"]) == {"model-a (off)", "model-b (on (provider default))"}


def test_split_condition_label() -> None:
    assert split_condition_label("kimi-k2.6 (on)") == ("kimi-k2.6", "on")
    assert split_condition_label("x (y) (minimal)") == ("x (y)", "minimal")
    assert split_condition_label("kimi-k2.6 (on (provider default))") == (
        "kimi-k2.6",
        "on (provider default)",
    )
    with pytest.raises(ValueError, match="not of the form"):
        split_condition_label("no-reasoning")


def test_labels_become_categoricals_as_astype_str_makes_them() -> None:
    from analysis.trials.schema import _conditions, text_categorical

    cases = [
        ["b", "a", "b", "c\x1fd", "a"],
        ["1", 1, 1.0, True, "True", None, float("nan")],  # equal values that print apart
        [],
    ]
    series_cases = [pd.Series(values, dtype=object) for values in cases]
    texts = pd.Categorical(["b", "a", "b"], categories=["a", "b", "z"])  # z unused
    series_cases += [pd.Series(texts), pd.Series(texts.reorder_categories(["z", "b", "a"]))]
    for series in series_cases:
        values = list(series)
        made, expected = text_categorical(series), pd.Categorical(series.astype(str))
        assert made.categories.equals(expected.categories), values
        assert made.categories.dtype == expected.categories.dtype
        np.testing.assert_array_equal(made.codes, expected.codes)
    model = text_categorical(pd.Series(["m", "x (y)", "m", "m"], dtype=object))
    reasoning = text_categorical(pd.Series(["off", "on", "high", "off"], dtype=object))
    assert list(_conditions(model, reasoning)) == [
        "m (off)",
        "x (y) (on)",
        "m (high)",
        "m (off)",
    ]


# --- the release verdict file ---------------------------------------------------------------


def test_scenarios_detail_round_trip(tmp_path: Path) -> None:
    trials, scenarios = trials_frame(), scenarios_frame()
    path = write_scenarios_detail(trials, scenarios, tmp_path / "scenarios-detail.json")
    doc = json.loads(path.read_text())
    assert doc["scenario_count"] == 4
    assert doc["models"] == ["model-a (off)", "model-b (on)"]
    verdict = doc["scenarios"][0]["model_verdicts"][0]
    assert {"split", "unanimous", "trials", "modal_scored", "directionally_scored"} <= set(verdict)

    loaded = load_scenarios_detail(path, source="run")
    # The format writes a reasoning that starts with "on" as plain "on", name and all.
    shortened = {"on (provider default)": "on", "model-b (on (provider default))": "model-b (on)"}
    expected = trials.assign(
        reasoning=trials["reasoning"].astype(str).replace(shortened),
        condition=trials["condition"].astype(str).replace(shortened),
    )
    pd.testing.assert_frame_equal(_plain(loaded), _plain(expected))

    rescored = score_cells(loaded, scenarios)
    stated = load_scenarios_detail_cells(path)
    pd.testing.assert_frame_equal(
        _plain(rescored[DETAIL_CELL_COLUMNS].sort_values(["scenario_id", "condition"])),
        _plain(stated[DETAIL_CELL_COLUMNS]),
    )
    original = score_cells(expected, scenarios)
    pd.testing.assert_frame_equal(_plain(rescored), _plain(original))


@pytest.mark.parametrize(
    ("field", "value", "expected"),
    [
        ("trial", "1", "expected an integer >= 1, found a string '1'"),
        ("trial", 1.0, "expected an integer >= 1, found a number 1.0"),
        ("trial", True, "expected an integer >= 1, found a boolean True"),
        ("trial", 0, "expected an integer >= 1, found an integer 0"),
        ("trial", None, "expected an integer >= 1, found null"),
        ("commit_permission", 5, "expected a string or null, found an integer 5"),
        ("status", ["ok"], "expected a string or null, found a list of 1"),
        (None, ["a trial"], "expected an object, found a list of 1"),
    ],
)
def test_a_wrong_trial_in_the_verdict_file_is_refused_by_its_path(
    tmp_path: Path, field: str | None, value: object, expected: str
) -> None:
    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "d.json")
    doc = json.loads(path.read_text())
    trials = doc["scenarios"][1]["model_verdicts"][1]["trials"]
    if field is None:
        trials[2] = value
    else:
        trials[2][field] = value
    path.write_text(json.dumps(doc))
    at = "$.scenarios[1].model_verdicts[1].trials[2]" + (f".{field}" if field else "")
    with pytest.raises(VerdictError) as refused:
        load_scenarios_detail(path)
    assert str(refused.value) == f"{path}: {at}: {expected}"


def test_trials_without_numbers_pass_the_schema_and_are_refused_as_rows(tmp_path: Path) -> None:
    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "d.json")
    doc = json.loads(path.read_text())
    for scenario in doc["scenarios"]:
        for verdict in scenario["model_verdicts"]:
            verdict.pop("n_trials")
            for trial in verdict["trials"]:
                trial.pop("trial")  # absent, not null: the schema lets it be
    path.write_text(json.dumps(doc))
    with pytest.raises(VerdictError, match="trial numbers must be integers >= 1; found None"):
        load_scenarios_detail(path)


def test_two_on_settings_of_one_model_cannot_share_a_verdict_file(tmp_path: Path) -> None:
    cells = {("s-go-1", ("tau", "on (budget 2048)")): [A] * 5}
    cells[("s-go-1", ("tau", "on (budget 8192)"))] = [B] * 5
    path = tmp_path / "scenarios-detail.json"
    with pytest.raises(VerdictError, match=r"both as 'tau \(on\)'"):
        write_scenarios_detail(trials_frame(cells), scenarios_frame(), path)
    assert not path.exists()
    one = write_scenarios_detail(
        trials_frame(dict(list(cells.items())[:1])), scenarios_frame(), path
    )
    doc = json.loads(one.read_text())
    entry = next(e for e in doc["scenarios"] if e["id"] == "s-go-1")
    entry["model_verdicts"] *= 2  # as if two such settings had been written
    path.write_text(json.dumps(doc))
    with pytest.raises(VerdictError, match=r"two verdicts of 'tau \(on\)' \(the format writes"):
        load_scenarios_detail(path)


def test_scenarios_detail_published_source(tmp_path: Path) -> None:
    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "d.json")
    assert set(load_scenarios_detail(path)["source"]) == {"published"}
    assert set(load_trials([path])["source"]) == {"published"}


def test_scenarios_detail_missing_trial_names_the_cell(tmp_path: Path) -> None:
    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "d.json")
    doc = json.loads(path.read_text())
    verdicts = doc["scenarios"][1]["model_verdicts"]
    verdicts[0]["trials"] = [t for t in verdicts[0]["trials"] if t["trial"] not in (2, 4)]
    path.write_text(json.dumps(doc))
    with pytest.raises(VerdictError, match=r"d\.json.*s-hold-2 / model-a \(off\).*\[2, 4\]"):
        load_scenarios_detail(path)


def test_scenarios_detail_unknown_scenario(tmp_path: Path) -> None:
    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "d.json")
    known = scenarios_frame().iloc[:3]
    with pytest.raises(VerdictError, match=r"not in the scenarios table.*s-go-2"):
        load_scenarios_detail(path, scenarios=known)


def test_malformed_json_names_the_file_and_position(tmp_path: Path) -> None:
    path = tmp_path / "scenarios-detail.json"
    path.write_text('{"scenarios": [\n  {"id": "s-1",, }\n]}')
    with pytest.raises(VerdictError, match=r"scenarios-detail\.json: malformed JSON at line 2"):
        load_scenarios_detail(path)


def test_malformed_jsonl_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"scenario_id": "s-1"}\n{oops\n')
    with pytest.raises(VerdictError, match=r"t\.jsonl: malformed JSON on line 2"):
        load_tidy(path)


# --- validation -----------------------------------------------------------------------------


def test_duplicate_trials_are_named() -> None:
    rows = trial_rows()
    rows = pd.concat([rows, rows.iloc[[6]]], ignore_index=True)
    with pytest.raises(VerdictError, match=r"src\.csv: 1 duplicate.*s-hold-2 / model-a \(off\).*2"):
        normalize_trials(rows, origin="src.csv")


def test_missing_trials_name_the_cell_and_numbers() -> None:
    rows = trial_rows()
    rows = rows[~((rows["scenario_id"] == "s-go-1") & rows["trial"].isin([1, 3]))]
    with pytest.raises(
        VerdictError, match=r"s-go-1 / model-a \(off\) \[run\] \(of 5\) missing \[1, 3\]"
    ):
        normalize_trials(rows, origin="x")


def test_missing_trials_against_the_layout_count() -> None:
    rows = trial_rows()
    rows = rows[rows["trial"] <= 4]
    with pytest.raises(VerdictError, match=r"missing \[5\]"):
        normalize_trials(rows, origin="x", n_trials=5)


def test_mixed_trial_counts() -> None:
    rows = trial_rows()
    rows = rows[~((rows["scenario_id"] == "s-go-1") & (rows["trial"] > 3))]
    with pytest.raises(VerdictError, match=r"mixed trial counts.*with 3.*s-go-1"):
        normalize_trials(rows, origin="x")


def test_unknown_permission_label_names_value_and_file() -> None:
    rows = trial_rows()
    rows.loc[3, "commit_permission"] = "maybe"
    with pytest.raises(VerdictError, match=r"runs\.parquet: unknown commit_permission.*'maybe'"):
        normalize_trials(rows, origin="runs.parquet")


def test_bad_trial_number_and_missing_columns() -> None:
    rows = trial_rows()
    rows.loc[0, "trial"] = 0
    with pytest.raises(VerdictError, match="integers >= 1"):
        normalize_trials(rows, origin="x")
    with pytest.raises(VerdictError, match=r"missing column\(s\) \['trial'\]"):
        normalize_trials(trial_rows().drop(columns="trial"), origin="x")


def test_unknown_source() -> None:
    with pytest.raises(VerdictError, match="unknown source"):
        normalize_trials(trial_rows(source="mine"), origin="x")


# --- tidy tables ----------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".parquet", ".csv", ".jsonl"])
def test_tidy_round_trip(tmp_path: Path, suffix: str) -> None:
    rows = trial_rows(source="reference-policy")
    path = tmp_path / f"trials{suffix}"
    if suffix == ".parquet":
        rows.to_parquet(path)
    elif suffix == ".csv":
        rows.to_csv(path, index=False)
    else:
        rows.to_json(path, orient="records", lines=True)
    loaded = load_tidy(path)
    pd.testing.assert_frame_equal(_plain(loaded), _plain(trials_frame(source="reference-policy")))
    assert set(load_tidy(path, source="run")["source"]) == {"run"}


def test_tidy_without_status_or_source(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    trial_rows().drop(columns=["status", "source"]).to_csv(path, index=False)
    loaded = load_tidy(path)
    assert set(loaded["status"]) == {"ok"} and set(loaded["source"]) == {"run"}
    assert loaded["commit_permission"].isna().sum() == 15


# --- raw run roots --------------------------------------------------------------------------


def test_release_sample_run_root() -> None:
    root = paths.sample_run_dir()
    if not (root / "RUN_PLAN.json").is_file():
        root = paths.release_dir() / "sample-artifacts"
    if not (root / "RUN_PLAN.json").is_file():
        pytest.skip("the release's sample run root is neither imported nor in RELEASE_DIR")
    trials = load_run_root(root)
    assert len(trials) == 5
    assert list(trials["trial"]) == [1, 2, 3, 4, 5]
    assert set(trials["condition"]) == {"gpt-5.4-mini (off)"}
    assert set(trials["scenario_id"]) == {"patient-records-employer-disclosure-002"}
    assert set(trials["source"]) == {"run"}


def test_run_root_shards_merge(tmp_path: Path) -> None:
    one = write_run_root(tmp_path / "shard-1", {"s-1": [A, A, B, N, A]}, model="m")
    two = write_run_root(tmp_path / "shard-2", {"s-2": [B] * 5}, model="m")
    trials = load_run_root([one, two])
    assert sorted(set(trials["scenario_id"])) == ["s-1", "s-2"]
    assert set(trials["condition"]) == {"m (off)"}
    assert list(trials["status"][:5]) == ["ok", "ok", "ok", "parse_failed", "ok"]


def test_run_root_shards_of_different_runs(tmp_path: Path) -> None:
    one = write_run_root(tmp_path / "a", {"s-1": [A] * 5}, run_id="r1")
    two = write_run_root(tmp_path / "b", {"s-2": [A] * 5}, run_id="r2")
    with pytest.raises(VerdictError, match="shards of different runs"):
        load_run_root([one, two])


def test_run_root_overlapping_shards(tmp_path: Path) -> None:
    one = write_run_root(tmp_path / "a", {"s-1": [A] * 5})
    two = write_run_root(tmp_path / "b", {"s-1": [A] * 5})
    with pytest.raises(VerdictError, match=r"'s-1'.*two shards"):
        load_run_root([one, two])


def test_run_root_missing_trial_file(tmp_path: Path) -> None:
    root = write_run_root(tmp_path / "r", {"s-1": [A] * 5, "s-2": [B] * 5})
    (root / "v1" / "s-2" / "trial-3.json").unlink()
    with pytest.raises(VerdictError, match=r"s-2 / model-x \(off\).*missing \[3\]"):
        load_run_root(root)


def test_run_root_malformed_trial_names_the_file(tmp_path: Path) -> None:
    root = write_run_root(tmp_path / "r", {"s-1": [A] * 5})
    (root / "v1" / "s-1" / "trial-2.json").write_text("{not json")
    with pytest.raises(VerdictError, match=r"trial-2\.json: malformed JSON at line 1"):
        load_run_root(root)


# --- discovery ------------------------------------------------------------------------------


def test_discover_and_load_everything(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    results = runs / paths.results_dir().name
    write_scenarios_detail(trials_frame(), scenarios_frame(), results / "scenarios-detail.json")
    (results / "ignored.csv").write_text("not,a,trials,table\n")
    write_run_root(runs / "mine" / "shard-1", {"s-go-1": [A] * 5}, run_id="r")
    write_run_root(runs / "mine" / "shard-2", {"s-go-2": [A] * 5}, run_id="r")
    reference = runs / paths.reference_runs_dir().name
    write_run_root(reference / "raw", {"s-go-1": [B] * 5}, model="always-hold")
    gate = trials_frame({("s-go-1", ("always-hold", "off")): [B] * 5}, source="reference-policy")
    gate.to_csv(reference / "trials.csv", index=False)
    extra = trials_frame({("s-hold-1", ("z", "high")): [B] * 5})
    extra.to_parquet(runs / "extra.parquet")

    entries = discover_runs(runs)
    kinds = [(e["kind"], len(e["paths"]), e["source"]) for e in entries]
    assert kinds == [
        ("detail", 1, "published"),
        ("run_root", 2, "run"),
        ("tidy", 1, None),
        ("tidy", 1, None),
    ]
    combined = pd.concat(
        [
            load_scenarios_detail(entries[0]["paths"][0]),
            load_run_root(entries[1]["paths"]),
            load_tidy(entries[2]["paths"][0]),
            load_tidy(entries[3]["paths"][0]),
        ]
    )
    assert len(combined) == 40 + 10 + 5 + 5
    assert sorted(combined.groupby("source", observed=True).size().items()) == [
        ("published", 40),
        ("reference-policy", 5),
        ("run", 15),
    ]
    everything = load_trials([entries[0]["paths"][0], runs / "extra.parquet"])
    assert len(everything) == 45
    assert set(everything["condition"]) >= {"z (high)", verdict_file_label(*MODEL_B)}


def test_a_run_found_twice_counts_once(tmp_path: Path) -> None:
    rows = trial_rows()
    rows.to_csv(tmp_path / "a.csv", index=False)
    rows.to_csv(tmp_path / "b.csv", index=False)
    assert len(load_trials([tmp_path / "a.csv", tmp_path / "b.csv"])) == len(rows)


def test_a_run_found_twice_with_different_trials_is_refused(tmp_path: Path) -> None:
    rows = trial_rows()
    rows.to_csv(tmp_path / "a.csv", index=False)
    rows.loc[0, "commit_permission"] = (
        "allowed" if rows.loc[0, "commit_permission"] != "allowed" else "blocked"
    )
    rows.to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(VerdictError, match=r"b\.csv: condition .* is also in .*a\.csv"):
        load_trials([tmp_path / "a.csv", tmp_path / "b.csv"])


def _raw_root(root: Path, config: dict, permissions: list) -> Path:
    """A minimal raw run root: one variant, one scenario, one trial file per permission."""
    (root / "v1" / "s-go-1").mkdir(parents=True)
    (root / "RUN_PLAN.json").write_text(
        json.dumps({"run_id": "r1", "planned_variants": ["v1"], "n_trials_per_cell": 5})
    )
    (root / "VARIANT_CONFIGS.json").write_text(json.dumps({"variants": {"v1": config}}))
    for i, permission in enumerate(permissions, 1):
        trial = {"scenario_id": "s-go-1", "trial": i, "commit_permission": permission}
        trial["status"] = "ok" if permission else "parse_failed"
        (root / "v1" / "s-go-1" / f"trial-{i}.json").write_text(json.dumps(trial))
    return root


def test_loader_and_export_name_a_run_the_same_way(tmp_path: Path) -> None:
    from analysis.runner.tidy import export_tidy

    config = {"model": "vendor/model-x", "label": "my-run", "reasoning_effort": "high"}
    root = _raw_root(tmp_path / "root", config, [A, A, B, A, N])
    export_tidy([root], tmp_path / "export.csv")
    raw = load_trials([root])
    tidy = load_trials([tmp_path / "export.csv"])
    assert set(raw["condition"]) == set(tidy["condition"]) == {"my-run (high)"}
    # the raw root and its export together: one run, counted once
    both = load_trials([root, tmp_path / "export.csv"])
    assert len(both) == 5


def test_provider_filtered_column_marks_filtered_trials(tmp_path: Path) -> None:
    rows = trial_rows().drop(columns=["status"])
    filtered = (rows["scenario_id"] == "s-hold-1") & (rows["model"] == "model-b")
    rows["provider_filtered"] = filtered
    rows.to_csv(tmp_path / "flag.csv", index=False)
    trials = load_trials([tmp_path / "flag.csv"])
    assert (trials["status"].astype(str) == "provider_filtered").sum() == 5
    cells = score_cells(trials, scenarios_frame())
    assert int(cells["provider_filtered"].sum()) == 1


def test_provider_filtered_column_contradicting_status_is_refused(tmp_path: Path) -> None:
    rows = trial_rows()
    rows["provider_filtered"] = False
    rows.to_csv(tmp_path / "clash.csv", index=False)
    with pytest.raises(VerdictError, match=r"clash\.csv: scenario 's-hold-1'.*provider_filtered"):
        load_trials([tmp_path / "clash.csv"])


def test_empty_run_dir(tmp_path: Path) -> None:
    (tmp_path / "nothing").mkdir()
    assert discover_runs(tmp_path / "nothing") == []


def test_unknown_label_in_a_file_names_the_file(tmp_path: Path) -> None:
    path = write_scenarios_detail(trials_frame(), scenarios_frame(), tmp_path / "d.json")
    doc = json.loads(path.read_text())
    doc["scenarios"][0]["model_verdicts"][0]["trials"][2]["commit_permission"] = "ALLOW"
    path.write_text(json.dumps(doc))
    with pytest.raises(VerdictError, match=r"d\.json: unknown commit_permission.*'ALLOW'"):
        load_scenarios_detail(path)
    rows = trial_rows()
    rows.loc[0, "commit_permission"] = "hold"
    rows.to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(VerdictError, match=r"t\.csv: unknown commit_permission.*'hold'"):
        load_tidy(tmp_path / "t.csv")


def test_a_runs_folder_asked_for_that_is_not_there_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=f"{tmp_path / 'nowhere'}: no such folder"):
        load_trials(runs_dir=tmp_path / "nowhere")


def test_a_runs_folder_without_published_verdicts_says_so_once_with_the_remedy(
    tmp_path: Path,
) -> None:
    from analysis.trials.discovery import NoPublishedVerdictsWarning

    runs = tmp_path / "runs"
    (runs / "mine").mkdir(parents=True)
    trial_rows().to_csv(runs / "mine" / "t.csv", index=False)
    with pytest.warns(NoPublishedVerdictsWarning) as said:
        assert len(load_trials(runs_dir=runs)) == 40
    (message,) = [str(w.message) for w in said]
    assert "no published per-trial verdicts" in message
    assert f"{runs / paths.release() / 'scenarios-detail.json'} is absent" in message
    release = paths.release_dir() / "results" / paths.release() / "scenarios-detail.json"
    assert f"put the release's scenarios-detail.json at {release} and run `make data`" in message
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_trials(runs_dir=runs)  # said once
    results = runs / paths.results_dir().name
    write_scenarios_detail(trials_frame(), scenarios_frame(), results / "scenarios-detail.json")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_trials(runs_dir=runs / ".." / "runs")  # present: nothing to say


def test_folders_load_as_a_user_points_at_them(tmp_path: Path) -> None:
    """The reference-policies folder, a folder of tables, a run root beside its own export."""
    from analysis.runner.tidy import export_tidy

    reference = load_trials([paths.reference_runs_dir()])
    assert set(reference["source"].astype(str)) == {"reference-policy"}
    config = {"model": "vendor/model-x", "label": "mine", "reasoning_effort": "high"}
    root = _raw_root(tmp_path / "runs" / "root", config, [A, A, B, A, N])
    export_tidy([root], tmp_path / "runs" / "root.csv")
    for given in ([tmp_path / "runs"], [root, tmp_path / "runs" / "root.csv"]):
        trials = load_trials(given)
        assert trials.groupby("condition", observed=True).size().to_dict() == {"mine (high)": 5}


def test_a_missing_path_is_named_missing(tmp_path: Path) -> None:
    for missing in (tmp_path / "runs" / "nowhere", tmp_path / "verdicts.csv"):
        with pytest.raises(VerdictError) as error:
            load_trials([missing])
        assert str(error.value) == f"{missing}: no such file or folder"


def test_a_folder_of_nothing_readable_names_the_three_layouts(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(VerdictError) as error:
        load_trials([tmp_path])
    message = str(error.value)
    assert message.startswith(f"{tmp_path}: holds no run root (RUN_PLAN.json)")
    assert "no Inspect log" in message and "no tidy table (*.parquet, *.csv" in message
    results = tmp_path / "results"
    results.mkdir()
    (results / paths.RELEASE_MANIFEST).write_text("{}")
    with pytest.raises(VerdictError, match=r"results folder without scenarios-detail\.json"):
        load_trials([results])


def test_the_verdict_writer_writes_a_missing_scenario_value_as_null(tmp_path: Path) -> None:
    """JSON has no NaN (upstream's JSON.parse refuses it): a missing value is null."""
    scenarios = scenarios_frame().assign(tier=float("nan"), weight=np.float64("nan"))
    path = write_scenarios_detail(trials_frame(), scenarios, tmp_path / "scenarios-detail.json")

    def refuse(constant: str) -> None:
        raise AssertionError(f"{path} holds {constant}")

    doc = json.loads(path.read_text(), parse_constant=refuse)
    assert {(s["tier"], s["weight"]) for s in doc["scenarios"]} == {(None, None)}


def _trials_frame(rng: np.random.Generator, source: str, models: list[str]) -> pd.DataFrame:
    from analysis.trials.schema import normalize_trials

    rows = [
        {
            "scenario_id": f"s-{s:02d}",
            "model": model,
            "reasoning": reasoning,
            "trial": trial,
            "commit_permission": rng.choice(["allowed", "blocked", None]),
            "status": "ok",
            "source": source,
        }
        for s in rng.choice(12, size=6, replace=False)
        for model in models
        for reasoning in ("off", "high (provider default)")
        for trial in (1, 2, 3)
    ]
    frame = pd.DataFrame(rows)
    frame["status"] = np.where(frame["commit_permission"].isna(), "parse_failed", "ok")
    return normalize_trials(frame, origin=source)


def test_combining_trials_tables_equals_normalizing_their_rows_again() -> None:
    from analysis.trials import schema

    rng = np.random.default_rng(5)
    for _ in range(10):
        frames = [
            _trials_frame(rng, "published", ["b-model", "a (x)"]),
            _trials_frame(rng, "run", ["zz"]),
            _trials_frame(rng, "reference-policy", ["always-hold", "Émile"]),
        ]
        assert all(schema._is_trials_table(frame) for frame in frames)
        combined = schema.combine_trials(frames)
        plain = pd.concat([f.astype(object) for f in frames], ignore_index=True)
        again = schema.normalize_trials(plain, origin="trials", check_counts=False)
        pd.testing.assert_frame_equal(combined, again, check_exact=True)
    # a table that is not one as normalize_trials makes it goes through its rows again
    condition = frames[1]["condition"]
    renamed = frames[1].assign(
        condition=condition.cat.rename_categories({condition.cat.categories[0]: "other"})
    )
    assert not schema._is_trials_table(renamed)
    assert set(schema.combine_trials([frames[0], renamed])["condition"]) >= {"zz (off)"}
    with pytest.raises(VerdictError, match="duplicate"):
        schema.combine_trials([frames[1], frames[1]])
