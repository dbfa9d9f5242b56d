"""The response parser: a model's reply text -> a normalised verdict.

Two readings of one reply, as the release defines them:

* the **benchmark extractor** (what published trial records hold): the reply is read as a
  JSON object; when the text is not bare JSON, the object is recovered from a fenced code
  block or from the first JSON object embedded in prose (``parse_recovered``); a missing or
  invalid ``commit_permission`` is inferred from ``policy_action`` and an enum written in
  the wrong case is lower-cased, each with a normalisation warning. No object, or no
  permission that can be read or inferred, is a parse failure (no decision).
* the **strict format contract** (``format_ok``; the parity vectors' ``expected_format_ok``):
  the whole reply, surrounding whitespace aside, is one JSON object whose
  ``commit_permission`` is exactly ``"allowed"`` or ``"blocked"``. ``strict_commit_permission``
  is the permission under that contract.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field

from analysis.vocabulary import ALLOWED, BLOCKED, GATE_BY_VERB, GATES

CLARIFICATION_MODES = ("none", "answer_then_commit", "refuse_pending_auth")
#: policy_action -> the commit permission it implies (used only to infer a missing one).
PERMISSION_BY_POLICY_ACTION: dict[str, str] = {**GATE_BY_VERB, "show_progress": ALLOWED}

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\r?\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class ParsedVerdict:
    """A parsed reply: the verdict fields plus how it was obtained."""

    commit_permission: str | None
    policy_action: str | None = None
    human_required: bool | None = None
    clarification_mode: str | None = None
    confidence: float | None = None
    reason: str | None = None
    format_ok: bool = False
    parse_recovered: bool = False
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def parse_failed(self) -> bool:
        """True when no decision could be read (commit_permission is null)."""
        return self.commit_permission is None

    @property
    def strict_commit_permission(self) -> str | None:
        """The permission under the strict format contract (null unless ``format_ok``)."""
        return self.commit_permission if self.format_ok else None


def _bare_object(text: str) -> dict | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _embedded_object(text: str) -> tuple[dict | None, str | None]:
    """The first JSON object in a fenced block, else the first one embedded in the text."""
    for match in _FENCE.finditer(text):
        found = _bare_object(match.group(1).strip())
        if found is not None:
            return found, "json_recovered_from_fenced_block"
    for start in (m.start() for m in re.finditer(r"\{", text)):
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value, "json_recovered_from_surrounding_text"
    return None, None


def _permission(obj: dict, warnings: list[str]) -> str | None:
    value = obj.get("commit_permission")
    if isinstance(value, str) and value in GATES:
        return value
    if isinstance(value, str) and value.strip().lower() in GATES:
        warnings.append("commit_permission_case_normalized")
        return value.strip().lower()
    if value is not None:
        warnings.append("commit_permission_invalid")
    action = obj.get("policy_action")
    if isinstance(action, str) and action.strip().lower() in PERMISSION_BY_POLICY_ACTION:
        warnings.append("commit_permission_inferred_from_policy_action")
        return PERMISSION_BY_POLICY_ACTION[action.strip().lower()]
    if value is None:
        warnings.append("commit_permission_missing")
    return None


def _optional_str(obj: dict, key: str, warnings: list[str]) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    warnings.append(f"{key}_not_a_string")
    return None


def _human_required(obj: dict, warnings: list[str]) -> bool | None:
    value = obj.get("human_required")
    if value is None or isinstance(value, bool):
        return value
    warnings.append("human_required_not_boolean")
    return None


def _clarification_mode(obj: dict, warnings: list[str]) -> str | None:
    value = obj.get("clarification_mode")
    if value is None or value in CLARIFICATION_MODES:
        return value
    warnings.append("clarification_mode_invalid")
    return None


def _confidence(obj: dict, warnings: list[str]) -> float | None:
    value = obj.get("confidence")
    if value is None:
        return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        number = float(value)
        if math.isfinite(number) and 0.0 <= number <= 1.0:
            return number
    warnings.append("confidence_invalid")
    return None


def parse_response(text: str | None) -> ParsedVerdict:
    """Parse a reply as the benchmark extractor does, and record the strict format check."""
    stripped = (text or "").strip()
    obj = _bare_object(stripped)
    warnings: list[str] = []
    recovered = False
    if obj is None:
        obj, how = _embedded_object(stripped)
        if obj is None:
            return ParsedVerdict(None, warnings=("no_json_object",))
        recovered = True
        warnings.append(how or "json_recovered")
    strict_ok = (
        not recovered
        and isinstance(obj.get("commit_permission"), str)
        and obj["commit_permission"] in GATES
    )
    permission = _permission(obj, warnings)
    if permission is not None and not strict_ok:
        recovered = True
    return ParsedVerdict(
        commit_permission=permission,
        policy_action=_optional_str(obj, "policy_action", warnings),
        human_required=_human_required(obj, warnings),
        clarification_mode=_clarification_mode(obj, warnings),
        confidence=_confidence(obj, warnings),
        reason=_optional_str(obj, "reason", warnings),
        format_ok=strict_ok,
        parse_recovered=recovered,
        warnings=tuple(warnings),
    )


def verdict_text(commit_permission: str) -> str:
    """A minimal full-schema reply carrying a fixed permission (used by the reference policies)."""
    blocked = commit_permission == BLOCKED
    return json.dumps(
        {
            "policy_action": "request_approval" if blocked else "continue",
            "commit_permission": commit_permission,
            "human_required": blocked,
            "clarification_mode": "none",
            "confidence": 1.0,
            "reason": "Fixed reference policy.",
        },
        separators=(",", ":"),
    )
