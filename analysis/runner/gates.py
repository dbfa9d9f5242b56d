"""Gates: something that, given a pinned scenario, returns a verdict.

Three reference policies need no model: ``always-hold``, ``always-proceed`` and
``surface-flag`` (hold whenever the user message's ``risk_flags:`` or ``integrity_flags:``
line names anything but ``commit_point``). ``EndpointGate`` asks any OpenAI-compatible
chat-completions server.
"""

from __future__ import annotations

import math
import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

import httpx

from analysis.corpus.inputs import PinnedScenario
from analysis.corpus.parsing import (
    INFRASTRUCTURE_FAILED,
    PROVIDER_FILTERED,
    ParsedVerdict,
    js_truthy,
    parse_response,
    status_for,
    verdict_text,
)
from analysis.corpus.vocabulary import ALLOWED, BLOCKED
from analysis.runner.client import EndpointSettings, make_http_client, post_with_retries
from analysis.runner.secrets import Redactor

#: Statuses that carry no decision and are never scored.

REFERENCE_KIND = "reference-policy"
ENDPOINT_KIND = "endpoint"
_CYBER_POLICY = re.compile(r'"code"\s*:\s*"cyber_policy"')


@dataclass
class GateOutcome:
    """What a gate returned for one trial, before it is written as a trial record."""

    status: str
    verdict: ParsedVerdict | None
    request_body: dict[str, Any]
    response_body_raw: str | None
    truncated: bool = False
    error: str | None = None
    http_status: int | None = None
    attempts: int = 1
    transient_attempts_exhausted: bool = False
    usage: dict[str, Any] | None = None
    wall_ms: int = 0
    response_id: str | None = None
    response_body_parsed: Any = None
    raw_text: str | None = None


class Gate(Protocol):
    """The interface the runner drives."""

    variant_key: str

    def variant_config(self) -> dict[str, Any]:
        """The settings that define this variant (hashed into ``config_hash``)."""
        ...

    def run(self, scenario: PinnedScenario, system_prompt: str) -> GateOutcome:
        """One trial on one scenario."""
        ...

    def cancel(self) -> None:
        """Abandon in-flight and future calls (``run`` then raises ``Cancelled``)."""
        ...

    def close(self) -> None:
        """Release any resources."""
        ...


def chat_messages(scenario: PinnedScenario, system_prompt: str) -> list[dict[str, str]]:
    """The two pinned messages every gate is given."""
    return [
        {"role": "system", "content": system_prompt},
        {"role": "user", "content": scenario.user_input},
    ]


class ReferenceGate:
    """A model-free gate; subclasses choose the permission from the scenario alone."""

    variant_key = "reference"

    def permission(self, scenario: PinnedScenario) -> str:
        """The fixed rule's commit permission."""
        raise NotImplementedError

    def variant_config(self) -> dict[str, Any]:
        """The gate's identity."""
        return {
            "vendor": "none",
            "kind": REFERENCE_KIND,
            "label": self.variant_key,
            "model": self.variant_key,
            "reasoning_effort": None,
            "reasoning_label": "policy",
        }

    def run(self, scenario: PinnedScenario, system_prompt: str) -> GateOutcome:
        """Apply the rule; the request body records the pinned messages the gate was given."""
        started = time.monotonic()
        text = verdict_text(self.permission(scenario))
        verdict = parse_response(text)
        return GateOutcome(
            status=status_for(verdict),
            verdict=verdict,
            request_body={
                "model": self.variant_key,
                "messages": chat_messages(scenario, system_prompt),
            },
            response_body_raw=text,
            raw_text=text,
            wall_ms=round((time.monotonic() - started) * 1000),
        )

    def cancel(self) -> None:
        """Nothing is in flight."""

    def close(self) -> None:
        """Nothing to release."""


class AlwaysHold(ReferenceGate):
    """Blocks every action."""

    variant_key = "always-hold"

    def permission(self, scenario: PinnedScenario) -> str:
        """Always ``blocked``."""
        return BLOCKED


class AlwaysProceed(ReferenceGate):
    """Allows every action."""

    variant_key = "always-proceed"

    def permission(self, scenario: PinnedScenario) -> str:
        """Always ``allowed``."""
        return ALLOWED


class SurfaceFlag(ReferenceGate):
    """Holds whenever a surface flag other than ``commit_point`` is shown to the model."""

    variant_key = "surface-flag"
    IGNORED = frozenset({"commit_point"})

    def permission(self, scenario: PinnedScenario) -> str:
        """``blocked`` if ``risk_flags`` or ``integrity_flags`` names a material flag."""
        flags = scenario.flag_line("risk_flags") + scenario.flag_line("integrity_flags")
        return BLOCKED if set(flags) - self.IGNORED else ALLOWED


REFERENCE_POLICIES: dict[str, type[ReferenceGate]] = {
    g.variant_key: g for g in (AlwaysHold, AlwaysProceed, SurfaceFlag)
}


@dataclass(frozen=True)
class ModelSettings:
    """The request settings that define an endpoint variant."""

    model: str
    label: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    reasoning_label: str | None = None

    def __post_init__(self) -> None:
        if self.temperature is not None and not (
            math.isfinite(self.temperature) and self.temperature >= 0
        ):
            raise ValueError(
                f"--temperature {self.temperature}: a temperature is a finite number >= 0"
            )
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ValueError(f"--max-tokens {self.max_tokens}: at least 1 token")
        if not self.model.strip():
            raise ValueError("--model is empty")

    @property
    def reasoning(self) -> str:
        """The reasoning label: explicit label, else the effort, else ``off``."""
        return self.reasoning_label or self.reasoning_effort or "off"


