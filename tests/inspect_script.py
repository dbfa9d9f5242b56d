"""Scripted replies fed to both runners: the local fake server and Inspect's ``mockllm``.

``reply_kind(index, trial)`` picks, for the scenario at ``index`` (id order) and a trial, one
of ``KINDS``; each kind is rendered once as a chat-completions HTTP reply and once as an
Inspect ``ModelOutput``. Each side counts the calls per scenario, so its k-th call for a
scenario is trial k (both runners run one request at a time in the tests).
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from typing import Any

from fake_openai_server import chat_reply

BLOCKED_JSON = json.dumps({"policy_action": "escalate", "commit_permission": "blocked"})
ALLOWED_JSON = json.dumps({"policy_action": "continue", "commit_permission": "allowed"})

#: kind -> (reply text, finish reason); "filtered" is a provider refusal on both sides.
KINDS: dict[str, tuple[str, str]] = {
    "strict_allowed": (ALLOWED_JSON, "stop"),
    "strict_blocked": (BLOCKED_JSON, "stop"),
    "fenced": ("Here it is:\n```json\n" + ALLOWED_JSON + "\n```", "stop"),
    "prose": ("My decision is " + BLOCKED_JSON + " as shown.", "stop"),
    "case": (json.dumps({"commit_permission": "ALLOWED"}), "stop"),
    "inferred": (json.dumps({"policy_action": "request_approval"}), "stop"),
    "no_json": ("I would rather not say.", "stop"),
    "truncated_decided": (BLOCKED_JSON, "length"),
    "truncated_cut": ('{"policy_action": "continue", "commit_perm', "length"),
    "filtered": ("", "content_filter"),
}
KIND_NAMES = tuple(KINDS)
CYBER_POLICY_ERROR = json.dumps(
    {"error": {"message": "flagged", "type": "invalid_request_error", "code": "cyber_policy"}}
)


def reply_kind(index: int, trial: int) -> str:
    """The kind of reply scenario ``index`` gets on ``trial`` (1-based)."""
    return KIND_NAMES[(index + 3 * trial) % len(KIND_NAMES)]


def scenario_of(user_text: str) -> str:
    """The scenario id on the user message's first line (``scenario_id: ...``)."""
    first = user_text.splitlines()[0]
    return first.removeprefix("scenario_id:").strip()


class Script:
    """Per-scenario call counters over the sorted scenario ids."""

    def __init__(self, scenario_ids: list[str]) -> None:
        self.index = {sid: i for i, sid in enumerate(sorted(scenario_ids))}
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def next_kind(self, user_text: str) -> tuple[str, int, str]:
        """(scenario id, trial, kind) of the next call for the message's scenario."""
        sid = scenario_of(user_text)
        with self._lock:
            self.calls[sid] += 1
            trial = self.calls[sid]
        return sid, trial, reply_kind(self.index[sid], trial)

    def http_reply(self, n: int, body: dict[str, Any]) -> tuple[int, str, float]:
        """The fake server's answer to a chat-completions request."""
        _, _, kind = self.next_kind(body["messages"][1]["content"])
        if kind == "filtered":
            return 400, CYBER_POLICY_ERROR, 0.0
        text, finish = KINDS[kind]
        return 200, chat_reply(text, finish), 0.0

    def model_output(self, messages: list, tools: Any, tool_choice: Any, config: Any) -> Any:
        """``mockllm``'s custom output for a generate call."""
        from inspect_ai.model import ModelOutput, ModelUsage

        user = next(m.text for m in messages if m.role == "user")
        _, _, kind = self.next_kind(user)
        text, finish = KINDS[kind]
        stop = {"stop": "stop", "length": "max_tokens", "content_filter": "content_filter"}
        output = ModelOutput.from_content(model="mockllm", content=text, stop_reason=stop[finish])
        output.usage = ModelUsage(input_tokens=600, output_tokens=40, total_tokens=640)
        return output
