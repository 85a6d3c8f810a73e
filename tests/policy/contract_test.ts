// The decision contract, table-driven: every action, every decisionReason (with the one action
// it may carry and every other one), every guard, every retired member and unknown members —
// each consumed through checkDecision, which accepts exactly the valid ones and turns every
// other answer into a deny recording the refusal.
import assert from "node:assert/strict";
import {
  checkDecision,
  DECISION_REASON_NAMES,
  DECISION_REASONS,
  INTEGRITY_GUARD_NAMES,
  POLICY_ACTIONS,
  POLICY_TIERS,
  type PolicyDecision,
  RETIRED_MEMBERS,
} from "../../src/policy/mod.ts";

function assertRefused(value: unknown, mentions: string): void {
  const r = checkDecision(value, "answer");
  assert.equal(r.ok, false, JSON.stringify(value));
  assert.equal(r.decision.action, "deny");
  assert.equal(r.decision.decisionReason, "contractViolation");
  assert.ok(
    r.decision.message?.includes(mentions),
    `${JSON.stringify(value)}: '${r.decision.message}' should mention '${mentions}'`,
  );
}

function valid(reason: keyof typeof DECISION_REASONS): PolicyDecision {
  const d: PolicyDecision = { action: DECISION_REASONS[reason].action, decisionReason: reason };
  if (reason === "integrityGuard") d.guards = ["dangerous_delete"];
  return d;
}

Deno.test("the closed sets are exactly the documented members", () => {
  assert.deepEqual([...POLICY_ACTIONS], ["allow", "deny", "ask"]);
  assert.deepEqual(DECISION_REASON_NAMES, [
    "immunePath",
    "secretDetected",
    "integrityGuard",
    "alwaysAllowRule",
    "denyRule",
    "askRule",
    "allowRule",
    "defaultAllow",
    "ruleUnreadable",
    "approvalGranted",
    "approvalDenied",
    "approvalTimeout",
    "noApprover",
    "contractViolation",
    "hookFailure",
    "inputInvalid",
  ]);
  assert.deepEqual(INTEGRITY_GUARD_NAMES, [
    "dangerous_delete",
    "unverifiable_delete",
    "unverifiable_shell_text",
    "transcript_write",
    "artifact_shared_read",
  ]);
  assert.deepEqual(Object.keys(RETIRED_MEMBERS), ["reason", "guard"]);
  assert.deepEqual([...POLICY_TIERS], ["immune", "safety", "always_allow", "deny", "ask", "allow"]);
});

Deno.test("every decisionReason is accepted with its own action and refused with any other", () => {
  for (const reason of DECISION_REASON_NAMES) {
    const ok = checkDecision(valid(reason));
    assert.equal(ok.ok, true, reason);
    assert.deepEqual(ok.decision, valid(reason));
    for (const action of POLICY_ACTIONS) {
      if (action === DECISION_REASONS[reason].action) continue;
      assertRefused({ ...valid(reason), action }, `does not go with decisionReason '${reason}'`);
    }
  }
});

Deno.test("every action outside the closed set is refused", () => {
  for (const action of ["ALLOW", "permit", "block", "", "yes", 1, null, true]) {
    assertRefused({ action, decisionReason: "defaultAllow" }, "answer.action");
  }
});

Deno.test("every decisionReason outside the closed set is refused", () => {
  for (const reason of ["default_allow", "allowed", "", "ImmunePath", 7]) {
    assertRefused({ action: "allow", decisionReason: reason }, "answer.decisionReason");
  }
  assertRefused({ action: "allow" }, "answer.decisionReason");
});

Deno.test("every guard is accepted on an ask; unknown, repeated or missing guards are refused", () => {
  for (const guard of INTEGRITY_GUARD_NAMES) {
    const r = checkDecision({ action: "ask", decisionReason: "integrityGuard", guards: [guard] });
    assert.equal(r.ok, true, guard);
    assert.deepEqual(r.decision.guards, [guard]);
  }
  const all = checkDecision({
    action: "ask",
    decisionReason: "integrityGuard",
    guards: [...INTEGRITY_GUARD_NAMES].reverse(),
  });
  assert.deepEqual(all.decision.guards, [...INTEGRITY_GUARD_NAMES].sort(), "a sorted set");
  assertRefused(
    { action: "ask", decisionReason: "integrityGuard", guards: ["rm_rf"] },
    "answer.guards.0",
  );
  assertRefused(
    {
      action: "ask",
      decisionReason: "integrityGuard",
      guards: ["dangerous_delete", "dangerous_delete"],
    },
    "repeats",
  );
  assertRefused({ action: "ask", decisionReason: "integrityGuard" }, "at least one guard");
  assertRefused({ action: "ask", decisionReason: "integrityGuard", guards: [] }, "at least one");
});

Deno.test("the retired members reason and guard are refused by name, even beside valid ones", () => {
  for (const [member, replacement] of Object.entries(RETIRED_MEMBERS)) {
    for (const reason of DECISION_REASON_NAMES) {
      assertRefused({ ...valid(reason), [member]: "x" }, `answer.${member} is a retired member`);
    }
    assertRefused({ action: "allow", [member]: "fine" }, replacement);
  }
  // Both at once: both named.
  const r = checkDecision({ action: "allow", decisionReason: "defaultAllow", reason: 1, guard: 2 });
  assert.match(r.decision.message ?? "", /reason is a retired member.*guard is a retired member/);
});

Deno.test("optional members are typed; unknown members and non-objects are refused", () => {
  assert.equal(checkDecision({ ...valid("denyRule"), message: "no" }).ok, true);
  assert.equal(checkDecision({ ...valid("denyRule"), tier: "deny", ruleId: "no-rm" }).ok, true);
  for (const tier of POLICY_TIERS) {
    assert.equal(checkDecision({ ...valid("defaultAllow"), tier }).ok, true, tier);
  }
  assertRefused({ ...valid("denyRule"), tier: "root" }, "answer.tier");
  assertRefused({ ...valid("denyRule"), message: 5 }, "answer.message");
  assertRefused({ ...valid("denyRule"), message: "x".repeat(5000) }, "answer.message");
  assertRefused({ ...valid("denyRule"), ruleId: "" }, "answer.ruleId");
  assertRefused({ ...valid("defaultAllow"), permissionDecision: "allow" }, "permissionDecision");
  assertRefused({ ...valid("defaultAllow"), extra: true }, "extra");
  for (const v of [null, "allow", 1, [valid("defaultAllow")], undefined]) {
    assertRefused(v, "answer is not an object");
  }
});
