// The policy of one run, as the task server uses it: the rules loaded at run start (the
// agents' own edits to .bernstein/ never reach it), the live agent sessions (worktree, home,
// adapter), the approval queue, a record of every decision (the run wires it to the audit
// log) and the counts per task. `decide` is what POST /policy/decide answers.
import { canonicalBytes, type JsonValue } from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import type { Clock, Random } from "../io/mod.ts";
import { type Approval, approvalDecision, ApprovalQueue } from "./approvals.ts";
import { failClosed, type PolicyAction, type PolicyDecision } from "./contract.ts";
import { decide, type EffectivePolicy } from "./engine.ts";
import type { HookRequest } from "./hook.ts";
import type { ProtectedPlaces } from "./safety.ts";
import { callCommand, callPaths, inputStrings, type ToolFamily, toolFamily } from "./tool_call.ts";

/** A live agent session the policy decides for. */
export interface PolicySession {
  /** Session id (the agent token's session). */
  session: string;
  /** Task id. */
  task_id: string;
  /** Adapter name. */
  cli: string;
  /** Agent id (for the audit actor). */
  agent_id: string;
  /** The worktree. */
  cwd: string;
  /** The agent's private home. */
  home: string;
}

/** One decision, with what it was about: the run turns it into a `policy.decision` event. */
export interface PolicyRecord {
  /** The decision. */
  decision: PolicyDecision;
  /** The session. */
  session: PolicySession;
  /** Tool name as the CLI sent it. */
  tool: string;
  /** Its family. */
  family: ToolFamily;
  /** `sha256:` of the canonical tool input. */
  input_sha256: string;
  /** The CLI's tool-use id, when it gave one. */
  tool_use_id?: string;
  /** The approval, for an ask that was parked and for its resolution. */
  approval?: Approval;
}

/** Decisions of one task by action. */
export interface PolicyCounts {
  /** Every decision event. */
  decisions: number;
  /** Allowed (including approved). */
  allow: number;
  /** Denied (including denied, timed-out and failed asks). */
  deny: number;
  /** Asks (each parked call counts once here and once for its outcome). */
  ask: number;
}

/** Options of {@linkcode PolicyService}. */
export interface PolicyServiceOptions {
  /** Rules and problems, loaded once at run start. */
  policy: EffectivePolicy;
  /** Protected places of the project (root, .sdd, operator home, key files, secret values). */
  places: Omit<ProtectedPlaces, "cwd" | "home" | "transcriptPath">;
  /** Clock (approval timeouts). */
  clock: Clock;
  /** Randomness (approval ids). */
  random: Random;
  /** How long a parked call waits for an operator (`tuning.policy.approval_timeout_s`). */
  approvalTimeoutMs: number;
  /** Records one decision (audit); a failure to record denies the call. */
  record: (record: PolicyRecord) => Promise<void>;
  /** Called when a call is parked (the run reports it). */
  onParked?: (approval: Approval) => void;
}

/** `sha256:` of the canonical bytes of a tool input. */
export function inputDigest(input: unknown): string {
  let bytes: Uint8Array;
  try {
    bytes = canonicalBytes(input as JsonValue, "canon");
  } catch {
    bytes = new TextEncoder().encode(JSON.stringify(input) ?? "null");
  }
  return `sha256:${sha256Hex(bytes)}`;
}

/** A one-line excerpt of a call for people: the command, the path, or the first text. */
export function callSummary(call: { tool: string; input: Record<string, unknown> }): string {
  const what = callCommand(call) ?? callPaths(call)[0] ?? inputStrings(call.input)[0]?.value ?? "";
  const line = what.replace(/\s+/g, " ").trim();
  return `${call.tool} ${line.length > 200 ? line.slice(0, 199) + "…" : line}`.trim();
}

/**
 * Where an agent runs on another host (`bernstein worker`): its CLI reports a working
 * directory inside `<root>/.sdd/worktrees/<session>` of that host's clone, so the protected
 * places are that clone's. Undefined for an agent on this host (or a cwd that says nothing).
 */
function remotePlaces(
  session: string,
  cwd: string | undefined,
): Pick<ProtectedPlaces, "cwd" | "root" | "sdd" | "home"> | undefined {
  const marker = `/.sdd/worktrees/${session}`;
  const at = cwd?.indexOf(marker) ?? -1;
  if (cwd === undefined || at <= 0) return undefined;
  const end = at + marker.length;
  if (end !== cwd.length && cwd[end] !== "/") return undefined;
  const root = cwd.slice(0, at);
  return {
    cwd: cwd.slice(0, end),
    root,
    sdd: `${root}/.sdd`,
    home: `${root}/.sdd/runtime/homes/${session}`,
  };
}

