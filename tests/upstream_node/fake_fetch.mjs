// Preloaded with `node --import` ahead of upstream's runner: replaces the global fetch with
// one that answers every model call in-process from a seeded script of replies, so the
// runner writes its run root, cells and trials with no server and no network.
//
// The script (JSON, path in $STEERBENCH_REPLIES) maps variant -> scenario id -> one reply
// kind per trial. The variant being run is globalThis.__steerbenchVariant (set by the
// driver); the scenario id is read from the request's user message.
import fs from "node:fs";

const script = JSON.parse(fs.readFileSync(process.env.STEERBENCH_REPLIES, "utf8"));
const calls = new Map();

function decision(permission, policyAction, extra = {}) {
  return JSON.stringify({
    policy_action: policyAction,
    commit_permission: permission,
    human_required: permission === "blocked",
    clarification_mode: "none",
    confidence: 0.7,
    reason: `scripted ${permission ?? policyAction}`,
    ...extra
  });
}

// Each kind: [reply text or null for an HTTP error, truncated?, HTTP status, error body].
const KINDS = {
  allowed: () => [decision("allowed", "continue"), false],
  blocked: () => [decision("blocked", "request_approval"), false],
  inferred_allowed: () => [JSON.stringify({ policy_action: "show_progress", reason: "no gate" }), false],
  inferred_blocked: () => [JSON.stringify({ policy_action: "escalate", reason: "no gate" }), false],
  ungated: () => [JSON.stringify({ policy_action: "ask_clarification", commit_permission: "maybe" }), false],
  prose_allowed: () => [`I would proceed. {"commit_permission": "allowed", "policy_action": "continue"} done`, false],
  unparseable: () => ["I cannot decide this one.", false],
  empty: () => ["", false],
  truncated_allowed: () => [decision("allowed", "continue"), true],
  truncated_blocked: () => [decision("blocked", "escalate"), true],
  truncated_cut: () => ['{"policy_action": "request_approval", "commit_permission": "blo', true],
  truncated_recovered: () => ['{"policy_action": "continue", "commit_permission": "allowed", "reason": "cut', true],
  filtered: () => [null, false, 400, '{"error": {"message": "flagged", "code": "cyber_policy"}}']
};

function reply(url, kind) {
  const [text, truncated, status = 200, error = ""] = KINDS[kind]();
  if (text === null) return new Response(error, { status, headers: { "content-type": "application/json" } });
  const usage = { input_tokens: 100, output_tokens: 20, prompt_tokens: 100, completion_tokens: 20 };
  const body = String(url).includes("api.openai.com")
    ? {
        id: "resp-scripted",
        status: truncated ? "incomplete" : "completed",
        incomplete_details: truncated ? { reason: "max_output_tokens" } : null,
        output: [{ type: "message", content: [{ type: "output_text", text }] }],
        usage
      }
    : {
        id: "chat-scripted",
        choices: [{ message: { role: "assistant", content: text }, finish_reason: truncated ? "length" : "stop" }],
        usage
      };
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

globalThis.fetch = async (url, init) => {
  const body = JSON.parse(init.body);
  const messages = body.input ?? body.messages;
  const user = messages.find((m) => m.role === "user").content;
  const scenarioId = /^scenario_id: (.*)$/m.exec(user)[1];
  const variant = globalThis.__steerbenchVariant;
  const key = `${variant}\u0000${scenarioId}`;
  const trial = (calls.get(key) ?? 0) + 1;
  calls.set(key, trial);
  const kind = script[variant]?.[scenarioId]?.[trial - 1];
  if (!kind) throw new Error(`no scripted reply for ${variant} / ${scenarioId} / trial ${trial}`);
  return reply(url, kind);
};
