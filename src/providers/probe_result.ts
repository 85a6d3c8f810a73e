/**
 * What a health probe of a provider found: a status from a closed set (so routing receipts and
 * the failover drill speak one vocabulary), whether that counts as healthy, what was asked and
 * how long it took. Also the status of a provider error seen in a failed attempt.
 */

/** Probe outcomes. */
export type ProbeStatus =
  | "healthy"
  | "unreachable"
  | "timeout"
  | "rate_limited"
  | "server_error"
  | "auth"
  | "bad_answer"
  | "missing_binary"
  | "failed_attempt"
  | "disabled";

/** One probe (or a presumption, with probes disabled). */
export interface ProbeResult {
  /** Outcome. */
  status: ProbeStatus;
  /** True when the element may be dispatched to. */
  healthy: boolean;
  /** What was sent and what came back, one line. */
  detail: string;
  /** How the result was obtained. */
  kind: "http" | "binary" | "disabled" | "observed";
  /** Duration in ms (integer). */
  ms: number;
}

/** The probe status of a failed attempt's provider error (by its reason). */
export function statusOfProviderError(reason: string): ProbeStatus {
  if (/\b429\b|rate[ _-]?limit|too many requests|quota|exhausted/i.test(reason)) {
    return "rate_limited";
  }
  if (/\b401\b|\b403\b|unauthori[sz]ed|invalid api key|authentication/i.test(reason)) {
    return "auth";
  }
  if (/timed out|timeout/i.test(reason)) return "timeout";
  if (/\b5\d\d\b|overloaded|server error|bad gateway|unavailable/i.test(reason)) {
    return "server_error";
  }
  return "unreachable";
}
