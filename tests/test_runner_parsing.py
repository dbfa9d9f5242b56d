"""The response parser: upstream's own parser on the parity cases and edge replies, and the
strict format contract on the parity cases."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from upstream import node, upstream_dir

from analysis import paths
from analysis.corpus.parsing import parse_response
from analysis.corpus.vocabulary import required_gate

if not paths.parity_vectors().exists():
    pytest.skip("run `make data` first", allow_module_level=True)

PARSE_SCRIPT = Path(__file__).parent / "upstream_node" / "parse_replies.mjs"
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


#: Replies at every branch of the extractor: whole-reply JSON of each type, the first-brace
#: to last-brace span, the field patterns, inference, wrong types and JavaScript's own
#: truthiness, NaN and Number().
EDGE_REPLIES = [
    "",
    "blocked",
    '["blocked"]',
    "0",
    "5",
    "null",
    '""',
    "[]",
    "{}",
    "NaN",
    '{"commit_permission":null}',
    "{not json",
    '{"commit_permission":"Allowed"}',
    '{"commit_permission":"blocked ","policy_action":"continue"}',
    '{"policy_action":"escalate"}',
    '{"policy_action":"show_progress"}',
    '{"policy_action":"ask_clarification"}',
    '{"policy_action":"hold"}',
    '```json\n{"commit_permission":"blocked"}\n```',
    'The gate should hold. {"commit_permission":"blocked"} done',
    'two {"commit_permission":"allowed"} and {"commit_permission":"blocked"}',
    'first {"policy_action":"continue"} then {x}',
    '{"policy_action": "continue", "commit_perm',
    '"commit_permission": "allowed", "confidence": 1.2.3, "reason": "a\\"b"',
    'x "policy_action" : "continue" "confidence": . "reason": ""',
    '"reason": "line\\\nbreak" "commit_permission":"blocked"',
    '"commit_permission":\u00a0"blocked", "human_required": true, "clarification_mode": "x"',
    '{"policy_action":7}',
    '{"policy_action":[1,null,"a"],"clarification_mode":{"a":1}}',
    '{"clarification_mode":"","commit_permission":"blocked","reason":0,"confidence":1e400}',
    '{"_parse_recovered":[],"commit_permission":"allowed","confidence":2.0}',
    '{"confidence": NaN, "commit_permission":"allowed"}',
    '{"commit_permission":"allowed","confidence":"0.9","human_required":1,"reason":["r"]}',
]
VERDICT_FIELDS = (
    "policy_action",
    "commit_permission",
    "human_required",
    "clarification_mode",
    "confidence",
    "reason",
    "parse_recovered",
    "parse_failed",
)


def _as_upstream_writes(text: str) -> dict:
    verdict = parse_response(text)
    fields = {name: getattr(verdict, name) for name in VERDICT_FIELDS}
    fields["normalization_warnings"] = list(verdict.warnings)
    return json.loads(json.dumps(fields))


def test_the_extractor_is_upstreams(tmp_path) -> None:
    """Every parity case's reply and every edge reply, through upstream's own parser."""
    replies = EDGE_REPLIES + [case["response"] for case in CASES]
    cases = tmp_path / "replies.json"
    cases.write_text(json.dumps(replies), encoding="utf-8")
    done = subprocess.run(
        [node(), str(PARSE_SCRIPT), str(upstream_dir()), str(cases)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    theirs = json.loads(done.stdout)
    assert len(theirs) == len(replies)
    for text, expected in zip(replies, theirs, strict=True):
        assert _as_upstream_writes(text) == expected, text


@pytest.mark.parametrize(
    ("text", "permission", "recovered", "warning"),
    [
        ('```json\n{"commit_permission":"blocked"}\n```', "blocked", False, None),
        ('The gate should hold. {"commit_permission":"blocked"} done', "blocked", False, None),
        ('{"policy_action":"escalate"}', "blocked", True, "inferred from policy_action"),
        ('{"policy_action":"show_progress"}', "allowed", True, "inferred from policy_action"),
        ('say "commit_permission": "allowed" and more', "allowed", True, None),
    ],
)
def test_extractor_recovers(text: str, permission: str, recovered: bool, warning) -> None:
    verdict = parse_response(text)
    assert verdict.commit_permission == permission
    assert verdict.parse_recovered is recovered
    assert not verdict.parse_failed and not verdict.format_ok
    assert warning is None or any(warning in w for w in verdict.warnings)


@pytest.mark.parametrize(
    "text",
    ["", "blocked", '["blocked"]', '{"commit_permission":null}', "{not json", None,
     '{"commit_permission":"Allowed"}'],
)  # fmt: skip
def test_no_decision(text: str | None) -> None:
    verdict = parse_response(text)
    assert verdict.commit_permission is None and verdict.parse_failed


def test_a_policy_action_without_a_permission_is_parsed_without_a_decision() -> None:
    verdict = parse_response('{"policy_action":"ask_clarification"}')
    assert verdict.commit_permission is None and not verdict.parse_failed


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


def test_invalid_optional_fields() -> None:
    verdict = parse_response(
        '{"commit_permission":"allowed","confidence":"7","human_required":"yes",'
        '"clarification_mode":"later"}'
    )
    assert verdict.commit_permission == "allowed" and verdict.format_ok
    assert verdict.confidence is None and verdict.human_required is None
    assert verdict.clarification_mode is None
    assert verdict.warnings == ('clarification_mode "later" not in allowed set',)
