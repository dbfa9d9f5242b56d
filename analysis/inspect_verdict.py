"""One Inspect AI generation -> one trial's verdict, by the runner's own parser and statuses.

Shared by the ``steerbench_work`` scorer and the Inspect log reader, so a log is read with
the rule it was scored with. Needs no Inspect import: it reads the ``ModelOutput`` fields
(``completion``, ``choices[0].stop_reason``, the message's content parts) by name.

* an errored sample (no output) is ``infrastructure_failed``;
* a provider refusal or content filter (stop reason ``content_filter``, or a content part
  flagged as a refusal) is ``provider_filtered``: not the model's decision, no permission;
* otherwise the completion goes through :func:`analysis.runner.parsing.parse_response`, and
  the status follows :func:`analysis.runner.gates.status_for` (a reply cut at the token
  limit, stop reason ``max_tokens``, is ``truncated`` when it still carries a decision).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.runner.gates import INFRASTRUCTURE_FAILED, PROVIDER_FILTERED, status_for
from analysis.runner.parsing import parse_response

STRICT = "strict"
RECOVERED = "recovered"
FAILED = "failed"
#: Inspect's stop reasons for a reply cut at the output-token limit.
TRUNCATED_STOP_REASONS = frozenset({"max_tokens"})
FILTERED_STOP_REASONS = frozenset({"content_filter"})


@dataclass(frozen=True)
class TrialVerdict:
    """A trial's permission (None: no decision), status and parse status.

    ``parse_status`` is ``strict`` (the whole reply is the JSON object the contract asks
    for), ``recovered`` (a permission read from a fenced block, surrounding prose, a
    case-normalised or inferred value) or ``failed``; None when no reply was parsed
    (filtered or failed before the model answered).
    """

    commit_permission: str | None
    status: str
    parse_status: str | None
    warnings: tuple[str, ...] = ()

    @property
    def filtered(self) -> bool:
        """True when the provider filtered or refused the request."""
        return self.status == PROVIDER_FILTERED


def _stop_reason(output: Any) -> str | None:
    choices = getattr(output, "choices", None) or []
    return getattr(choices[0], "stop_reason", None) if choices else None


def provider_filtered(output: Any) -> bool:
    """True when the output is a content filter or a provider refusal."""
    if _stop_reason(output) in FILTERED_STOP_REASONS:
        return True
    choices = getattr(output, "choices", None) or []
    content = getattr(getattr(choices[0], "message", None), "content", None) if choices else None
    return isinstance(content, list) and any(getattr(p, "refusal", None) for p in content)


def trial_verdict(output: Any, error: Any = None) -> TrialVerdict:
    """The verdict of one generation (``output`` an Inspect ``ModelOutput``, or None)."""
    if error is not None or output is None:
        return TrialVerdict(None, INFRASTRUCTURE_FAILED, None)
    if provider_filtered(output):
        return TrialVerdict(None, PROVIDER_FILTERED, None)
    verdict = parse_response(getattr(output, "completion", None))
    truncated = _stop_reason(output) in TRUNCATED_STOP_REASONS
    parse_status = FAILED if verdict.parse_failed else STRICT if verdict.format_ok else RECOVERED
    return TrialVerdict(
        verdict.commit_permission,
        status_for(verdict, truncated),
        parse_status,
        verdict.warnings,
    )