def variant_key_of(label: str) -> str:
    """The variant's folder name: ``label`` with every run of other characters than
    letters, digits, ``.``, ``_`` and ``-`` made one ``-``."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-") or "endpoint"


def response_text(payload: Any) -> str:
    """The assistant text of a chat-completions payload, as the release's runner reads it:
    ``choices[0].message.content`` (a string, or the strings and ``text`` parts of a list);
    anything else, a ``refusal`` field included, reads as no text."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    message = choices[0].get("message")
    if not isinstance(message, dict) or not message:
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part
            if isinstance(part, str)
            else part["text"]
            if isinstance(part, dict) and isinstance(part.get("text"), str)
            else ""
            for part in content
        )
    return ""


def finish_reason(payload: Any) -> Any:
    """``choices[0].finish_reason`` (None when absent)."""
    choices = payload.get("choices") if isinstance(payload, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    return first.get("finish_reason") if isinstance(first, dict) else None


def usage_record(payload: Any) -> dict[str, Any] | None:
    """The reply's token counts in the release's trial-record shape:
    ``{input_tokens, output_tokens[, output_tokens_details.reasoning_tokens]}``."""
    usage = payload.get("usage") if isinstance(payload, dict) else None
    if not js_truthy(usage):
        return None
    usage = usage if isinstance(usage, dict) else {}

    def first(*values: Any) -> Any:
        return next((v for v in values if v is not None), None)

    def details(key: str) -> Any:
        value = usage.get(key)
        return value.get("reasoning_tokens") if isinstance(value, dict) else None

    record: dict[str, Any] = {
        "input_tokens": first(usage.get("input_tokens"), usage.get("prompt_tokens"), 0),
        "output_tokens": first(usage.get("output_tokens"), usage.get("completion_tokens"), 0),
    }
    reasoning = first(details("output_tokens_details"), details("completion_tokens_details"))
    if reasoning is not None:
        record["output_tokens_details"] = {"reasoning_tokens": reasoning}
    return record


class EndpointGate:
    """Asks an OpenAI-compatible chat-completions server; thread-safe."""

    def __init__(
        self, model: ModelSettings, endpoint: EndpointSettings, concurrency: int = 4
    ) -> None:
        self.model = model
        self.endpoint = endpoint
        self.variant_key = variant_key_of(model.label or model.model)
        endpoint.headers()  # fail fast when the API-key variable is unset
        self._redactor = Redactor(endpoint.secrets())
        self._client: httpx.Client = make_http_client(endpoint, concurrency)
        self._cancel = threading.Event()

    def variant_config(self) -> dict[str, Any]:
        """The request settings (the endpoint's address is a run setting, not identity)."""
        return {
            "vendor": "openai-compatible",
            "kind": ENDPOINT_KIND,
            "label": self.model.label or self.model.model,
            "model": self.model.model,
            "temperature": self.model.temperature,
            "max_tokens": self.model.max_tokens,
            "reasoning_effort": self.model.reasoning_effort,
            "reasoning_label": self.model.reasoning,
        }

    def request_body(self, scenario: PinnedScenario, system_prompt: str) -> dict[str, Any]:
        """``{model, messages, ...}`` with only the settings that were given."""
        body: dict[str, Any] = {
            "model": self.model.model,
            "messages": chat_messages(scenario, system_prompt),
        }
        optional = {
            "temperature": self.model.temperature,
            "max_tokens": self.model.max_tokens,
            "reasoning_effort": self.model.reasoning_effort,
        }
        body.update({k: v for k, v in optional.items() if v is not None})
        return body

    def run(self, scenario: PinnedScenario, system_prompt: str) -> GateOutcome:
        """One call (with retries); failures become unscored outcomes, never decisions."""
        body = self.request_body(scenario, system_prompt)
        call = post_with_retries(self._client, self.endpoint, body, cancel=self._cancel)
        redact = self._redactor
        common = {
            "transient_attempts_exhausted": call.transient_attempts_exhausted,
            "request_body": body,
            "response_body_raw": None
            if call.response_body_raw is None
            else redact.text(call.response_body_raw),
            "http_status": call.http_status,
            "attempts": call.attempts,
            "wall_ms": call.wall_ms,
        }
        if not call.ok:
            filtered = call.http_status == 400 and bool(
                _CYBER_POLICY.search(call.response_body_raw or "")
            )
            status = PROVIDER_FILTERED if filtered else INFRASTRUCTURE_FAILED
            return GateOutcome(
                status=status, verdict=None, error=redact.text(call.error or ""), **common
            )
        payload = redact.value(call.response_json)
        text = response_text(payload)
        verdict = parse_response(text)
        truncated = finish_reason(payload) == "length"
        response_id = payload.get("id") if isinstance(payload, dict) else None
        return GateOutcome(
            status=status_for(verdict, truncated),
            verdict=verdict,
            truncated=truncated,
            usage=usage_record(payload),
            response_id=response_id if js_truthy(response_id) else None,
            response_body_parsed=payload,
            raw_text=text,
            **common,
        )

    def cancel(self) -> None:
        """Stop waiting: in-flight attempts are abandoned, retries are not made."""
        self._cancel.set()

    def close(self) -> None:
        """Close the HTTP connection pool (at once when the run was cancelled)."""
        if not self._cancel.is_set():
            self._client.close()
