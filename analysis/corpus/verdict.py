"""One Inspect AI generation -> one trial's verdict, by the runner's own parser and statuses.

Shared by the ``steerbench_work`` scorer and the Inspect log reader, so a log is read with
the rule it was scored with. Needs no Inspect import: it reads the ``ModelOutput`` fields
(``choices[0].stop_reason``, ``stop_details``, the message's content parts) by name.
Classified as the release's runner classifies the reply the provider sent:

* an errored sample (no output) is ``infrastructure_failed``;
* a request the provider rejected under its cyber policy (the release runner's HTTP 400 with
  code ``cyber_policy``; Inspect's stop reason ``content_filter`` with the category
  ``cyber``) is ``provider_filtered``: not the model's decision, no permission;
* every other reply is the model's: its text, without the content parts flagged as a
  refusal (the release's runner reads ``message.content`` only, never ``refusal``), goes
  through :func:`analysis.corpus.parsing.parse_response`, and the status follows
  :func:`analysis.corpus.parsing.status_for`. An empty reply stopped by a content filter, or a
  refusal, is ``parse_failed``: a trial without a decision, scored as not correct. A reply
  cut at the token limit (stop reason ``max_tokens``) is ``truncated`` when it still parses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from analysis.corpus.parsing import (
    INFRASTRUCTURE_FAILED,
    PROVIDER_FILTERED,
    parse_response,
    status_for,
)

STRICT = "strict"
RECOVERED = "recovered"
FAILED = "failed"
#: Inspect's stop reasons for a reply cut at the output-token limit.
TRUNCATED_STOP_REASONS = frozenset({"max_tokens"})
FILTERED_STOP_REASONS = frozenset({"content_filter"})
#: The stop category Inspect gives a request rejected under the provider's cyber policy.
CYBER_CATEGORY = "cyber"


@dataclass(frozen=True)
class TrialVerdict:
    """A trial's permission (None: no decision), status and parse status.

    ``parse_status`` is ``strict`` (the whole reply is the JSON object the contract asks
    for), ``recovered`` (read otherwise: from a JSON span in surrounding text, by field
    patterns, or a permission inferred from the policy action; or a policy action without a
    permission) or ``failed``; None when no reply was parsed (filtered or failed before the
    model answered).
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
    """True when the output stands for a request rejected under the provider's cyber policy."""
    if _stop_reason(output) not in FILTERED_STOP_REASONS:
        return False
    choices = getattr(output, "choices", None) or []
    details = getattr(output, "stop_details", None) or (
        getattr(choices[0], "stop_details", None) if choices else None
    )
    if details is None:
        return False
    categories = [getattr(c, "category", None) for c in getattr(details, "categories", []) or []]
    return CYBER_CATEGORY in (getattr(details, "category", None), *categories)


def reply_text(output: Any) -> str:
    """The reply's text as the release's runner reads it: the text parts joined, those flagged
    as a refusal left out (reasoning parts are never text)."""
    choices = getattr(output, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "".join(
        text
        for part in content
        if getattr(part, "type", None) == "text"
        and not getattr(part, "refusal", None)
        and isinstance(text := getattr(part, "text", None), str)
    )


def trial_verdict(output: Any, error: Any = None) -> TrialVerdict:
    """The verdict of one generation (``output`` an Inspect ``ModelOutput``, or None)."""
    if error is not None or output is None:
        return TrialVerdict(None, INFRASTRUCTURE_FAILED, None)
    if provider_filtered(output):
        return TrialVerdict(None, PROVIDER_FILTERED, None)
    verdict = parse_response(reply_text(output))
    truncated = _stop_reason(output) in TRUNCATED_STOP_REASONS
    parse_status = FAILED if verdict.parse_failed else STRICT if verdict.format_ok else RECOVERED
    return TrialVerdict(
        verdict.commit_permission,
        status_for(verdict, truncated),
        parse_status,
        verdict.warnings,
    )
