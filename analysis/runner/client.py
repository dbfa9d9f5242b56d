"""A client for OpenAI-compatible chat-completions endpoints, with retries and backoff."""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

import httpx

#: HTTP statuses worth retrying: rate limits, timeouts and server errors.
TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class EndpointSettings:
    """Where and how to call the endpoint (not part of a variant's identity)."""

    base_url: str
    api_key_env: str | None = None
    timeout: float = 120.0
    retries: int = 4
    backoff_base: float = 1.5
    backoff_max: float = 60.0

    @property
    def url(self) -> str:
        """The chat-completions URL under ``base_url``."""
        base = self.base_url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

    def headers(self) -> dict[str, str]:
        """Request headers, with a bearer token from ``api_key_env`` when it is set."""
        headers = {"content-type": "application/json"}
        if self.api_key_env:
            key = os.environ.get(self.api_key_env)
            if not key:
                raise RuntimeError(f"environment variable {self.api_key_env} is not set")
            headers["authorization"] = f"Bearer {key}"
        return headers


@dataclass
class CallResult:
    """The outcome of one logical call (after any retries)."""

    ok: bool
    http_status: int | None
    response_body_raw: str | None
    response_json: dict[str, Any] | None
    error: str | None
    attempts: int
    wall_ms: int


def _attempt(
    client: httpx.Client, settings: EndpointSettings, body: dict
) -> tuple[CallResult, bool]:
    """One HTTP attempt; returns the result and whether it is worth retrying."""
    started = time.monotonic()

    def elapsed() -> int:
        return round((time.monotonic() - started) * 1000)

    try:
        response = client.post(settings.url, json=body, headers=settings.headers())
    except httpx.TimeoutException as exc:
        return CallResult(False, None, None, None, f"timeout: {exc!r}", 1, elapsed()), True
    except httpx.TransportError as exc:
        return CallResult(False, None, None, None, f"network error: {exc!r}", 1, elapsed()), True
    text = response.text
    if response.status_code >= 400:
        error = f"HTTP {response.status_code}: {text[:400]}"
        transient = response.status_code in TRANSIENT_STATUSES
        return CallResult(False, response.status_code, text, None, error, 1, elapsed()), transient
    try:
        payload = json.loads(text)
    except ValueError as exc:
        error = f"response not JSON: {exc}"
        return CallResult(False, response.status_code, text, None, error, 1, elapsed()), False
    if not isinstance(payload, dict):
        error = "response JSON is not an object"
        return CallResult(False, response.status_code, text, None, error, 1, elapsed()), False
    return CallResult(True, response.status_code, text, payload, None, 1, elapsed()), False


def post_with_retries(
    client: httpx.Client, settings: EndpointSettings, body: dict, sleep=time.sleep
) -> CallResult:
    """POST ``body``, retrying transient failures with exponential backoff.

    The wait before retry k (k = 1, 2, ...) is ``backoff_base * 2**(k-1)`` seconds, capped
    at ``backoff_max``; at most ``retries`` retries follow the first attempt.
    """
    total_ms = 0
    for attempt in range(1, settings.retries + 2):
        result, transient = _attempt(client, settings, body)
        total_ms += result.wall_ms
        result.attempts, result.wall_ms = attempt, total_ms
        if result.ok or not transient or attempt > settings.retries:
            return result
        sleep(min(settings.backoff_base * 2 ** (attempt - 1), settings.backoff_max))
    raise AssertionError("unreachable")


def make_http_client(settings: EndpointSettings, concurrency: int) -> httpx.Client:
    """An httpx client sized for ``concurrency`` parallel requests."""
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    return httpx.Client(timeout=httpx.Timeout(settings.timeout), limits=limits)
