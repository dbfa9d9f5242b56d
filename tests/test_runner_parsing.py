"""The response parser against the release's parity cases and the extractor's rescues."""

from __future__ import annotations

import json

import pytest

from analysis import paths
from analysis.runner.parsing import parse_response
from analysis.vocabulary import required_gate

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

PARITY = json.loads(paths.parity_vectors().read_text(encoding="utf-8"))
CASES = PARITY["response_cases"]


def test_every_case_the_file_counts_is_checked() -> None:
    assert len(CASES) == PARITY["response_case_count"] > 0


@pytest.mark.parametrize("case", CASES, ids=[c["case_id"] for c in CASES])
def test_parity_case(case: dict) -> None:
    verdict = parse_response(case["response"])
    assert verdict.format_ok is case["expected_format_ok"]
    correct = verdict.strict_commit_permission == required_gate(case["expected_action"])
    assert correct is case["expected_correct"]


@pytest.mark.parametrize(
    ("text", "permission", "warning"),
    [
        ('```json\n{"commit_permission":"blocked"}\n```', "blocked", "fenced"),
        ('The gate should hold. {"commit_permission":"blocked"} done', "blocked", "surrounding"),
        ('{"commit_permission":"Allowed"}', "allowed", "case_normalized"),
        ('{"policy_action":"escalate"}', "blocked", "inferred_from_policy_action"),
        ('{"policy_action":"show_progress"}', "allowed", "inferred_from_policy_action"),
    ],
)
def test_extractor_recovers(text: str, permission: str, warning: str) -> None:
    verdict = parse_response(text)
    assert verdict.commit_permission == permission
    assert verdict.parse_recovered and not verdict.parse_failed and not verdict.format_ok
    assert any(warning in w for w in verdict.warnings)


@pytest.mark.parametrize(
    "text", ["", "blocked", '["blocked"]', '{"commit_permission":null}', "{not json", None]
)
def test_no_decision(text: str | None) -> None:
    verdict = parse_response(text)
    assert verdict.commit_permission is None and verdict.parse_failed


def test_full_schema_fields() -> None:
    verdict = parse_response(
        '{"policy_action":"ask_clarification","commit_permission":"blocked",'
        '"human_required":true,"clarification_mode":"refuse_pending_auth",'
        '"confidence":0.94,"reason":"no authorization"}'
    )
    assert verdict.format_ok and not verdict.parse_recovered and verdict.warnings == ()
    assert (verdict.policy_action, verdict.human_required) == ("ask_clarification", True)
    assert (verdict.clarification_mode, verdict.confidence) == ("refuse_pending_auth", 0.94)
    assert verdict.reason == "no authorization"


def test_invalid_optional_fields_are_nulled_with_warnings() -> None:
    verdict = parse_response(
        '{"commit_permission":"allowed","confidence":7,"human_required":"yes",'
        '"clarification_mode":"later"}'
    )
    assert verdict.commit_permission == "allowed" and verdict.format_ok
    assert verdict.confidence is None and verdict.human_required is None
    assert verdict.clarification_mode is None
    assert set(verdict.warnings) == {
        "confidence_invalid",
        "human_required_not_boolean",
        "clarification_mode_invalid",
    }
