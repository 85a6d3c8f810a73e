/**
 * The conformance subset `bernstein doctor --endpoint` runs against a model server
 * (docs/PROVIDERS.md): a basic completion, a streamed one, a forced tool call, a multi-turn
 * tool round trip, a JSON-only answer, the context length the server claims, and latency
 * percentiles over N requests — then the grade. Every request goes through the injected
 * {@linkcode HttpSend} with the profile's timeout; what each check sent and saw is one line.
 */
import { type Grade } from "./grades.ts";
import { type HttpAnswer, HttpFailure, type HttpSend } from "./http.ts";
import type { CheckResult } from "./receipt.ts";
import {
  authHeaders,
  buildRequest,
  claimedContext,
  modelInfoUrl,
  parseAnswer,
  type WireAnswer,
  type WireApi,
  type WireRequest,
  type WireTool,
} from "./_wire.ts";

/** The endpoint under test. */
export interface ConformanceTarget {
  /** Base URL. */
  base_url: string;
  /** Wire API. */
  api: WireApi;
  /** Model. */
  model: string;
  /** Key sent (the profile's variable's value, or the local placeholder). */
  key: string;
  /** Per-request deadline, ms. */
  timeoutMs: number;
}

/** Knobs of a run. */
export interface ConformanceOptions {
  /** Requests timed for the latency percentiles. */
  latencyRequests: number;
  /** Largest prompt sent for the context check, in tokens. */
  contextMaxTokens: number;
}

/** What the subset found. */
export interface ConformanceReport {
  /** Each check, in order. */
  checks: CheckResult[];
  /** Latency over the timed requests. */
  latency_ms: { n: number; p50: number; p95: number; max: number };
  /** The context check. */
  context_tokens: { claimed: number | null; sent: number; ok: boolean };
  /** The grade. */
  grade: Grade;
}

/** Names of the checks, in the order they run. */
export const CHECK_NAMES = [
  "completion",
  "streaming",
  "tool_call",
  "tool_round_trip",
  "json_only",
  "context_length",
  "latency",
] as const;

/** Context assumed when the server claims none (what the check then sends at most). */
export const UNCLAIMED_CONTEXT_TOKENS = 8192;

/** Context an `expert` endpoint must accept. */
export const EXPERT_CONTEXT_TOKENS = 32768;

const ADD_TOOL: WireTool = {
  name: "add_numbers",
  description: "Adds two integers and returns the sum.",
  parameters: {
    type: "object",
    properties: { a: { type: "integer" }, b: { type: "integer" } },
    required: ["a", "b"],
  },
};

const SHORT = "Reply with the single word: ready";

/** Characters per token assumed when building the long prompt. */
const CHARS_PER_TOKEN = 4;

type Outcome = { answer?: WireAnswer; http?: HttpAnswer; failure?: string; ms: number };

async function ask(
  http: HttpSend,
  t: ConformanceTarget,
  req: WireRequest,
): Promise<Outcome> {
  const call = buildRequest(t.api, t.base_url, t.model, t.key, req);
  let res: HttpAnswer;
  try {
    res = await http({
      method: "POST",
      url: call.url,
      headers: call.headers,
      body: call.body,
      timeoutMs: t.timeoutMs,
    });
  } catch (error) {
    if (error instanceof HttpFailure) return { failure: error.message, ms: error.ms };
    throw error;
  }
  if (res.status !== 200) {
    return { http: res, failure: `HTTP ${res.status}: ${oneLine(res.body)}`, ms: res.ms };
  }
  try {
    return { http: res, answer: parseAnswer(t.api, res.contentType, res.body), ms: res.ms };
  } catch (error) {
    return { http: res, failure: `malformed answer: ${(error as Error).message}`, ms: res.ms };
  }
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 200);
}

function result(name: string, ok: boolean, detail: string, ms: number): CheckResult {
  return { name, ok, detail: oneLine(detail), ms: Math.max(0, Math.round(ms)) };
}

async function completion(http: HttpSend, t: ConformanceTarget): Promise<CheckResult> {
  const o = await ask(http, t, {
    messages: [{ role: "user", text: SHORT }],
    stream: false,
    maxTokens: 16,
  });
  if (o.answer === undefined) return result("completion", false, o.failure ?? "no answer", o.ms);
  const ok = o.answer.text.trim() !== "";
  return result("completion", ok, ok ? `answered "${o.answer.text.trim()}"` : "empty answer", o.ms);
}

