"""The Inspect task's samples, settings and scorer rule (needs the inspect extra)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from analysis import paths
from analysis.corpus.inputs import PinnedInputError
from analysis.corpus.verdict import trial_verdict
from analysis.corpus.vocabulary import GATE_BY_VERB

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

#: Inspect's import alone takes about 3 s of CPU in each test process: these run with the
#: slower checks (``make test-all``, CI).
pytestmark = pytest.mark.slow

PARITY = json.loads(paths.parity_vectors().read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def steerbench_work():
    """The task function; Inspect is imported when a test here runs, not when the file is
    collected (its import takes about 3 s in every test process)."""
    pytest.importorskip("inspect_ai", reason="needs the inspect extra")
    from analysis.runner.inspect_task import steerbench_work

    return steerbench_work


@pytest.fixture(scope="module")
def task(steerbench_work):
    return steerbench_work()


def test_one_sample_per_pinned_scenario_with_the_pinned_messages(task) -> None:
    samples = {s.id: s for s in task.dataset}
    assert sorted(samples) == sorted(row["id"] for row in PARITY["scenarios"])
    for row in PARITY["scenarios"]:
        sample = samples[row["id"]]
        assert [(m.role, m.text) for m in sample.input] == [
            ("system", PARITY["system_prompt"]),
            ("user", row["user_input"]),
        ]
        assert sample.target == GATE_BY_VERB[row["expected_action"]]


def test_sample_metadata(task, scenarios) -> None:
    table = scenarios.set_index("scenario_id")
    for sample in task.dataset:
        row = table.loc[sample.id]
        meta = sample.metadata
        assert meta["scenario_id"] == sample.id
        assert meta["expected_action"] == row["expected_action"]
        assert meta["required_gate"] == GATE_BY_VERB[row["expected_action"]]
        assert meta["boundary_pattern"] == row["boundary_pattern"]
        assert meta["direction"] == row["direction"]
        assert meta["irreversibility_weight"] == row["tier_weight"]


def test_defaults_follow_the_release_and_task_args_override(task, steerbench_work) -> None:
    configs = json.loads((paths.sample_run_dir() / "VARIANT_CONFIGS.json").read_text())
    [config] = configs["variants"].values()
    assert task.epochs == 5
    assert task.config.max_tokens == config["max_output_tokens"]
    assert task.config.temperature == config.get("temperature")
    other = steerbench_work(temperature=0.7, max_tokens=123, epochs=2)
    assert (other.config.temperature, other.config.max_tokens, other.epochs) == (0.7, 123, 2)


def test_changed_pinned_inputs_stop_the_task_before_any_request(
    tmp_path: Path, steerbench_work
) -> None:
    changed = json.loads(json.dumps(PARITY))
    changed["scenarios"][0]["sha256"] = "0" * 64
    vectors = tmp_path / "parity-vectors.json"
    vectors.write_text(json.dumps(changed))
    with pytest.raises(PinnedInputError, match=changed["scenarios"][0]["id"]):
        steerbench_work(parity_vectors=str(vectors))


def test_the_task_renders_a_scenario_set_with_no_parity_file(
    tmp_path: Path, steerbench_work
) -> None:
    import shutil

    scenarios = shutil.copytree(paths.scenarios_dir(), tmp_path / "scenarios")
    (scenarios / "parity-vectors.json").unlink()
    task = steerbench_work(scenario_dir=str(scenarios))
    users = {s.id: s.input[1].text for s in task.dataset}
    assert users == {row["id"]: row["user_input"] for row in PARITY["scenarios"]}


def _output(text: str, stop_reason: str = "stop", refusal: bool = False):
    """Inspect's ``ModelOutput`` of one reply."""
    model = pytest.importorskip("inspect_ai.model", reason="needs the inspect extra")
    content = [model.ContentText(text=text, refusal=refusal or None)]
    message = model.ChatMessageAssistant(content=content, source="generate")
    choice = model.ChatCompletionChoice(message=message, stop_reason=stop_reason)
    return model.ModelOutput(model="m", choices=[choice])


@pytest.mark.parametrize(
    ("text", "stop_reason", "refusal", "expected"),
    [
        ('{"commit_permission": "allowed"}', "stop", False, ("allowed", "ok", "strict")),
        ('Sure: {"commit_permission": "blocked"}', "stop", False, ("blocked", "ok", "recovered")),
        ('{"commit_permission": "Blocked"}', "stop", False, (None, "parse_failed", "failed")),
        ('{"policy_action": "ask_clarification"}', "stop", False, (None, "ok", "recovered")),
        ('{"policy_action": "continue"}', "stop", False, ("allowed", "ok", "recovered")),
        ("no decision here", "stop", False, (None, "parse_failed", "failed")),
        (
            '{"commit_permission": "blocked"}',
            "max_tokens",
            False,
            ("blocked", "truncated", "strict"),
        ),
        ('{"commit_perm', "max_tokens", False, (None, "parse_failed", "failed")),
        ("", "content_filter", False, (None, "parse_failed", "failed")),
        ('{"commit_permission": "allowed"}', "stop", True, (None, "parse_failed", "failed")),
    ],
)
def test_trial_verdict(text: str, stop_reason: str, refusal: bool, expected: tuple) -> None:
    verdict = trial_verdict(_output(text, stop_reason, refusal))
    assert (verdict.commit_permission, verdict.status, verdict.parse_status) == expected


def test_a_request_rejected_under_the_cyber_policy_is_provider_filtered() -> None:
    model = pytest.importorskip("inspect_ai.model", reason="needs the inspect extra")

    def rejected(category: str | None):
        """What Inspect's OpenAI provider makes of an HTTP 400 naming a content policy."""
        details = model.StopDetails(
            type="refusal",
            category=category,
            explanation="flagged",
            categories=[model.StopCategory(category=category)] if category else [],
        )
        return model.ModelOutput.from_content(
            model="m", content="flagged", stop_reason="content_filter", stop_details=details
        )

    verdict = trial_verdict(rejected("cyber"))
    assert (verdict.commit_permission, verdict.status, verdict.parse_status) == (
        None,
        "provider_filtered",
        None,
    )
    assert trial_verdict(rejected(None)).status == "parse_failed"


def test_an_errored_sample_is_an_infrastructure_failure() -> None:
    verdict = trial_verdict(None, error="rate limited")
    assert (verdict.commit_permission, verdict.status) == (None, "infrastructure_failed")
