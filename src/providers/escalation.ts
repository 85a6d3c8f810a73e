/**
 * Evidence-gated escalation: what a failed attempt says about the model. Only evidence that a
 * bigger model would help — a refused quality gate, unmet completion signals, a max-turns stop,
 * the agent's own failure — moves a task up its role's model ladder. Provider failures (rate
 * limit, 5xx, unreachable, auth) fail over to the next healthy provider instead, and
 * infrastructure failures (spawn, deadline, disk, merge conflicts) retry on the same rung.
 */

/** What a failure is evidence of. */
export type FailureClass = "evidence" | "provider" | "infra";

/** Failure codes that are evidence a bigger model would help. */
export const EVIDENCE_CODES: readonly string[] = [
  "gate-failed",
  "signals-unmet",
  "max-turns",
  "agent-failed",
];

/** Failure codes of the run's own machinery: never a reason to escalate. */
export const INFRA_CODES: readonly string[] = [
  "deadline",
  "infra-error",
  "merge-conflict",
  "lineage-refused",
  "attachment-refused",
  "dependency-failed",
];

const PROVIDER_PATTERNS: readonly RegExp[] = [
  /\b429\b|rate[ _-]?limit|too many requests|quota|resource[ _]?(has been )?exhausted/i,
  /\b50[0-4]\b|\b529\b|overloaded|internal server error|bad gateway|service unavailable/i,
  /econnrefused|connection refused|unreachable|enotfound|getaddrinfo|econnreset|socket hang up/i,
  /fetch failed|network error|could not connect|unable to connect|failed to connect/i,
  /\b401\b|\b403\b|unauthori[sz]ed|invalid api key|authentication|permission denied by provider/i,
  /request timed out|timed out waiting for (the )?(model|api|server)|api timeout/i,
];

const INFRA_PATTERNS: readonly RegExp[] = [
  /enospc|no space left|disk full|spawn failed|killed by signal|sigkill|out of memory/i,
];

/**
 * Classifies a failed attempt by its code and reason. A provider-looking reason wins over the
 * code (an agent that exited 1 because its API answered 503 is a provider failure).
 *
 * @example
 * ```ts
 * classifyFailure("gate-failed", "gate tests: 2 failed"); // "evidence"
 * classifyFailure("agent-failed", "API Error: 503 overloaded"); // "provider"
 * classifyFailure("deadline", "killed after 900s"); // "infra"
 * ```
 */
export function classifyFailure(code: string, reason: string): FailureClass {
  if (code === "rate-limited") return "provider";
  if (INFRA_CODES.includes(code)) return "infra";
  if (code === "gate-failed" || code === "signals-unmet" || code === "max-turns") {
    return "evidence";
  }
  if (PROVIDER_PATTERNS.some((p) => p.test(reason))) return "provider";
  if (INFRA_PATTERNS.some((p) => p.test(reason))) return "infra";
  return EVIDENCE_CODES.includes(code) ? "evidence" : "infra";
}

/** One rung of a role's ladder, as the escalation sees it. */
export interface Rung {
  /** Adapter of the rung, when it changes it. */
  cli?: string;
  /** Model of the rung. */
  model?: string;
  /** Effort of the rung. */
  effort?: "low" | "medium" | "high" | "max";
}

/** The decision after a failed attempt. */
export interface EscalationDecision {
  /** Rung of the next attempt (0 = the role's own model). */
  step: number;
  /** True when it moved up. */
  escalated: boolean;
  /** Why (one line, for the audit event and the ledger). */
  why: string;
}

/**
 * The rung of the next attempt: one up on evidence while the ladder has rungs left, else the
 * same rung. `ladderLength` counts the rungs above the role's own model.
 */
export function nextRung(
  current: number,
  ladderLength: number,
  failure: { code: string; reason: string },
): EscalationDecision {
  const kind = classifyFailure(failure.code, failure.reason);
  if (kind !== "evidence") {
    return { step: current, escalated: false, why: `${kind} failure (${failure.code}): same rung` };
  }
  if (current >= ladderLength) {
    return { step: current, escalated: false, why: `evidence (${failure.code}), ladder exhausted` };
  }
  return { step: current + 1, escalated: true, why: `evidence: ${failure.code}` };
}