async function streaming(http: HttpSend, t: ConformanceTarget): Promise<CheckResult> {
  const o = await ask(http, t, {
    messages: [{ role: "user", text: SHORT }],
    stream: true,
    maxTokens: 16,
  });
  if (o.answer === undefined) return result("streaming", false, o.failure ?? "no answer", o.ms);
  if (!o.answer.streamed) return result("streaming", false, "answered without SSE", o.ms);
  const ok = o.answer.text.trim() !== "";
  return result("streaming", ok, ok ? "SSE text stream" : "stream carried no text", o.ms);
}

function validAddArgs(args: string): boolean {
  try {
    const v = JSON.parse(args);
    return typeof v === "object" && v !== null && Number.isInteger(v.a) && Number.isInteger(v.b);
  } catch {
    return false;
  }
}

async function toolCall(http: HttpSend, t: ConformanceTarget): Promise<CheckResult> {
  const o = await ask(http, t, {
    messages: [{ role: "user", text: "Use the add_numbers tool to add 2 and 3." }],
    tools: [ADD_TOOL],
    forceTool: ADD_TOOL.name,
    stream: false,
    maxTokens: 64,
  });
  if (o.answer === undefined) return result("tool_call", false, o.failure ?? "no answer", o.ms);
  const call = o.answer.calls[0];
  if (call === undefined) return result("tool_call", false, "no tool call (answered text)", o.ms);
  if (call.name !== ADD_TOOL.name) {
    return result("tool_call", false, `called ${call.name}, not the forced add_numbers`, o.ms);
  }
  if (!validAddArgs(call.args)) {
    return result("tool_call", false, `arguments do not fit the schema: ${call.args}`, o.ms);
  }
  return result("tool_call", true, `add_numbers ${call.args}`, o.ms);
}

async function roundTrip(http: HttpSend, t: ConformanceTarget): Promise<CheckResult> {
  const o = await ask(http, t, {
    messages: [
      { role: "user", text: "Use the add_numbers tool to add 2 and 3, then tell me the sum." },
      { role: "assistant_call", id: "call_probe_1", name: ADD_TOOL.name, args: { a: 2, b: 3 } },
      { role: "tool_result", id: "call_probe_1", name: ADD_TOOL.name, result: "5" },
    ],
    tools: [ADD_TOOL],
    stream: false,
    maxTokens: 64,
  });
  if (o.answer === undefined) {
    return result("tool_round_trip", false, o.failure ?? "no answer", o.ms);
  }
  if (o.answer.calls.length > 0) {
    return result("tool_round_trip", false, "called a tool again instead of answering", o.ms);
  }
  const ok = o.answer.text.trim() !== "";
  return result(
    "tool_round_trip",
    ok,
    ok ? `final answer "${o.answer.text.trim()}"` : "empty final answer",
    o.ms,
  );
}

async function jsonOnly(http: HttpSend, t: ConformanceTarget): Promise<CheckResult> {
  const o = await ask(http, t, {
    messages: [{
      role: "user",
      text: 'Answer in JSON only: the object {"status": "ok"} and no other text.',
    }],
    json: true,
    stream: false,
    maxTokens: 32,
  });
  if (o.answer === undefined) return result("json_only", false, o.failure ?? "no answer", o.ms);
  try {
    const v = JSON.parse(o.answer.text.trim());
    const ok = typeof v === "object" && v !== null && !Array.isArray(v);
    return result("json_only", ok, ok ? o.answer.text.trim() : "JSON but not an object", o.ms);
  } catch {
    return result("json_only", false, `not JSON: ${o.answer.text}`, o.ms);
  }
}

async function claimed(http: HttpSend, t: ConformanceTarget): Promise<number | null> {
  try {
    const res = await http({
      method: "GET",
      url: modelInfoUrl(t.api, t.base_url, t.model),
      headers: authHeaders(t.api, t.key),
      timeoutMs: t.timeoutMs,
    });
    return res.status === 200 ? claimedContext(t.api, JSON.parse(res.body), t.model) : null;
  } catch {
    return null;
  }
}

