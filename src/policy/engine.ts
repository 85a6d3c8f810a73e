// The decision: one pure function from a tool call, the effective rules and the protected
// places to a three-state decision, with the fixed precedence (highest first)
//
//   IMMUNE / SAFETY  never overridden (immune paths, secrets, integrity guards)
//   ALWAYS-ALLOW     overrides ASK and DENY
//   DENY
//   ASK
//   ALLOW            (the default)
//
// Two refinements keep every combination fail-closed: a deny rule that also matches a call a
// guard asks about makes it a deny (a lower tier may tighten a safety ask, never loosen it);
// and a call inside the reach of a broken rule file is asked about (`ruleUnreadable`) unless
// a readable deny rule already denies it — never allowed, not even by an always-allow rule.
import {
  INTEGRITY_GUARD_NAMES,
  type IntegrityGuard,
  type PolicyDecision,
  type PolicyTier,
} from "./contract.ts";
import type { RuleKind } from "./rule_kinds.ts";
import type { PolicyRule, RuleProblem } from "./rules.ts";
import { checkSafety, type ProtectedPlaces } from "./safety.ts";
import { fieldValues, fullContent, type ToolCall, toolFamily } from "./tool_call.ts";

/** The rules in force and the problems of the files they came from. */
export interface EffectivePolicy {
  /** Rules, in file order. */
  rules: readonly PolicyRule[];
  /** Problems (each with its reach). */
  problems: readonly RuleProblem[];
}

/** A policy with no rules and no problems: IMMUNE/SAFETY, then allow. */
export const EMPTY_POLICY: EffectivePolicy = { rules: [], problems: [] };

const TIER_OF: Readonly<Record<RuleKind, PolicyTier>> = {
  always_allow: "always_allow",
  deny: "deny",
  ask: "ask",
  allow: "allow",
};

/** True when `rule` names the call's tool: its own name, its family, or `*`. */
export function ruleNamesTool(rule: Pick<PolicyRule, "tool">, tool: string): boolean {
  const t = rule.tool.toLowerCase();
  return t === "*" || t === tool.toLowerCase() || t === toolFamily(tool);
}

/**
 * True when the rule matches: it names the tool, the `input_field` has a value that the
 * pattern matches (for allow lists every value of a list, for deny/ask any), and every
 * content pattern appears in the call's content.
 */
export function ruleMatches(rule: PolicyRule, call: ToolCall, places: ProtectedPlaces): boolean {
  if (!ruleNamesTool(rule, call.tool)) return false;
  const values = fieldValues(call, rule.input_field, places);
  if (values.length === 0) return false;
  const permissive = rule.kind === "always_allow" || rule.kind === "allow";
  const hit = permissive
    ? values.every((v) => rule.pattern.matches(v))
    : values.some((v) => rule.pattern.matches(v));
  if (!hit) return false;
  if (rule.content_patterns.length === 0) return true;
  const content = fullContent(call);
  return rule.content_patterns.every((p) => content.includes(p));
}

function reaches(problem: RuleProblem, tool: string): boolean {
  if (problem.reach === "*") return true;
  const names = [tool.toLowerCase(), toolFamily(tool), "*"];
  return problem.reach.some((r) => names.includes(r));
}

function fromRule(rule: PolicyRule, base: Omit<PolicyDecision, "tier">): PolicyDecision {
  return {
    ...base,
    tier: TIER_OF[rule.kind],
    ruleId: rule.id,
    ruleSource: rule.source,
    ...(rule.description ? { message: base.message ?? rule.description } : {}),
  };
}

/**
 * Decides on one tool call.
 *
 * @example
 * ```ts
 * const places = { cwd: "/r/.sdd/worktrees/s1", root: "/r", sdd: "/r/.sdd" };
 * decide({ tool: "Read", input: { file_path: "/r/.sdd/worktrees/s1/a.ts" } }, EMPTY_POLICY, places);
 * // { action: "allow", decisionReason: "defaultAllow", tier: "allow" }
 * ```
 */
export function decide(
  call: ToolCall,
  policy: EffectivePolicy,
  places: ProtectedPlaces,
): PolicyDecision {
  const safety = checkSafety(call, places);
  if (safety.immune.length > 0) {
    return {
      action: "deny",
      decisionReason: "immunePath",
      tier: "immune",
      message: safety.immune.join("; "),
    };
  }
  if (safety.secrets.length > 0) {
    return {
      action: "deny",
      decisionReason: "secretDetected",
      tier: "safety",
      message: safety.secrets.join("; "),
    };
  }
  const first = (kind: RuleKind) =>
    policy.rules.find((r) => r.kind === kind && ruleMatches(r, call, places));
  const denyRule = first("deny");
  const guards: IntegrityGuard[] = INTEGRITY_GUARD_NAMES.filter((g) => safety.guards.has(g));
  if (guards.length > 0) {
    const message = guards.flatMap((g) => safety.guards.get(g) ?? []).join("; ");
    if (denyRule !== undefined) {
      return fromRule(denyRule, { action: "deny", decisionReason: "denyRule", guards, message });
    }
    return { action: "ask", decisionReason: "integrityGuard", tier: "safety", guards, message };
  }
  const broken = policy.problems.filter((p) => reaches(p, call.tool));
  if (broken.length > 0) {
    if (denyRule !== undefined) {
      return fromRule(denyRule, { action: "deny", decisionReason: "denyRule" });
    }
    return {
      action: "ask",
      decisionReason: "ruleUnreadable",
      message: broken.map((p) => `${p.location}: ${p.message}`).join("; "),
    };
  }
  const always = first("always_allow");
  if (always !== undefined) {
    return fromRule(always, { action: "allow", decisionReason: "alwaysAllowRule" });
  }
  if (denyRule !== undefined) {
    return fromRule(denyRule, { action: "deny", decisionReason: "denyRule" });
  }
  const ask = first("ask");
  if (ask !== undefined) return fromRule(ask, { action: "ask", decisionReason: "askRule" });
  const allow = first("allow");
  if (allow !== undefined) return fromRule(allow, { action: "allow", decisionReason: "allowRule" });
  return { action: "allow", decisionReason: "defaultAllow", tier: "allow" };
}
