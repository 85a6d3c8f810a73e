// The decision contract every policy answer speaks: three states (`allow`, `deny`, `ask`), a
// `decisionReason` from a closed set, an optional message, and for an `ask` the integrity
// `guards` it stands on. Every point that consumes a decision from outside this process (the
// hook reading the task server's answer, an approval record) runs it through
// {@linkcode checkDecision}: an unknown member, an action or reason outside the closed sets,
// or one of the retired members `reason` and `guard` turns it into a `deny` whose message
// records the refusal — never an allow.
import { z } from "zod";

/** The three states of a decision. */
export const POLICY_ACTIONS = ["allow", "deny", "ask"] as const;

/** One of {@linkcode POLICY_ACTIONS}. */
export type PolicyAction = typeof POLICY_ACTIONS[number];

/**
 * The closed set of decision reasons, each with the only action it may carry and what it
 * means. A decision whose action does not match its reason is refused.
 */
export const DECISION_REASONS = {
  immunePath: {
    action: "deny",
    means: "the call writes or deletes an immune path (.sdd/, .git/, keys, policy or agent config)",
  },
  secretDetected: {
    action: "deny",
    means: "the call reads a key or token file, or carries a secret in what it writes or runs",
  },
  integrityGuard: {
    action: "ask",
    means: "an integrity guard fired (see guards); an operator must approve",
  },
  alwaysAllowRule: { action: "allow", means: "an always-allow rule matched" },
  denyRule: { action: "deny", means: "a deny rule matched" },
  askRule: { action: "ask", means: "an ask rule matched; an operator must approve" },
  allowRule: { action: "allow", means: "an allow rule matched" },
  defaultAllow: { action: "allow", means: "no rule matched (the default)" },
  ruleUnreadable: {
    action: "ask",
    means: "a rule file that could decide this call cannot be read or is invalid",
  },
  approvalGranted: { action: "allow", means: "an operator approved the parked call" },
  approvalDenied: { action: "deny", means: "an operator denied the parked call" },
  approvalTimeout: { action: "deny", means: "nobody answered the parked call in time" },
  noApprover: { action: "deny", means: "the call needs approval and nobody can give it here" },
  contractViolation: {
    action: "deny",
    means: "a decision from outside broke this contract (retired or unknown member, bad value)",
  },
  hookFailure: {
    action: "deny",
    means: "the hook could not get a decision (server unreachable, timed out, refused)",
  },
  inputInvalid: {
    action: "deny",
    means: "the hook input is not a valid tool call (not UTF-8, not JSON, too large)",
  },
} as const satisfies Record<string, { action: PolicyAction; means: string }>;

/** One of the keys of {@linkcode DECISION_REASONS}. */
export type DecisionReason = keyof typeof DECISION_REASONS;

/** The reasons in a stable order. */
export const DECISION_REASON_NAMES = Object.keys(DECISION_REASONS) as DecisionReason[];

/** Integrity guards an `ask` can stand on, each with its trigger. */
export const INTEGRITY_GUARDS = {
  dangerous_delete: "a recursive delete (rm -r, find -delete) of a protected location: /, a " +
    "top-level system folder, the home folder, the repository or worktree root, .git or " +
    ".sdd, or anything outside the worktree",
  unverifiable_delete: "a recursive delete whose target cannot be resolved from the text " +
    "($VAR, $(…), `…`, ~user, a glob)",
  unverifiable_shell_text: "shell text the engine cannot parse or follow: unbalanced quotes, " +
    "control characters, eval, a computed command name, text piped into a shell, over 64 KiB",
  transcript_write: "a write into the agent CLI's own transcript or session state (its " +
    "transcript path, or its state folder under the agent's home)",
  artifact_shared_read: "a read of another session's artefacts: other worktrees, agent " +
    "homes and logs under .sdd/, the audit and lineage logs",
} as const;

/** One of the keys of {@linkcode INTEGRITY_GUARDS}. */
export type IntegrityGuard = keyof typeof INTEGRITY_GUARDS;

/** The guards in a stable order. */
export const INTEGRITY_GUARD_NAMES = Object.keys(INTEGRITY_GUARDS) as IntegrityGuard[];

/**
 * Members of earlier versions of the contract, refused by name wherever a decision is
 * consumed, with what replaced them.
 */
export const RETIRED_MEMBERS = {
  reason: "use decisionReason (closed set) and message (free text)",
  guard: "use guards (a set of integrity guard names)",
} as const;

/** Precedence tiers, highest first. */
export const POLICY_TIERS = ["immune", "safety", "always_allow", "deny", "ask", "allow"] as const;

/** One of {@linkcode POLICY_TIERS}. */
export type PolicyTier = typeof POLICY_TIERS[number];

