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
export {
  type ChainElement,
  chainFor,
  decideRoute,
  type RouteDecision,
  type RouteReason,
} from "./chain.ts";
export {
  CHECK_NAMES,
  type ConformanceOptions,
  type ConformanceReport,
  type ConformanceTarget,
  EXPERT_CONTEXT_TOKENS,
  gradeChecks,
  percentile,
  runConformance,
  UNCLAIMED_CONTEXT_TOKENS,
} from "./conformance.ts";
export {
  classifyFailure,
  type EscalationDecision,
  EVIDENCE_CODES,
  type FailureClass,
  INFRA_CODES,
  nextRung,
  type Rung,
} from "./escalation.ts";
export {
  atLeast,
  CONFORMANCE_LEVELS,
  type ConformanceLevel,
  type Grade,
  gradeRank,
  GRADES,
  isGrade,
} from "./grades.ts";
export {
  fetchHttp,
  type HttpAnswer,
  HttpFailure,
  type HttpRequest,
  type HttpSend,
} from "./http.ts";
export { type EndpointProbeTarget, probeEndpoint } from "./probe.ts";
export { type ProbeResult, type ProbeStatus, statusOfProviderError } from "./probe_result.ts";
export {
  type CheckResult,
  type EndpointReceipt,
  parseReceipt,
  RECEIPT_SCHEMA,
  type ReceiptBody,
  receiptDigest,
  type ReceiptExpectation,
  receiptPath,
  type ReceiptProblem,
  type ReceiptProblemCode,
  RECEIPTS_DIR,
  type ReceiptSigner,
  signReceipt,
  verifyReceipt,
} from "./receipt.ts";
export {
  type CertifiableProfile,
  certifyCommand,
  GATED_MIN_GRADE,
  isMergeCritical,
  LOW_STAKES_ROLES,
} from "./role_tiers.ts";
export { type WireApi } from "./_wire.ts";
