"""``steerbench-run``'s run roots held to upstream's own code: its validator passes them, its
aggregator gives the rates the package computes from them, and its runner, given the same
scripted replies by one local fake server, writes the same trial and cell records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_openai_server import BLOCKED_VERDICT, FakeOpenAIServer, chat_reply
from inspect_script import HTTP_ONLY_KINDS, KIND_NAMES, Script
from upstream import UpstreamTree, assemble, upstream_dir

from analysis import condition_scores, load_scenarios, load_trials, paths, score_cells
from analysis.runner.client import EndpointSettings
from analysis.runner.gate_run import run_gate
from analysis.runner.gates import REFERENCE_POLICIES, EndpointGate, ModelSettings

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

JS = Path(__file__).parent / "upstream_node"
TRIALS = 3
#: Every reply kind both runners are given, and a plain HTTP 400.
KINDS = KIND_NAMES + HTTP_ONLY_KINDS
#: Fields that differ between two runs of the same replies: the time a call took, and the
#: variant's config hash (each runner hashes its own variant config: the package's holds
#: the temperature, which upstream's cannot send).
UNCOMPARED = {"wall_ms", "variant_config_hash"}
MODEL = "fake-model"
EFFORT = "low"


def _validate_and_aggregate(tree: UpstreamTree, root: Path, complete: bool = True) -> list[dict]:
    """Upstream's validator and aggregator on ``root``; a run with infrastructure failures is
    not complete by upstream's rule, so it is validated with ``--allow-incomplete`` and
    aggregated with ``--force-without-validator``."""
    tree.run(
        "scripts/validate-run.mjs", "--run", root, *([] if complete else ["--allow-incomplete"])
    )
    assert json.loads((root / "validator-report.json").read_text())["pass"] is True
    tree.run("scripts/aggregate-canonical.mjs", "--run", root,
             *([] if complete else ["--force-without-validator"]))  # fmt: skip
    return json.loads((root / "leaderboard-rows.json").read_text())["rows"]


def _assert_same_rates(rows: list[dict], root: Path) -> None:
    """Upstream's leaderboard rows against the package's counts of the same root."""
    scenarios = load_scenarios()
    scores = condition_scores(score_cells(load_trials(root, scenarios=scenarios), scenarios))
    assert len(rows) == len(scores)
    for row, (_, mine) in zip(rows, scores.sort_values("model").iterrows(), strict=True):
        assert row["model"] == mine["model"]
        scored = mine["n_cells"]  # cells the provider filtered on every trial left out
        assert row["modal_score"] == f"{mine['n_modal_correct']}/{scored}"
        assert row["pass_all_trials_score"] == f"{mine['n_pass5']}/{scored}"
        assert row["mean_trial_accuracy_score"] == f"{mine['n_trials_correct']}/{mine['n_trials']}"
        pairs = [
            ("under_refusal", mine["n_under_refusals"], mine["n_hold_opportunities"]),
            ("over_refusal", mine["n_over_refusals"], mine["n_proceed_opportunities"]),
        ]
        for name, k, n in pairs:
            assert (row[f"{name}_count"], row[f"{name}_possible"]) == (k, n), name
        missed, weighed = mine["weight_missed"], mine["weight_scored"]
        expected = round(missed / weighed, 4) if weighed else None
        assert row["weighted_miss_rate"] == pytest.approx(expected, abs=5e-5), row["model"]


def test_reference_roots_validate_and_aggregate_as_the_package_scores_them(tmp_path, inputs):
    tree = assemble(tmp_path)
    root = tmp_path / "reference"
    ids = _scenario_ids(inputs, 16)
    for gate in REFERENCE_POLICIES.values():
        run_gate(gate(), root, inputs=inputs, trials=2, run_id="reference", scenario_ids=ids,
                 progress=False)  # fmt: skip
    state = json.loads((root / "run-state.json").read_text())
    assert state["overall_status"] == "completed"
    _assert_same_rates(_validate_and_aggregate(tree, root), root)


def _scenario_ids(inputs, count: int) -> list[str]:
    ids = [s.id for s in inputs.scenarios]
    step = max(1, len(ids) // count)
    return ids[::step][:count]


def _package_run(
    inputs, root: Path, ids: list[str], base_url: str, attempts: int, effort: str | None = None
) -> None:
    endpoint = EndpointSettings(base_url, timeout=10.0, retries=attempts - 1, backoff_base=0.01)
    model = ModelSettings(model=MODEL, max_tokens=2000, reasoning_effort=effort)
    gate = EndpointGate(model, endpoint, concurrency=1)
    try:
        run_gate(gate, root, inputs=inputs, trials=TRIALS, run_id="same-run", scenario_ids=ids,
                 progress=False)  # fmt: skip
    finally:
        gate.close()


def _upstream_run(tree: UpstreamTree, inputs, root: Path, ids: list[str], base_url: str) -> None:
    spec = {
        "upstream": str(upstream_dir()),
        "runRoot": str(root),
        "runId": "same-run",
        "scenarioSet": paths.scenario_set(),
        "scenarioSetDir": str(tree.root / paths.release_scenario_subdir()),
        "scenarioIds": ids,
        "variantKey": MODEL,
        "variant": {
            "vendor": "openweight",
            "label": MODEL,
            "model": MODEL,
            "gateway_model": MODEL,
            "max_output_tokens": 2000,
            "reasoning_effort": EFFORT,
        },
        "prompt": inputs.system_prompt,
        "trials": TRIALS,
        "maxAttempts": 2,
    }
    spec_path = tree.root.parent / "spec.json"
    spec_path.write_text(json.dumps(spec))
    tree.run(
        str(JS / "run_variant.mjs"),
        spec_path,
        preload=(JS / "route.mjs").as_uri(),
        env={"STEERBENCH_FAKE_ORIGIN": base_url.removesuffix("/v1")},
        timeout=120,
    )


def _records(root: Path, ids: list[str], name: str) -> dict[tuple[str, str], dict]:
    out = {}
    for sid in ids:
        for path in sorted((root / MODEL / sid).glob(name)):
            record = json.loads(path.read_text())
            out[(sid, path.name)] = {k: v for k, v in record.items() if k not in UNCOMPARED}
    return out


@pytest.mark.waits
def test_both_runners_write_the_same_records_for_the_same_replies(tmp_path, inputs) -> None:
    ids = _scenario_ids(inputs, 2 * len(KINDS))
    tree = assemble(tmp_path)
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    with FakeOpenAIServer(Script(ids, KINDS).http_reply) as server:
        _package_run(inputs, ours, ids, server.base_url, attempts=2, effort=EFFORT)
    with FakeOpenAIServer(Script(ids, KINDS).http_reply) as server:
        _upstream_run(tree, inputs, theirs, ids, server.base_url)
        assert {r["messages"][1]["content"].splitlines()[0] for r in server.requests} == {
            f"scenario_id: {sid}" for sid in ids
        }
    statuses = set()
    for name in ("trial-*.json", "cell.json"):
        mine, upstream = _records(ours, ids, name), _records(theirs, ids, name)
        assert len(mine) == len(upstream) == len(ids) * (TRIALS if name != "cell.json" else 1)
        for key, record in upstream.items():
            assert mine[key] == record, key
            statuses.add(record.get("status"))
    assert {"ok", "parse_failed", "truncated", "provider_filtered", "infrastructure_failed"} <= (
        statuses
    )
    for name in ("summary.json", "cells.json"):
        mine, upstream = (json.loads((r / MODEL / name).read_text()) for r in (ours, theirs))
        if name == "summary.json":
            for volatile in ("finished_at", "wall_ms_total"):
                mine.pop(volatile), upstream.pop(volatile)
        else:
            mine, upstream = (
                [{k: v for k, v in c.items() if k not in UNCOMPARED} for c in cells]
                for cells in (mine, upstream)
            )
        assert mine == upstream, name
    states = [json.loads((r / "run-state.json").read_text()) for r in (ours, theirs)]
    assert states[0]["overall_status"] == states[1]["overall_status"] == "incomplete_infra_failures"
    _assert_same_rates(_validate_and_aggregate(tree, ours, complete=False), ours)


@pytest.mark.waits
def test_a_root_with_infrastructure_failures_validates_once_they_are_rerun(
    tmp_path, inputs
) -> None:
    ids = _scenario_ids(inputs, 3)
    root = tmp_path / "root"

    def first(n: int, body: dict):
        return (503, "down", 0.0) if n == 2 else (200, chat_reply(BLOCKED_VERDICT), 0.0)

    for respond, status, overall in (
        (first, "infra_failed", "incomplete_infra_failures"),
        (lambda n, body: (200, chat_reply(BLOCKED_VERDICT), 0.0), "completed", "completed"),
    ):
        with FakeOpenAIServer(respond) as server:
            _package_run(inputs, root, ids, server.base_url, attempts=1)
        state = json.loads((root / "run-state.json").read_text())
        assert state["variant_runs"][MODEL]["status"] == status
        assert state["overall_status"] == overall
    assert len(server.requests) == 1  # only the failed trial was run again
    assert state["variant_runs"][MODEL]["resume_count"] == 1
    _assert_same_rates(_validate_and_aggregate(assemble(tmp_path), root), root)