/** A decision. */
export interface PolicyDecision {
  /** allow, deny or ask. */
  action: PolicyAction;
  /** Why, from the closed set. */
  decisionReason: DecisionReason;
  /** Free text for people (and the agent, on a deny). */
  message?: string;
  /** For an ask: the integrity guards it stands on (a set, sorted). */
  guards?: IntegrityGuard[];
  /** The precedence tier that decided, when a tier did. */
  tier?: PolicyTier;
  /** Id of the rule that decided, when one did. */
  ruleId?: string;
  /** Where that rule is (`file:line:col`). */
  ruleSource?: string;
}

/** Longest message accepted in a decision from outside. */
export const MAX_DECISION_MESSAGE = 4000;

const DecisionSchema = z.object({
  action: z.enum(POLICY_ACTIONS),
  decisionReason: z.enum(DECISION_REASON_NAMES as [DecisionReason, ...DecisionReason[]]),
  message: z.string().max(MAX_DECISION_MESSAGE).optional(),
  guards: z.array(z.enum(INTEGRITY_GUARD_NAMES as [IntegrityGuard, ...IntegrityGuard[]]))
    .optional(),
  tier: z.enum(POLICY_TIERS).optional(),
  ruleId: z.string().min(1).max(200).optional(),
  ruleSource: z.string().min(1).max(2000).optional(),
}).strict();

/** The outcome of {@linkcode checkDecision}. */
export type DecisionCheck =
  | { ok: true; decision: PolicyDecision }
  | { ok: false; problems: string[]; decision: PolicyDecision };

/** A fail-closed decision: always a deny. */
export function failClosed(
  decisionReason: "contractViolation" | "hookFailure" | "inputInvalid" | "noApprover",
  message: string,
): PolicyDecision {
  return { action: "deny", decisionReason, message };
}

/**
 * Checks a decision that came from outside (JSON from the task server, a plugin, a file).
 * Refuses, in this order: a non-object, the retired members `reason` and `guard` (by name),
 * members outside the contract, an action or reason outside the closed sets, a reason whose
 * action differs, guards that are unknown, repeated, or missing on an `integrityGuard` ask.
 * A refusal is a `deny` with `decisionReason: contractViolation` and the problems in its
 * message.
 *
 * @example
 * ```ts ignore
 * checkDecision({ action: "allow", decisionReason: "defaultAllow" }).ok; // true
 * const r = checkDecision({ action: "allow", reason: "fine" });
 * r.ok; // false
 * r.decision; // { action: "deny", decisionReason: "contractViolation", message: "…" }
 * ```
 */
export function checkDecision(value: unknown, where = "decision"): DecisionCheck {
  const problems: string[] = [];
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    problems.push(`${where} is not an object`);
  } else {
    for (const [name, replacement] of Object.entries(RETIRED_MEMBERS)) {
      if (Object.hasOwn(value, name)) {
        problems.push(`${where}.${name} is a retired member (${replacement})`);
      }
    }
    if (problems.length === 0) {
      const parsed = DecisionSchema.safeParse(value);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const path = issue.path.length > 0 ? `${where}.${issue.path.join(".")}` : where;
          problems.push(`${path}: ${issue.message}`);
        }
      } else {
        problems.push(...consistency(parsed.data, where));
        if (problems.length === 0) return { ok: true, decision: normalize(parsed.data) };
      }
    }
  }
  return {
    ok: false,
    problems,
    decision: failClosed("contractViolation", `refused ${where}: ${problems.join("; ")}`),
  };
}

function consistency(d: z.infer<typeof DecisionSchema>, where: string): string[] {
  const problems: string[] = [];
  const expected = DECISION_REASONS[d.decisionReason].action;
  if (d.action !== expected) {
    problems.push(
      `${where}.action '${d.action}' does not go with decisionReason '${d.decisionReason}' ` +
        `(which is always '${expected}')`,
    );
  }
  const guards = d.guards ?? [];
  if (new Set(guards).size !== guards.length) problems.push(`${where}.guards repeats a guard`);
  if (d.decisionReason === "integrityGuard" && guards.length === 0) {
    problems.push(`${where}.guards must name at least one guard for integrityGuard`);
  }
  return problems;
}

function normalize(d: z.infer<typeof DecisionSchema>): PolicyDecision {
  const out: PolicyDecision = { action: d.action, decisionReason: d.decisionReason };
  if (d.message !== undefined) out.message = d.message;
  if (d.guards !== undefined && d.guards.length > 0) out.guards = [...d.guards].sort();
  if (d.tier !== undefined) out.tier = d.tier;
  if (d.ruleId !== undefined) out.ruleId = d.ruleId;
  if (d.ruleSource !== undefined) out.ruleSource = d.ruleSource;
  return out;
}
