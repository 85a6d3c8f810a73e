/**
 * The provider layer (pure core, plus one HTTP seam): conformance grades, role tiers of local
 * endpoints, signed certification receipts and their verification, the conformance subset of
 * `bernstein doctor --endpoint`, health probes, failover decisions over a role's
 * `provider_availability` chain, and the evidence rule of model-ladder escalation
 * (docs/PROVIDERS.md).
 *
 * @example
 * ```ts
 * import { classifyFailure, decideRoute } from "./mod.ts";
 * classifyFailure("rate-limited", "429"); // "provider": fail over, never escalate
 * ```
 *
 * @module
 */
export { type ChainElement, chainFor, decideRoute, type RouteDecision } from "./chain.ts";
export { type ConformanceTarget, runConformance } from "./conformance.ts";
export { classifyFailure, type EscalationDecision, nextRung, type Rung } from "./escalation.ts";
export { atLeast, type Grade } from "./grades.ts";
export { fetchHttp, type HttpSend } from "./http.ts";
export { probeEndpoint } from "./probe.ts";
export { type ProbeResult, statusOfProviderError } from "./probe_result.ts";
export {
  type EndpointReceipt,
  parseReceipt,
  type ReceiptBody,
  type ReceiptExpectation,
  receiptPath,
  type ReceiptProblem,
  signReceipt,
  verifyReceipt,
} from "./receipt.ts";
export { certifyCommand, GATED_MIN_GRADE, isMergeCritical } from "./role_tiers.ts";
export { type WireApi } from "./_wire.ts";
