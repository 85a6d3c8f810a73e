/**
 * Tool-call policy: rules, precedence and the three-state decision contract.
 *
 * @module
 */
export { compilePattern, patternKind, PatternSyntaxError } from "./pattern.ts";
export {
  checkDecision,
  DECISION_REASON_NAMES,
  DECISION_REASONS,
  failClosed,
  INTEGRITY_GUARD_NAMES,
  INTEGRITY_GUARDS,
  POLICY_ACTIONS,
  POLICY_TIERS,
  type PolicyDecision,
  RETIRED_MEMBERS,
} from "./contract.ts";
export { decide, type EffectivePolicy, ruleMatches } from "./engine.ts";
export { loadPolicy } from "./load.ts";
export { RULE_KINDS } from "./rule_kinds.ts";
export type { RuleProblem } from "./rules.ts";
export { checkSafety, immunePath, type ProtectedPlaces } from "./safety.ts";
export { analyseShell } from "./shell.ts";
export { type ToolCall, toolFamily } from "./tool_call.ts";
export { type Approval, ApprovalError } from "./approvals.ts";
export {
  DEFAULT_MAX_HOOK_INPUT_BYTES,
  HOOK_FORMATS,
  type HookFormat,
  type HookRequest,
  parseHookInput,
  renderHookAnswer,
} from "./hook.ts";
export { type PolicyCounts, type PolicyRecord, PolicyService } from "./service.ts";
export { answerHook, type HookOutcome } from "./hook_run.ts";
