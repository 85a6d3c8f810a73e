// The precedence table, pair by pair: for every two tiers, one call that triggers both, and
// the decision the table says. Tiers, highest first: IMMUNE, SAFETY (a secret, or an integrity
// guard's ask), ALWAYS-ALLOW, DENY, ASK, ALLOW — plus a rule file that cannot be read, which
// asks about what it could reach. Each rule tier is triggered by a rule matching the call's
// `probe` member, so any two combine on the same call.
import assert from "node:assert/strict";
import {
  decide,
  type EffectivePolicy,
  type PolicyDecision,
  type RuleProblem,
  type ToolCall,
} from "../../src/policy/mod.ts";
import { parseRulesFile } from "../../src/policy/rules.ts";

const ROOT = "/r";
const PLACES = {
  cwd: `${ROOT}/.sdd/worktrees/s1`,
  root: ROOT,
  sdd: `${ROOT}/.sdd`,
  home: `${ROOT}/.sdd/runtime/homes/s1`,
};

type Tier = "immune" | "secret" | "guard" | "unreadable" | "always" | "deny" | "ask" | "allow";
const ORDER: Tier[] = ["immune", "secret", "guard", "unreadable", "always", "deny", "ask", "allow"];

/** The call for the highest tier of the pair (rule tiers use a neutral read). */
function baseCall(tiers: Tier[]): ToolCall {
  if (tiers.includes("immune")) {
    return { tool: "Write", input: { file_path: `${ROOT}/.git/config`, content: "x", probe: "p" } };
  }
  if (tiers.includes("secret")) {
    return { tool: "Read", input: { file_path: `${ROOT}/.sdd/keys/operator.key`, probe: "p" } };
  }
  if (tiers.includes("guard")) return { tool: "Bash", input: { command: "rm -rf /", probe: "p" } };
  return { tool: "Read", input: { file_path: `${PLACES.cwd}/a.ts`, probe: "p" } };
}

function policyFor(tiers: Tier[]): EffectivePolicy {
  const lists: string[] = [];
  const rule = (kind: string) =>
    `${kind}:\n  - id: ${
      kind.replace("_", "-")
    }-probe\n    tool: "*"\n    input_field: probe\n    input_pattern: p\n`;
  if (tiers.includes("always")) lists.push(rule("always_allow"));
  if (tiers.includes("deny")) lists.push(rule("deny"));
  if (tiers.includes("ask")) lists.push(rule("ask"));
  if (tiers.includes("allow")) lists.push(rule("allow"));
  const parsed = parseRulesFile(lists.join(""), "rules.yaml");
  assert.deepEqual(parsed.problems, []);
  const problems: RuleProblem[] = tiers.includes("unreadable")
    ? [{ code: "policy.file_unreadable", message: "x", location: "always_allow.yaml", reach: "*" }]
    : [];
  return { rules: parsed.rules, problems };
}

const IMMUNE: Partial<PolicyDecision> = {
  action: "deny",
  decisionReason: "immunePath",
  tier: "immune",
};
const SECRET: Partial<PolicyDecision> = {
  action: "deny",
  decisionReason: "secretDetected",
  tier: "safety",
};
const GUARD: Partial<PolicyDecision> = {
  action: "ask",
  decisionReason: "integrityGuard",
  tier: "safety",
  guards: ["dangerous_delete"],
};
const UNREADABLE: Partial<PolicyDecision> = { action: "ask", decisionReason: "ruleUnreadable" };
const ALWAYS: Partial<PolicyDecision> = {
  action: "allow",
  decisionReason: "alwaysAllowRule",
  tier: "always_allow",
};
const DENY: Partial<PolicyDecision> = { action: "deny", decisionReason: "denyRule", tier: "deny" };
const ASK: Partial<PolicyDecision> = { action: "ask", decisionReason: "askRule", tier: "ask" };
const ALLOW: Partial<PolicyDecision> = {
  action: "allow",
  decisionReason: "allowRule",
  tier: "allow",
};

