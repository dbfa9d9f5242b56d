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

#: kind -> (reply text, finish reason). "filtered" is a request the provider rejects under its
#: cyber policy (an HTTP 400; Inspect's content-filter output for it); "content_filter" an
#: empty reply stopped by a content filter; "refusal" a reply whose message carries a
#: ``refusal`` and no content.
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
    "content_filter": ("", "content_filter"),
    "refusal": ("I can't help with that.", "stop"),
    "ask_clarification": (json.dumps({"policy_action": "ask_clarification"}), "stop"),
}
KIND_NAMES = tuple(KINDS)
#: Replies only HTTP carries: a request refused for another reason (HTTP 400, no policy code),
#: which Inspect fails as a whole sample, and a JSON body without choices.
HTTP_ONLY_KINDS = ("bad_request", "no_choices")
BAD_REQUEST_ERROR = json.dumps({"error": {"message": "bad input", "code": "invalid_request"}})
CYBER_POLICY_ERROR = json.dumps(
    {"error": {"message": "flagged", "type": "invalid_request_error", "code": "cyber_policy"}}
)


def reply_kind(index: int, trial: int, kinds: tuple[str, ...] = KIND_NAMES) -> str:
    """The kind of reply scenario ``index`` gets on ``trial`` (1-based)."""
    return kinds[(index + 3 * trial) % len(kinds)]


def refusal_reply(refusal: str) -> str:
    """A chat-completions body whose message carries a ``refusal`` and no content."""
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": None, "refusal": refusal},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 600, "completion_tokens": 8, "total_tokens": 608},
        }
    )


def scenario_of(user_text: str) -> str:
    """The scenario id on the user message's first line (``scenario_id: ...``)."""
    first = user_text.splitlines()[0]
    return first.removeprefix("scenario_id:").strip()


class Script:
    """Per-scenario call counters over the sorted scenario ids."""

    def __init__(self, scenario_ids: list[str], kinds: tuple[str, ...] = KIND_NAMES) -> None:
        self.index = {sid: i for i, sid in enumerate(sorted(scenario_ids))}
        self.kinds = kinds
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def next_kind(self, user_text: str) -> tuple[str, int, str]:
        """(scenario id, trial, kind) of the next call for the message's scenario."""
        sid = scenario_of(user_text)
        with self._lock:
            self.calls[sid] += 1
            trial = self.calls[sid]
        return sid, trial, reply_kind(self.index[sid], trial, self.kinds)

    def http_reply(self, n: int, body: dict[str, Any]) -> tuple[int, str, float]:
        """The fake server's answer to a chat-completions request."""
        _, _, kind = self.next_kind(body["messages"][1]["content"])
        if kind == "filtered":
            return 400, CYBER_POLICY_ERROR, 0.0
        if kind == "bad_request":
            return 400, BAD_REQUEST_ERROR, 0.0
        if kind == "no_choices":
            return 200, json.dumps({"id": "chatcmpl-empty", "choices": []}), 0.0
        if kind == "refusal":
            return 200, refusal_reply(KINDS[kind][0]), 0.0
        text, finish = KINDS[kind]
        return 200, chat_reply(text, finish), 0.0

    def model_output(self, messages: list, tools: Any, tool_choice: Any, config: Any) -> Any:
        """``mockllm``'s custom output for a generate call."""
        from inspect_ai.model import (
            ChatCompletionChoice,
            ChatMessageAssistant,
            ContentText,
            ModelOutput,
            ModelUsage,
            StopCategory,
            StopDetails,
        )

        user = next(m.text for m in messages if m.role == "user")
        _, _, kind = self.next_kind(user)
        text, finish = KINDS[kind]
        stop = {"stop": "stop", "length": "max_tokens", "content_filter": "content_filter"}
        if kind == "filtered":  # as Inspect's OpenAI provider renders the HTTP 400
            details = StopDetails(
                type="refusal",
                category="cyber",
                explanation="flagged",
                categories=[StopCategory(category="cyber")],
            )
            output = ModelOutput.from_content(
                model="mockllm", content="flagged", stop_reason="content_filter",
                stop_details=details,
            )  # fmt: skip
            output.usage = ModelUsage(input_tokens=600, output_tokens=0, total_tokens=600)
            return output
        if kind == "refusal":
            message = ChatMessageAssistant(
                content=[ContentText(text=text, refusal=True)], source="generate"
            )
            choice = ChatCompletionChoice(message=message, stop_reason="stop")
            output = ModelOutput(model="mockllm", choices=[choice])
            output.usage = ModelUsage(input_tokens=600, output_tokens=8, total_tokens=608)
            return output
        output = ModelOutput.from_content(model="mockllm", content=text, stop_reason=stop[finish])
        output.usage = ModelUsage(input_tokens=600, output_tokens=40, total_tokens=640)
        return output
