/**
 * Tool-call policy: rules, precedence and the three-state decision contract.
 *
 * @module
 */
export {
  type CompiledPattern,
  compilePattern,
  isPatternError,
  type PatternKind,
  patternKind,
  PatternSyntaxError,
} from "./pattern.ts";
export {
  checkDecision,
  DECISION_REASON_NAMES,
  DECISION_REASONS,
  type DecisionCheck,
  type DecisionReason,
  failClosed,
  INTEGRITY_GUARD_NAMES,
  INTEGRITY_GUARDS,
  type IntegrityGuard,
  MAX_DECISION_MESSAGE,
  POLICY_ACTIONS,
  POLICY_TIERS,
  type PolicyAction,
  type PolicyDecision,
  type PolicyTier,
  RETIRED_MEMBERS,
} from "./contract.ts";
export {
  decide,
  type EffectivePolicy,
  EMPTY_POLICY,
  ruleMatches,
  ruleNamesTool,
} from "./engine.ts";
export {
  DEFAULT_MAX_RULE_FILE_BYTES,
  type LoadedPolicy,
  loadPolicy,
  RULE_FILES,
  type RuleFileStatus,
} from "./load.ts";
export {
  dropDuplicateIds,
  parseAlwaysAllowFile,
  type ParsedRuleFile,
  parseRulesFile,
  type PolicyRule,
  RULE_FIELDS,
  RULE_KINDS,
  type RuleKind,
  type RuleProblem,
} from "./rules.ts";
export {
  checkSafety,
  immunePath,
  type ProtectedPlaces,
  type SafetyFindings,
  secretPath,
} from "./safety.ts";
export { analyseShell, MAX_SHELL_TEXT, type ShellFacts, type ShellWord } from "./shell.ts";
export {
  absolutePath,
  callCommand,
  callPaths,
  type CallPlace,
  fieldValues,
  fullContent,
  rulePath,
  TOOL_FAMILIES,
  type ToolCall,
  type ToolFamily,
  toolFamily,
} from "./tool_call.ts";
export {
  type Approval,
  approvalDecision,
  ApprovalError,
  ApprovalQueue,
  type ApprovalRequest,
  type ApprovalStatus,
} from "./approvals.ts";
export {
  DEFAULT_MAX_HOOK_INPUT_BYTES,
  denialText,
  HOOK_FORMATS,
  type HookFormat,
  type HookInputResult,
  type HookRequest,
  parseHookInput,
  renderHookAnswer,
} from "./hook.ts";
export {
  callSummary,
  inputDigest,
  type PolicyCounts,
  type PolicyRecord,
  PolicyService,
  type PolicyServiceOptions,
  type PolicySession,
} from "./service.ts";
export { answerHook, type HookOutcome, type HookRunOptions } from "./hook_run.ts";
