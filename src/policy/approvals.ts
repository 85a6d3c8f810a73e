// Parked calls: an `ask` in an unattended run waits here until an operator approves or
// denies it (`bernstein approvals …`, or the task server's /approvals routes) or until the
// approval timeout passes, which denies it — the agent is told why either way. Time comes
// from the injected clock, ids from the injected randomness.
import { toHex } from "../canonical/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import type { Clock, Random } from "../io/mod.ts";
import type { PolicyDecision } from "./contract.ts";

/** Where an approval stands. */
export type ApprovalStatus = "pending" | "approved" | "denied" | "timed_out" | "cancelled";

/** What is parked: the call and the ask it got. */
export interface ApprovalRequest {
  /** Task of the agent that made the call. */
  task_id: string;
  /** Agent session. */
  session: string;
  /** Adapter (claude, codex, …). */
  cli: string;
  /** Tool name as the CLI sent it. */
  tool: string;
  /** A short excerpt of the input, for the operator. */
  summary: string;
  /** `sha256:` of the canonical input. */
  input_sha256: string;
  /** The ask. */
  ask: PolicyDecision;
}

/** A parked call. */
export interface Approval extends ApprovalRequest {
  /** `ap-` + 12 hex. */
  id: string;
  /** Where it stands. */
  status: ApprovalStatus;
  /** When it was parked (ISO). */
  parked_at: string;
  /** When it is denied if nobody answers (ISO). */
  expires_at: string;
  /** When it was answered, if it was. */
  resolved_at?: string;
  /** Who answered (`operator`, `policy` for a timeout). */
  resolved_by?: string;
  /** The operator's note. */
  note?: string;
}

/** An approval that does not exist or is no longer pending. */
export class ApprovalError extends BernsteinError {}

interface Entry {
  approval: Approval;
  settle: () => void;
}

/**
 * The queue of parked calls.
 *
 * @example
 * ```ts ignore
 * const queue = new ApprovalQueue({ clock, random, timeoutMs: 300_000 });
 * const { approval, outcome } = queue.park(request);
 * queue.resolve(approval.id, "approve", "operator");
 * (await outcome).status; // "approved"
 * ```
 */
export class ApprovalQueue {
  readonly #entries = new Map<string, Entry>();
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #timeoutMs: number;

  constructor(options: { clock: Clock; random: Random; timeoutMs: number }) {
    this.#clock = options.clock;
    this.#random = options.random;
    this.#timeoutMs = options.timeoutMs;
  }

  /** The timeout after which a parked call is denied, in ms. */
  get timeoutMs(): number {
    return this.#timeoutMs;
  }

  /**
   * Parks a call. `outcome` settles when an operator answers, when the timeout passes
   * (status `timed_out`) or when `signal` aborts (status `cancelled`: the caller is gone).
   */
  park(
    request: ApprovalRequest,
    signal?: AbortSignal,
  ): { approval: Approval; outcome: Promise<Approval> } {
    const now = this.#clock.nowMs();
    const approval: Approval = {
      ...request,
      id: `ap-${toHex(this.#random.bytes(6))}`,
      status: "pending",
      parked_at: new Date(now).toISOString(),
      expires_at: new Date(now + this.#timeoutMs).toISOString(),
    };
    const stop = new AbortController();
    let settle = () => {};
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.#entries.set(approval.id, { approval, settle: () => settle() });
    const onAbort = () => this.#finish(approval.id, "cancelled", "agent", "the hook went away");
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = this.#clock.sleep(this.#timeoutMs, stop.signal).then(() => {
      this.#finish(
        approval.id,
        "timed_out",
        "policy",
        `no operator answered within ${Math.round(this.#timeoutMs / 1000)} s ` +
          "(tuning.policy.approval_timeout_s)",
      );
    });
    const outcome = Promise.race([settled, timer]).then(() => {
      stop.abort();
      signal?.removeEventListener("abort", onAbort);
      return { ...approval };
    });
    return { approval: { ...approval }, outcome };
  }

  /** Parked calls, oldest first (pending only unless `all`). */
  list(all = false): Approval[] {
    return [...this.#entries.values()]
      .map((e) => ({ ...e.approval }))
      .filter((a) => all || a.status === "pending");
  }

  /** Answers a pending call. Throws {@linkcode ApprovalError} when it is unknown or answered. */
  resolve(id: string, verdict: "approve" | "deny", actor: string, note?: string): Approval {
    const entry = this.#entries.get(id);
    if (entry === undefined) {
      throw new ApprovalError("approval.not_found", `no parked call with id '${id}'`, {
        hint: "bernstein approvals list",
      });
    }
    if (entry.approval.status !== "pending") {
      throw new ApprovalError(
        "approval.not_pending",
        `${id} is already ${entry.approval.status.replace("_", " ")}`,
      );
    }
    this.#finish(id, verdict === "approve" ? "approved" : "denied", actor, note);
    return { ...entry.approval };
  }

  #finish(id: string, status: ApprovalStatus, by: string, note?: string): void {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.approval.status !== "pending") return;
    entry.approval.status = status;
    entry.approval.resolved_at = new Date(this.#clock.nowMs()).toISOString();
    entry.approval.resolved_by = by;
    if (note !== undefined && note !== "") entry.approval.note = note;
    entry.settle();
  }
}

/** The decision a settled approval stands for (the ask's guards and rule stay on record). */
export function approvalDecision(a: Approval): PolicyDecision {
  const keep: Partial<PolicyDecision> = {};
  if (a.ask.guards) keep.guards = a.ask.guards;
  if (a.ask.tier) keep.tier = a.ask.tier;
  if (a.ask.ruleId) keep.ruleId = a.ask.ruleId;
  if (a.ask.ruleSource) keep.ruleSource = a.ask.ruleSource;
  const by = `${a.resolved_by} (${a.id})${a.note ? `: ${a.note}` : ""}`;
  const outcome: Pick<PolicyDecision, "action" | "decisionReason" | "message"> =
    a.status === "approved"
      ? { action: "allow", decisionReason: "approvalGranted", message: `approved by ${by}` }
      : a.status === "denied"
      ? { action: "deny", decisionReason: "approvalDenied", message: `denied by ${by}` }
      : a.status === "timed_out"
      ? { action: "deny", decisionReason: "approvalTimeout", message: `${a.note} (${a.id})` }
      : {
        action: "deny",
        decisionReason: "noApprover",
        message: `${a.id} was cancelled: ${a.note ?? "no answer"}`,
      };
  return { ...outcome, ...keep };
}
