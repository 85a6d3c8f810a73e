// The run-side policy: hook input and answers (bad input refused, never allowed), parked asks
// resolved by an operator or denied by the timeout under a fake clock, every decision
// recorded (and a failure to record denying the call), counts per task.
import assert from "node:assert/strict";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import {
  ApprovalError,
  parseHookInput,
  type PolicyDecision,
  type PolicyRecord,
  PolicyService,
  renderHookAnswer,
} from "../../src/policy/mod.ts";

const enc = (s: string) => new TextEncoder().encode(s);

Deno.test("hook input that is not a pre-tool call is refused as inputInvalid", () => {
  const cases: [Uint8Array, RegExp][] = [
    [new Uint8Array([0x7b, 0xff, 0x7d]), /not UTF-8/],
    [enc("not json"), /not JSON/],
    [enc("[1]"), /not a JSON object/],
    [enc('{"tool_input":{}}'), /no tool_name/],
    [enc('{"tool_name":""}'), /no tool_name/],
    [enc(`{"tool_name":"${"x".repeat(201)}"}`), /no tool_name/],
    [enc('{"tool_name":"Read","tool_input":"a"}'), /tool_input is not an object/],
    [enc('{"hook_event_name":"PostToolUse","tool_name":"Read"}'), /not a pre-tool event/],
    [
      enc('{"tool_name":"Read","tool_input":{}, "pad":"' + "x".repeat(200) + '"}'),
      /larger than 100/,
    ],
  ];
  for (const [bytes, message] of cases) {
    const r = parseHookInput(bytes, 100 + (message.source.includes("larger") ? 0 : 1000));
    assert.equal(r.ok, false, String(message));
    if (!r.ok) {
      assert.equal(r.decision.action, "deny");
      assert.equal(r.decision.decisionReason, "inputInvalid");
      assert.match(r.decision.message ?? "", message);
    }
  }
  const ok = parseHookInput(enc(JSON.stringify({
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    transcript_path: "/h/t.jsonl",
    tool_use_id: "toolu_1",
    cwd: "/w",
    unknown_new_member: 1,
  })));
  assert.deepEqual(ok, {
    ok: true,
    request: {
      tool: "Bash",
      input: { command: "ls" },
      transcriptPath: "/h/t.jsonl",
      cwd: "/w",
      toolUseId: "toolu_1",
    },
  });
});

Deno.test("answers: a default allow defers to the CLI, explicit allows and denies are said", () => {
  assert.deepEqual(
    renderHookAnswer({ action: "allow", decisionReason: "defaultAllow" }, "claude"),
    {},
  );
  assert.deepEqual(
    renderHookAnswer({ action: "allow", decisionReason: "defaultAllow" }, "gemini"),
    {},
  );
  const deny = {
    action: "deny",
    decisionReason: "denyRule",
    ruleId: "no-rm",
    message: "no",
  } as const;
  assert.deepEqual(renderHookAnswer(deny, "claude"), {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "bernstein policy: deny (denyRule no-rm): no",
    },
  });
  assert.deepEqual(renderHookAnswer(deny, "gemini"), {
    decision: "deny",
    reason: "bernstein policy: deny (denyRule no-rm): no",
  });
  const always = { action: "allow", decisionReason: "alwaysAllowRule", ruleId: "g" } as const;
  assert.equal(
    (renderHookAnswer(always, "claude").hookSpecificOutput as { permissionDecision: string })
      .permissionDecision,
    "allow",
  );
  const ask: PolicyDecision = {
    action: "ask",
    decisionReason: "integrityGuard",
    guards: ["dangerous_delete"],
  };
  assert.equal(renderHookAnswer(ask, "gemini").decision, "deny", "gemini cannot ask headless");
});

const CWD = "/r/.sdd/worktrees/s1";

function service(records: PolicyRecord[], clock = new FakeClock(), fail = false) {
  const s = new PolicyService({
    policy: { rules: [], problems: [] },
    places: { root: "/r", sdd: "/r/.sdd" },
    clock,
    random: new SeededRandom(7),
    approvalTimeoutMs: 60_000,
    record: (r) => {
      if (fail) return Promise.reject(new Error("disk full"));
      records.push(r);
      return Promise.resolve();
    },
  });
  s.register({
    session: "s1",
    task_id: "t1",
    cli: "claude",
    agent_id: "a1",
    cwd: CWD,
    home: "/r/.sdd/runtime/homes/s1",
  });
  return s;
}

const rmRoot = { tool: "Bash", input: { command: "rm -rf /" } };