/**
 * The run's policy.
 *
 * @example
 * ```ts ignore
 * const service = new PolicyService({ policy, places, clock, random, approvalTimeoutMs, record });
 * service.register({ session: "s1", task_id: "t1", cli: "claude", agent_id: "a", cwd, home });
 * const d = await service.decide("s1", { tool: "Read", input: { file_path: "src/a.ts" } });
 * ```
 */
export class PolicyService {
  readonly approvals: ApprovalQueue;
  readonly #options: PolicyServiceOptions;
  readonly #sessions = new Map<string, PolicySession>();
  readonly #counts = new Map<string, PolicyCounts>();

  constructor(options: PolicyServiceOptions) {
    this.#options = options;
    this.approvals = new ApprovalQueue({
      clock: options.clock,
      random: options.random,
      timeoutMs: options.approvalTimeoutMs,
    });
  }

  /** Starts deciding for an agent session (at spawn). */
  register(session: PolicySession): void {
    this.#sessions.set(session.session, session);
  }

  /** Stops deciding for it (after its process ended); later calls are refused. */
  unregister(session: string): void {
    this.#sessions.delete(session);
  }

  /** Decisions of a task so far. */
  counts(taskId: string): PolicyCounts {
    return { ...(this.#counts.get(taskId) ?? { decisions: 0, allow: 0, deny: 0, ask: 0 }) };
  }

  /** Decisions of every task that had any. */
  allCounts(): Record<string, PolicyCounts> {
    return Object.fromEntries([...this.#counts].map(([k, v]) => [k, { ...v }]));
  }

  /**
   * Decides on a call of a session. An ask is parked until an operator answers or the
   * timeout denies it; `signal` cancels the wait (the hook went away). Never throws: a call
   * that cannot be decided or recorded is denied.
   */
  async decide(
    sessionId: string,
    request: HookRequest,
    signal?: AbortSignal,
  ): Promise<PolicyDecision> {
    const session = this.#sessions.get(sessionId);
    if (session === undefined) {
      return failClosed("hookFailure", `no live agent session '${sessionId}' in this run`);
    }
    const places: ProtectedPlaces = {
      ...this.#options.places,
      cwd: session.cwd,
      home: session.home,
      ...remotePlaces(session.session, request.cwd),
      ...(request.transcriptPath !== undefined ? { transcriptPath: request.transcriptPath } : {}),
    };
    const call = { tool: request.tool, input: request.input };
    const base: Omit<PolicyRecord, "decision"> = {
      session,
      tool: request.tool,
      family: toolFamily(request.tool),
      input_sha256: inputDigest(request.input),
      ...(request.toolUseId !== undefined ? { tool_use_id: request.toolUseId } : {}),
    };
    const first = decide(call, this.#options.policy, places);
    if (first.action !== "ask") return await this.#record({ ...base, decision: first });
    const { approval, outcome } = this.approvals.park({
      task_id: session.task_id,
      session: session.session,
      cli: session.cli,
      tool: request.tool,
      summary: callSummary(call),
      input_sha256: base.input_sha256,
      ask: first,
    }, signal);
    const asked = await this.#record({ ...base, decision: first, approval });
    if (asked.action !== "ask") {
      // Recording failed: the call is denied, and nobody should answer it any more.
      this.approvals.resolve(approval.id, "deny", "policy", asked.message);
      return asked;
    }
    this.#options.onParked?.(approval);
    const settled = await outcome;
    return await this.#record({ ...base, decision: approvalDecision(settled), approval: settled });
  }

  async #record(record: PolicyRecord): Promise<PolicyDecision> {
    try {
      await this.#options.record(record);
    } catch (error) {
      return failClosed(
        "hookFailure",
        `the decision could not be recorded: ${(error as Error).message}`,
      );
    }
    this.#count(record.session.task_id, record.decision.action);
    return record.decision;
  }

  #count(taskId: string, action: PolicyAction): void {
    const c = this.#counts.get(taskId) ?? { decisions: 0, allow: 0, deny: 0, ask: 0 };
    c.decisions++;
    c[action]++;
    this.#counts.set(taskId, c);
  }
}
