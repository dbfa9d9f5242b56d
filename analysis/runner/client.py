"""A client for OpenAI-compatible chat-completions endpoints: deadlines, retries, backoff.

Every attempt has a whole-request deadline (``timeout`` seconds from the first byte sent to
the last byte read), not a per-read timeout, so a server that trickles bytes cannot hold a
request. As in the release's runner, HTTP 408, 429 and 5xx replies, deadlines and network
errors are retried; any other status outside 2xx and a 2xx body that is not JSON are failures
not retried; a 2xx JSON body is the reply, whatever its shape (the gate reads its text).
Waits between attempts honour ``Retry-After`` (seconds or an HTTP date)
and otherwise back off exponentially with jitter. A ``threading.Event`` cancels waits and
abandons in-flight attempts at once.
"""

from __future__ import annotations

import json
import math
import os
import random
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from analysis.runner.secrets import basic_credential, redact_text, url_secrets

#: HTTP statuses worth retrying: rate limits, timeouts and server errors.
TRANSIENT_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: How often a waiting worker looks at the deadline and the cancel event (seconds).
POLL_S = 0.05


class Cancelled(Exception):
    """The run was interrupted while this call was waiting or in flight."""


@dataclass(frozen=True)
class EndpointSettings:
    """Where and how to call the endpoint (not part of a variant's identity)."""

    base_url: str
    api_key_env: str | None = None
    timeout: float = 120.0
    retries: int = 4
    backoff_base: float = 1.5
    backoff_max: float = 60.0
    retry_after_max: float = 300.0

    def __post_init__(self) -> None:
        limits = [
            ("--timeout", self.timeout, "a finite number of seconds > 0", lambda v: v > 0),
            ("--retries", self.retries, "a whole number >= 0", lambda v: v >= 0),
            ("--backoff", self.backoff_base, "a finite number of seconds >= 0", lambda v: v >= 0),
        ]
        for option, value, rule, ok in limits:
            if not (math.isfinite(value) and ok(value)):
                raise ValueError(f"{option} {value}: {rule}")
        url = urlsplit(self.base_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise ValueError(
                f"--base-url {redact_text(self.base_url)!r}: not an http(s) URL with a host"
            )

    @property
    def url(self) -> str:
        """The chat-completions URL under ``base_url`` (its query string kept)."""
        url = httpx.URL(self.base_url)
        path = url.path.rstrip("/")
        if not path.endswith("/chat/completions"):
            path = f"{path}/chat/completions"
        return str(url.copy_with(path=path))

    @property
    def request_url(self) -> str:
        """:attr:`url` without its user info, which is sent as a header instead."""
        return str(httpx.URL(self.url).copy_with(username=None, password=None))

    def _key(self) -> str | None:
        if not self.api_key_env:
            return None
        key = os.environ.get(self.api_key_env)
        if not key:
            raise RuntimeError(f"environment variable {self.api_key_env} is not set")
        return key

    def headers(self) -> dict[str, str]:
        """Request headers: a bearer token from ``api_key_env`` when it is set, else Basic
        credentials from the URL's user info when it has any (the key always wins)."""
        headers = {"content-type": "application/json"}
        key = self._key()
        parts = urlsplit(self.base_url)
        if key:
            headers["authorization"] = f"Bearer {key}"
        elif "@" in parts.netloc:
            user, _, password = parts.netloc.rsplit("@", 1)[0].partition(":")
            credential = basic_credential(unquote(user), unquote(password))
            headers["authorization"] = f"Basic {credential}"
        return headers

    def secrets(self) -> list[str]:
        """The values :class:`~analysis.runner.secrets.Redactor` keeps out of what is written."""
        key = self._key()
        return [*url_secrets(self.base_url), *([key, f"Bearer {key}"] if key else [])]


@dataclass
class CallResult:
    """The outcome of one logical call (after any retries)."""

    ok: bool
    http_status: int | None
    response_body_raw: str | None
    response_json: Any
    error: str | None
    attempts: int
    wall_ms: int
    retry_after_s: float | None = field(default=None, repr=False)
    #: Every attempt failed in a way worth retrying, and no retry was left.
    transient_attempts_exhausted: bool = False


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


def backoff_delay(settings: EndpointSettings, retry: int, rng: random.Random) -> float:
    """The wait before retry ``retry`` (1, 2, ...): exponential, capped, "equal jitter".

    With ``d = min(backoff_max, backoff_base * 2**(retry-1))`` the wait is uniform on
    ``[d/2, d]``, so parallel workers that failed together do not retry together.
    """
    d = min(settings.backoff_max, settings.backoff_base * 2 ** (retry - 1))
    return d / 2 + rng.uniform(0, d / 2)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


class _Attempt:
    """One HTTP attempt run on a helper thread, so the caller can stop waiting for it."""

    def __init__(self, client: httpx.Client, settings: EndpointSettings, body: dict) -> None:
        self.client, self.settings, self.body = client, settings, body
        self.abandoned = threading.Event()
        self.done = threading.Event()
        self.response: httpx.Response | None = None
        self.content = b""
        self.exc: BaseException | None = None

    def run(self) -> None:
        try:
            with self.client.stream(
                "POST",
                self.settings.request_url,
                json=self.body,
                headers=self.settings.headers(),
                timeout=httpx.Timeout(self.settings.timeout),
            ) as response:
                chunks = []
                for chunk in response.iter_bytes():
                    if self.abandoned.is_set():
                        return
                    chunks.append(chunk)
                self.response, self.content = response, b"".join(chunks)
        except BaseException as exc:  # reported to the waiting caller
            self.exc = exc
        finally:
            self.done.set()


def _attempt(
    client: httpx.Client,
    settings: EndpointSettings,
    body: dict,
    cancel: threading.Event | None,
) -> tuple[CallResult, bool]:
    """One attempt within the deadline; returns the result and whether to retry it."""
    started = time.monotonic()
    deadline = started + settings.timeout

    def result(status, text, payload, error, ok=False) -> CallResult:
        elapsed = round((time.monotonic() - started) * 1000)
        return CallResult(ok, status, text, payload, error, 1, elapsed)

    attempt = _Attempt(client, settings, body)
    threading.Thread(target=attempt.run, daemon=True, name="steerbench-http").start()
    while not attempt.done.wait(POLL_S):
        if cancel is not None and cancel.is_set():
            attempt.abandoned.set()
            raise Cancelled()
        if time.monotonic() >= deadline:
            attempt.abandoned.set()
            return result(
                None,
                None,
                None,
                f"timeout: no complete reply within the {settings.timeout} s deadline",
            ), True
    if attempt.exc is not None:
        exc = attempt.exc
        if isinstance(exc, httpx.TimeoutException):
            return result(None, None, None, f"timeout: {redact_text(repr(exc))}"), True
        if isinstance(exc, httpx.TransportError):
            return result(None, None, None, f"network error: {redact_text(repr(exc))}"), True
        raise exc
    response = attempt.response
    assert response is not None
    text = attempt.content.decode("utf-8", errors="replace")
    status = response.status_code
    if not 200 <= status < 300:
        call = result(status, text, None, f"HTTP {status}: {text[:400]}")
        call.retry_after_s = parse_retry_after(response.headers.get("retry-after"))
        return call, status in TRANSIENT_STATUSES
    try:
        payload = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        return result(status, text, None, f"response not JSON: {exc}"), False
    return result(status, text, payload, None, ok=True), False


def post_with_retries(
    client: httpx.Client,
    settings: EndpointSettings,
    body: dict,
    *,
    cancel: threading.Event | None = None,
    rng: random.Random | None = None,
) -> CallResult:
    """POST ``body``, retrying infrastructure failures; raises ``Cancelled`` on ``cancel``.

    At most ``retries`` retries follow the first attempt. Before retry k the wait is the
    server's ``Retry-After`` when it sent one (refused above ``retry_after_max``), else
    :func:`backoff_delay`.
    """
    rng = rng or random.Random()
    total_ms = 0
    for attempt in range(1, settings.retries + 2):
        result, transient = _attempt(client, settings, body, cancel)
        total_ms += result.wall_ms
        result.attempts, result.wall_ms = attempt, total_ms
        if result.ok or not transient:
            return result
        if attempt > settings.retries:
            result.transient_attempts_exhausted = True
            return result
        wait = result.retry_after_s
        if wait is not None and wait > settings.retry_after_max:
            limit = settings.retry_after_max
            result.error = f"{result.error} (Retry-After {wait:.0f} s exceeds {limit:.0f} s)"
            return result
        if wait is None:
            wait = backoff_delay(settings, attempt, rng)
        if cancel is not None:
            if cancel.wait(wait):
                raise Cancelled()
        else:
            time.sleep(wait)
    raise AssertionError("unreachable")


def make_http_client(settings: EndpointSettings, concurrency: int) -> httpx.Client:
    """An httpx client for ``concurrency`` parallel requests.

    The connection count is not capped: an attempt abandoned at its deadline may hold its
    connection until the server lets go, and must not starve the next attempt.
    """
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=concurrency)
    return httpx.Client(timeout=httpx.Timeout(settings.timeout), limits=limits)