Deno.test("an ask parks until the operator approves; both decisions are recorded and counted", async () => {
  const records: PolicyRecord[] = [];
  const s = service(records);
  const pending = s.decide("s1", rmRoot);
  await new Promise((r) => setTimeout(r, 0));
  const [parked] = s.approvals.list();
  assert.equal(parked.status, "pending");
  assert.equal(parked.summary, "Bash rm -rf /");
  assert.deepEqual(parked.ask.guards, ["dangerous_delete"]);
  s.approvals.resolve(parked.id, "approve", "operator", "cleaning a scratch vm");
  const d = await pending;
  assert.equal(d.action, "allow");
  assert.equal(d.decisionReason, "approvalGranted");
  assert.deepEqual(d.guards, ["dangerous_delete"]);
  assert.match(d.message ?? "", /approved by operator .*cleaning a scratch vm/);
  assert.deepEqual(records.map((r) => [r.decision.action, r.approval?.status]), [
    ["ask", "pending"],
    ["allow", "approved"],
  ]);
  assert.match(records[0].input_sha256, /^sha256:[0-9a-f]{64}$/);
  assert.deepEqual(s.counts("t1"), { decisions: 2, allow: 1, deny: 0, ask: 1 });
  assert.throws(() => s.approvals.resolve(parked.id, "deny", "operator"), ApprovalError);
  assert.throws(() => s.approvals.resolve("ap-nope", "deny", "operator"), /no parked call/);
});

Deno.test("an ask nobody answers is denied at the timeout, and the agent is told why", async () => {
  const clock = new FakeClock();
  const records: PolicyRecord[] = [];
  const s = service(records, clock);
  const pending = s.decide("s1", rmRoot);
  await new Promise((r) => setTimeout(r, 0));
  clock.advance(59_999);
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(s.approvals.list().length, 1, "still parked before the timeout");
  clock.advance(1);
  const d = await pending;
  assert.equal(d.decisionReason, "approvalTimeout");
  assert.equal(d.action, "deny");
  assert.match(
    d.message ?? "",
    /no operator answered within 60 s \(tuning\.policy\.approval_timeout_s\)/,
  );
  assert.equal(s.approvals.list().length, 0);
  assert.equal(s.approvals.list(true)[0].status, "timed_out");
});

Deno.test("an operator deny, a hook that goes away, an unknown session, a failed record", async () => {
  const records: PolicyRecord[] = [];
  const s = service(records);
  const p1 = s.decide("s1", rmRoot);
  await new Promise((r) => setTimeout(r, 0));
  s.approvals.resolve(s.approvals.list()[0].id, "deny", "operator");
  assert.equal((await p1).decisionReason, "approvalDenied");

  const abort = new AbortController();
  const p2 = s.decide("s1", rmRoot, abort.signal);
  await new Promise((r) => setTimeout(r, 0));
  abort.abort();
  const d2 = await p2;
  assert.equal(d2.action, "deny");
  assert.equal(d2.decisionReason, "noApprover");

  const d3 = await s.decide("nobody", { tool: "Read", input: {} });
  assert.deepEqual([d3.action, d3.decisionReason], ["deny", "hookFailure"]);

  const failing = service([], new FakeClock(), true);
  const d4 = await failing.decide("s1", { tool: "Read", input: { file_path: "a" } });
  assert.deepEqual([d4.action, d4.decisionReason], ["deny", "hookFailure"]);
  assert.match(d4.message ?? "", /could not be recorded: disk full/);
  const d5 = await failing.decide("s1", rmRoot);
  assert.equal(d5.action, "deny", "an ask that cannot be recorded is not parked");
  assert.equal(failing.approvals.list().length, 0);
});

Deno.test("an agent on another host is judged by that host's clone (its reported cwd)", async () => {
  const records: PolicyRecord[] = [];
  const s = service(records);
  const remote = "/w/clone/.sdd/worktrees/s1";
  const keys = await s.decide("s1", {
    tool: "Write",
    input: { file_path: "/w/clone/.sdd/keys/agent.pem", content: "x" },
    cwd: `${remote}/src`,
  });
  assert.deepEqual([keys.action, keys.decisionReason], ["deny", "immunePath"]);
  const own = await s.decide("s1", {
    tool: "Write",
    input: { file_path: `${remote}/src/a.ts`, content: "x" },
    cwd: remote,
  });
  assert.equal(own.decisionReason, "defaultAllow");
  const pending = s.decide("s1", {
    tool: "Bash",
    input: { command: "rm -rf /w/clone/.sdd/worktrees/s1" },
    cwd: remote,
  });
  await new Promise((r) => setTimeout(r, 0));
  const [parked] = s.approvals.list();
  assert.deepEqual(parked.ask.guards, ["dangerous_delete"], "its worktree root is protected");
  s.approvals.resolve(parked.id, "deny", "operator");
  assert.equal((await pending).decisionReason, "approvalDenied");
});
