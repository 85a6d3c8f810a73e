// The wire of a pre-tool hook: what agent CLIs send on the hook's stdin and what they expect
// back. Claude Code, codex, qwen, opencode (through bernstein's plugin) and the scripted agent
// speak Claude's format (`tool_name`, `tool_input` in; `hookSpecificOutput.permissionDecision`
// out); gemini reads `{decision, reason}`. Input that is not a tool call — too large, not
// UTF-8, not JSON, no tool name — is refused with a fail-closed decision, never let through.
import { decodeUtf8Strict, type JsonObject, parseJson } from "../canonical/mod.ts";
import { failClosed, type PolicyDecision } from "./contract.ts";
import type { ToolCall } from "./tool_call.ts";

/** Answer formats of `bernstein policy hook --format`. */
export const HOOK_FORMATS = ["claude", "gemini"] as const;

/** One of {@linkcode HOOK_FORMATS}. */
export type HookFormat = typeof HOOK_FORMATS[number];

/** Default size limit of a hook's input (`tuning.policy.max_hook_input_bytes`). */
export const DEFAULT_MAX_HOOK_INPUT_BYTES = 1024 * 1024;

/** A tool call as a hook receives it. */
export interface HookRequest extends ToolCall {
  /** The CLI's transcript file, when it says. */
  transcriptPath?: string;
  /** The CLI's working directory, when it says. */
  cwd?: string;
  /** The CLI's id of this tool use, when it says. */
  toolUseId?: string;
}

/** The outcome of {@linkcode parseHookInput}. */
export type HookInputResult =
  | { ok: true; request: HookRequest }
  | { ok: false; decision: PolicyDecision };

const EVENTS = new Set(["PreToolUse", "BeforeTool"]);

function invalid(message: string): HookInputResult {
  return { ok: false, decision: failClosed("inputInvalid", message) };
}

/**
 * Reads a hook's stdin bytes. Refused (as `inputInvalid` denies): more than `maxBytes`,
 * invalid UTF-8, not a JSON object, an event other than a pre-tool one, no `tool_name`
 * string, a `tool_input` that is not an object.
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode('{"tool_name":"Read","tool_input":{"file_path":"a"}}');
 * const r = parseHookInput(bytes);
 * if (r.ok) r.request.tool; // "Read"
 * ```
 */
export function parseHookInput(
  bytes: Uint8Array,
  maxBytes: number = DEFAULT_MAX_HOOK_INPUT_BYTES,
): HookInputResult {
  if (bytes.length > maxBytes) return invalid(`hook input is larger than ${maxBytes} bytes`);
  let text: string;
  try {
    text = decodeUtf8Strict(bytes);
  } catch {
    return invalid("hook input is not UTF-8");
  }
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    return invalid(`hook input is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return invalid("hook input is not a JSON object");
  }
  const v = value as JsonObject;
  const event = v.hook_event_name;
  if (event !== undefined && !(typeof event === "string" && EVENTS.has(event))) {
    return invalid(`hook input is for event ${JSON.stringify(event)}, not a pre-tool event`);
  }
  const tool = v.tool_name;
  if (typeof tool !== "string" || tool === "" || tool.length > 200) {
    return invalid("hook input has no tool_name (a string of 1-200 characters)");
  }
  const input = v.tool_input ?? {};
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    return invalid("hook input's tool_input is not an object");
  }
  const request: HookRequest = { tool, input: input as Record<string, unknown> };
  if (typeof v.transcript_path === "string") request.transcriptPath = v.transcript_path;
  if (typeof v.cwd === "string") request.cwd = v.cwd;
  if (typeof v.tool_use_id === "string") request.toolUseId = v.tool_use_id;
  return { ok: true, request };
}

/** The text a denied agent reads: who decided, and why. */
export function denialText(d: PolicyDecision): string {
  const by = d.ruleId !== undefined ? `${d.decisionReason} ${d.ruleId}` : d.decisionReason;
  const guards = d.guards && d.guards.length > 0 ? ` [${d.guards.join(", ")}]` : "";
  return `bernstein policy: ${d.action} (${by}${guards})${d.message ? `: ${d.message}` : ""}`;
}

/** True for decisions an operator or a rule made explicitly (answered as an explicit allow). */
function explicitAllow(d: PolicyDecision): boolean {
  return d.action === "allow" && d.decisionReason !== "defaultAllow";
}

/**
 * The hook's answer in a CLI's format. A default allow is answered with no decision (the
 * CLI's own permission mode applies, as without bernstein); an explicit allow (a rule, an
 * approval) lets the call through; a deny blocks it with {@linkcode denialText}; an ask is
 * Claude's own prompt (only outside runs; gemini cannot ask headless, so there it is a deny).
 */
export function renderHookAnswer(d: PolicyDecision, format: HookFormat): Record<string, unknown> {
  if (format === "gemini") {
    if (d.action === "deny" || d.action === "ask") {
      return { decision: "deny", reason: denialText(d) };
    }
    return explicitAllow(d) ? { decision: "allow", reason: denialText(d) } : {};
  }
  if (d.action === "allow" && !explicitAllow(d)) return {};
  return {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: d.action,
      permissionDecisionReason: denialText(d),
    },
  };
}
