"""A tiny OpenAI-compatible chat-completions server on 127.0.0.1 for the runner tests.

The server answers each POST with what ``respond(n, body)`` returns for the n-th request
(1-based): ``(status, body_text, delay_seconds)`` or, with extras,
``(status, body_text, delay_seconds, {"headers": {...}, "trickle_s": seconds})``: extra
response headers (``content-type`` replaces the JSON default) and, with ``trickle_s``, the
body sent one byte at a time that many seconds apart (stopping when the client hangs up).
It records every request body, its headers and path, and the monotonic time each request
arrived.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = tuple[int, str, float] | tuple[int, str, float, dict[str, Any]]


def chat_reply(content: str, finish_reason: str = "stop") -> str:
    """A chat-completions response body carrying ``content``."""
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": finish_reason,
                }
            ],
            "usage": {"prompt_tokens": 600, "completion_tokens": 40, "total_tokens": 640},
        }
    )


BLOCKED_VERDICT = json.dumps(
    {
        "policy_action": "request_approval",
        "commit_permission": "blocked",
        "human_required": True,
        "clarification_mode": "none",
        "confidence": 0.8,
        "reason": "hold",
    }
)


def always_blocked(n: int, body: dict[str, Any]) -> Reply:
    """Every request gets a well-formed ``blocked`` verdict."""
    return 200, chat_reply(BLOCKED_VERDICT), 0.0


class FakeOpenAIServer:
    """Context manager: ``with FakeOpenAIServer(respond) as server: server.base_url``."""

    def __init__(self, respond: Callable[[int, dict[str, Any]], Reply] = always_blocked):
        self.respond = respond
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        self.arrivals: list[float] = []
        self._lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", 0)))
                body = json.loads(raw or b"{}")
                with outer._lock:
                    outer.requests.append(body)
                    outer.headers.append(dict(self.headers))
                    outer.paths.append(self.path)
                    outer.arrivals.append(time.monotonic())
                    n = len(outer.requests)
                reply = outer.respond(n, body)
                status, text, delay = reply[:3]
                extra: dict[str, Any] = reply[3] if len(reply) > 3 else {}
                if delay:
                    time.sleep(delay)
                payload = text.encode("utf-8")
                headers = {"content-type": "application/json", **extra.get("headers", {})}
                try:
                    self.send_response(status)
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    if not extra.get("trickle_s"):
                        self.wfile.write(payload)
                        return
                    for i in range(len(payload)):
                        self.wfile.write(payload[i : i + 1])
                        self.wfile.flush()
                        time.sleep(extra["trickle_s"])
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