/** The table: [higher, lower] → decision. Written out, not computed. */
const TABLE: Record<string, Partial<PolicyDecision>> = {
  "immune+secret": IMMUNE,
  "immune+guard": IMMUNE,
  "immune+unreadable": IMMUNE,
  "immune+always": IMMUNE,
  "immune+deny": IMMUNE,
  "immune+ask": IMMUNE,
  "immune+allow": IMMUNE,
  "secret+guard": SECRET,
  "secret+unreadable": SECRET,
  "secret+always": SECRET,
  "secret+deny": SECRET,
  "secret+ask": SECRET,
  "secret+allow": SECRET,
  "guard+unreadable": GUARD,
  "guard+always": GUARD,
  // A deny rule tightens a safety ask into a deny (the guards stay on record).
  "guard+deny": { ...DENY, guards: ["dangerous_delete"] },
  "guard+ask": GUARD,
  "guard+allow": GUARD,
  "unreadable+always": UNREADABLE,
  "unreadable+deny": DENY,
  "unreadable+ask": UNREADABLE,
  "unreadable+allow": UNREADABLE,
  "always+deny": ALWAYS,
  "always+ask": ALWAYS,
  "always+allow": ALWAYS,
  "deny+ask": DENY,
  "deny+allow": DENY,
  "ask+allow": ASK,
};

const SINGLE: Record<Tier, Partial<PolicyDecision>> = {
  immune: IMMUNE,
  secret: SECRET,
  guard: GUARD,
  unreadable: UNREADABLE,
  always: ALWAYS,
  deny: DENY,
  ask: ASK,
  allow: ALLOW,
};

function check(tiers: Tier[], want: Partial<PolicyDecision>): void {
  const got = decide(baseCall(tiers), policyFor(tiers), PLACES);
  const picked: Record<string, unknown> = {};
  for (const k of Object.keys(want)) picked[k] = got[k as keyof PolicyDecision];
  assert.deepEqual(picked, want, `${tiers.join("+")}: got ${JSON.stringify(got)}`);
}

Deno.test("every tier alone gives its own decision; nothing at all is the default allow", () => {
  for (const tier of ORDER) check([tier], SINGLE[tier]);
  assert.deepEqual(decide(baseCall([]), policyFor([]), PLACES), {
    action: "allow",
    decisionReason: "defaultAllow",
    tier: "allow",
  });
});

Deno.test("every pair of tiers gives the higher tier's decision (the precedence table)", () => {
  let pairs = 0;
  for (let i = 0; i < ORDER.length; i++) {
    for (let j = i + 1; j < ORDER.length; j++) {
      const key = `${ORDER[i]}+${ORDER[j]}`;
      assert.ok(key in TABLE, `the table has ${key}`);
      check([ORDER[i], ORDER[j]], TABLE[key]);
      pairs++;
    }
  }
  assert.equal(pairs, Object.keys(TABLE).length);
});

Deno.test("decisions name the rule and where it is", () => {
  const d = decide(baseCall(["deny"]), policyFor(["deny"]), PLACES);
  assert.equal(d.ruleId, "deny-probe");
  assert.match(d.ruleSource ?? "", /^rules\.yaml:\d+:\d+$/);
});

Deno.test("a problem that reaches only another tool leaves this call alone", () => {
  const policy: EffectivePolicy = {
    rules: [],
    problems: [{ code: "policy.bad_pattern", message: "x", location: "f:1:1", reach: ["bash"] }],
  };
  assert.equal(decide(baseCall([]), policy, PLACES).decisionReason, "defaultAllow");
  const bash = decide({ tool: "run_shell_command", input: { command: "ls" } }, policy, PLACES);
  assert.equal(bash.decisionReason, "ruleUnreadable", "reach by family: run_shell_command is bash");
});