async function context(
  http: HttpSend,
  t: ConformanceTarget,
  maxTokens: number,
): Promise<{ check: CheckResult; claimed: number | null; sent: number }> {
  const claim = await claimed(http, t);
  // Headroom for the instruction and the answer inside the claimed window.
  const sent = Math.max(256, Math.min(claim ?? UNCLAIMED_CONTEXT_TOKENS, maxTokens) - 256);
  const filler = "lorem ".repeat(Math.floor((sent * CHARS_PER_TOKEN) / 6));
  const o = await ask(http, t, {
    messages: [{ role: "user", text: `${filler}\n\n${SHORT}` }],
    stream: false,
    maxTokens: 16,
  });
  const claimText = claim === null ? "no context length claimed" : `claims ${claim} tokens`;
  if (o.answer === undefined) {
    return {
      check: result(
        "context_length",
        false,
        `${claimText}; ~${sent} tokens refused: ${o.failure}`,
        o.ms,
      ),
      claimed: claim,
      sent,
    };
  }
  const ok = o.answer.text.trim() !== "";
  return {
    check: result(
      "context_length",
      ok,
      `${claimText}; ~${sent} tokens ${ok ? "accepted" : "gave an empty answer"}`,
      o.ms,
    ),
    claimed: claim,
    sent,
  };
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

async function latency(
  http: HttpSend,
  t: ConformanceTarget,
  n: number,
): Promise<{ check: CheckResult; latency: ConformanceReport["latency_ms"] }> {
  const times: number[] = [];
  const failures: string[] = [];
  for (let i = 0; i < n; i++) {
    const o = await ask(http, t, {
      messages: [{ role: "user", text: SHORT }],
      stream: false,
      maxTokens: 16,
    });
    times.push(Math.round(o.ms));
    if (o.answer === undefined) failures.push(o.failure ?? "no answer");
  }
  const sorted = [...times].sort((a, b) => a - b);
  const stats = {
    n,
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    max: sorted[sorted.length - 1] ?? 0,
  };
  const detail = failures.length === 0
    ? `${n} requests: p50 ${stats.p50} ms, p95 ${stats.p95} ms, max ${stats.max} ms`
    : `${failures.length} of ${n} requests failed: ${failures[0]}`;
  return {
    check: result("latency", failures.length === 0, detail, sorted.reduce((a, b) => a + b, 0)),
    latency: stats,
  };
}

/**
 * The grade of a set of checks: `none` without a working completion; `basic` with completion,
 * streaming and latency; `advanced` adds the forced tool call and the JSON-only answer;
 * `expert` adds the tool round trip and at least {@linkcode EXPERT_CONTEXT_TOKENS} of context.
 */
export function gradeChecks(checks: readonly CheckResult[], contextSent: number): Grade {
  const ok = (name: string) => checks.some((c) => c.name === name && c.ok);
  if (!ok("completion") || !ok("streaming") || !ok("latency")) {
    return "none";
  }
  if (!ok("tool_call") || !ok("json_only")) return "basic";
  if (
    !ok("tool_round_trip") || !ok("context_length") || contextSent < EXPERT_CONTEXT_TOKENS - 256
  ) {
    return "advanced";
  }
  return "expert";
}

/**
 * Runs the subset. An unreachable endpoint is not retried: the first check says so and the
 * others are skipped (failed, "skipped: endpoint unreachable").
 */
export async function runConformance(
  http: HttpSend,
  target: ConformanceTarget,
  options: ConformanceOptions,
): Promise<ConformanceReport> {
  const first = await completion(http, target);
  if (!first.ok && /^unreachable|no complete answer/.test(first.detail)) {
    const skipped = CHECK_NAMES.slice(1).map((name) =>
      result(name, false, `skipped: ${first.detail}`, 0)
    );
    return {
      checks: [first, ...skipped],
      latency_ms: { n: 0, p50: 0, p95: 0, max: 0 },
      context_tokens: { claimed: null, sent: 0, ok: false },
      grade: "none",
    };
  }
  const checks: CheckResult[] = [first];
  checks.push(await streaming(http, target));
  checks.push(await toolCall(http, target));
  checks.push(await roundTrip(http, target));
  checks.push(await jsonOnly(http, target));
  const ctx = await context(http, target, options.contextMaxTokens);
  checks.push(ctx.check);
  const lat = await latency(http, target, options.latencyRequests);
  checks.push(lat.check);
  return {
    checks,
    latency_ms: lat.latency,
    context_tokens: { claimed: ctx.claimed, sent: ctx.sent, ok: ctx.check.ok },
    grade: gradeChecks(checks, ctx.sent),
  };
}
