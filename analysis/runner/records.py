"""A run root's trial and cell records, field for field as the release's runner writes them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from analysis.corpus.inputs import PinnedScenario
from analysis.corpus.parsing import PROVIDER_FILTERED, UNSCORED_STATUSES
from analysis.corpus.vocabulary import TIER_WEIGHT
from analysis.runner.cells import score_cell
from analysis.runner.gates import GateOutcome


def trial_record(identity: dict[str, Any], outcome: GateOutcome, required: str) -> dict[str, Any]:
    """A trial file's record, field for field as the release's runner writes it: a call that
    failed records no verdict fields (``correct`` null); an answered call records the parsed
    verdict, ``correct`` null when it carries no permission."""
    verdict = outcome.verdict
    transport = {
        "error": outcome.error,
        "http_status": outcome.http_status,
        "attempts": outcome.attempts,
    }
    if outcome.status in UNSCORED_STATUSES or verdict is None:
        return {
            **identity,
            "status": outcome.status,
            "commit_permission": None,
            "policy_action": None,
            "human_required": None,
            "clarification_mode": None,
            "confidence": None,
            "reason": None,
            "correct": None,
            "truncated": False,
            "parse_failed": False,
            "normalization_warnings": [],
            **transport,
            "transient_attempts_exhausted": outcome.transient_attempts_exhausted,
            "usage": None,
            "wall_ms": outcome.wall_ms,
            "response_id": None,
            "request_body": outcome.request_body,
            "response_body_raw": outcome.response_body_raw,
            "response_body_parsed": None,
            "raw_text": None,
        }
    permission = verdict.commit_permission
    return {
        **identity,
        "status": outcome.status,
        "commit_permission": permission,
        "policy_action": verdict.policy_action,
        "human_required": verdict.human_required,
        "clarification_mode": verdict.clarification_mode,
        "confidence": verdict.confidence,
        "reason": verdict.reason,
        "correct": None if permission is None else permission == required,
        "truncated": outcome.truncated,
        "parse_recovered": verdict.parse_recovered,
        "parse_failed": verdict.parse_failed,
        "normalization_warnings": list(verdict.warnings),
        **transport,
        "usage": outcome.usage,
        "wall_ms": outcome.wall_ms,
        "response_id": outcome.response_id,
        "request_body": outcome.request_body,
        "response_body_raw": outcome.response_body_raw,
        "response_body_parsed": outcome.response_body_parsed,
        "raw_text": outcome.raw_text,
    }


def cell_record(
    *,
    identity: dict[str, Any],
    config: dict[str, Any],
    meta: dict[str, Any],
    scenario: PinnedScenario,
    trials: Sequence[dict[str, Any]],
) -> dict[str, Any]:
    """A cell's record: its taxonomy, its trials' permissions and the cell score."""
    tier = meta.get("irreversibility_class")
    return {
        "run_id": identity["run_id"],
        "variant": identity["variant_key"],
        "model": config.get("model"),
        "reasoning_effort": config.get("reasoning_effort"),
        "reasoning_label": config.get("reasoning_label"),
        "variant_config_hash": identity["variant_config_hash"],
        "scenario_id": scenario.id,
        "scenario_sha256": scenario.sha256,
        "expected_action": scenario.expected_action,
        "direction": meta.get("direction"),
        "functional_category": meta.get("functional_category"),
        "domain": meta.get("domain"),
        "source_provenance": meta.get("source_provenance"),
        "irreversibility_class": tier,
        "irreversibility_weight": TIER_WEIGHT.get(tier, 1) if isinstance(tier, str) else 1,
        "action_effect": meta.get("action_verb"),
        "integrity_flags": list(scenario.flag_line("integrity_flags")),
        "provider_filtered": bool(trials) and all(t["status"] == PROVIDER_FILTERED for t in trials),
        **score_cell([t["commit_permission"] for t in trials], scenario.required_commit_permission),
    }
