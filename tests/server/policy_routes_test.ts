// The task server's policy routes: /policy/decide for agent tokens only (an ask waits for the
// operator), /approvals for the operator token only, bad bodies named, answered or unknown
// approvals refused, and 503 when the run has no policy.
import assert from "node:assert/strict";
import { SeededRandom } from "../../src/io/mod.ts";
import { PolicyService } from "../../src/policy/mod.ts";
import { errorCode, startTestServer } from "./_server.ts";

async function withPolicyServer(
  fn: (
    t: Awaited<ReturnType<typeof startTestServer>>,
    agent: string,
    service: PolicyService,
  ) => Promise<void>,
): Promise<void> {
  const holder: { service?: PolicyService } = {};
  const records: unknown[] = [];
  const t = await startTestServer({
    policy: {
      decide: (s, r, signal) => (holder.service as PolicyService).decide(s, r, signal),
      approvals: {
        list: (all) => (holder.service as PolicyService).approvals.list(all),
        resolve: (id, v, actor, note) =>
          (holder.service as PolicyService).approvals.resolve(id, v, actor, note),
      },
    },
  });
  const service = new PolicyService({
    policy: { rules: [], problems: [] },
    places: { root: t.root, sdd: `${t.root}/.sdd` },
    clock: t.clock,
    random: new SeededRandom(3),
    approvalTimeoutMs: 60_000,
    record: (r) => {
      records.push(r);
      return Promise.resolve();
    },
  });
  holder.service = service;
  const issued = await t.tokens.issueAgentToken({
    session: "s1",
    agent_id: "s1",
    task_ids: ["t1"],
    can_create_tasks: false,
  });
  service.register({
    session: "s1",
    task_id: "t1",
    cli: "claude",
    agent_id: "s1",
    cwd: `${t.root}/.sdd/worktrees/s1`,
    home: `${t.root}/.sdd/runtime/homes/s1`,
  });
  try {
    await fn(t, issued.token, service);
  } finally {
    await t.stop();
  }
}

const READ = { tool_name: "Read", tool_input: { file_path: "src/a.ts" } };
const RM = { tool_name: "Bash", tool_input: { command: "rm -rf /" } };

Deno.test("policy routes answer 503 when the run has no policy", async () => {
  const t = await startTestServer();
  try {
    const r = await t.call("POST", "/policy/decide", { token: t.operator, body: READ });
    assert.equal(r.status, 503);
    assert.equal(errorCode(r.json), "policy.disabled");
    assert.equal((await t.call("GET", "/approvals", { token: t.operator })).status, 503);
  } finally {
    await t.stop();
  }
});

Deno.test("decide: agent tokens only, bodies checked, decisions from the session's policy", async () => {
  await withPolicyServer(async (t, agent) => {
    const ok = await t.call("POST", "/policy/decide", { token: agent, body: READ });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.json.decision, {
      action: "allow",
      decisionReason: "defaultAllow",
      tier: "allow",
    });
    const immune = await t.call("POST", "/policy/decide", {
      token: agent,
      body: { tool_name: "Write", tool_input: { file_path: `${t.root}/.sdd/keys/x`, content: "" } },
    });
    assert.equal((immune.json.decision as { action: string }).action, "deny");
    const op = await t.call("POST", "/policy/decide", { token: t.operator, body: READ });
    assert.equal(op.status, 403);
    assert.equal((await t.call("POST", "/policy/decide", { body: READ })).status, 401);
    for (
      const body of [{ tool_input: {} }, { ...READ, extra: 1 }, {
        tool_name: "Read",
        tool_input: "x",
      }]
    ) {
      const bad = await t.call("POST", "/policy/decide", { token: agent, body });
      assert.equal(bad.status, 400, JSON.stringify(body));
    }
  });
});

Deno.test("an ask waits until the operator answers over /approvals; agents cannot answer", async () => {
  await withPolicyServer(async (t, agent) => {
    const pending = t.call("POST", "/policy/decide", { token: agent, body: RM });
    let listed: Record<string, unknown>[] = [];
    // The request parks inside the server; poll the list until it shows (no timing assumed).
    while (listed.length === 0) {
      listed = (await t.call("GET", "/approvals", { token: t.operator })).json.approvals as Record<
        string,
        unknown
      >[];
    }
    const id = String(listed[0].id);
    assert.equal(listed[0].summary, "Bash rm -rf /");
    assert.equal((await t.call("GET", "/approvals", { token: agent })).status, 403);
    assert.equal(
      (await t.call("POST", `/approvals/${id}/approve`, { token: agent, body: {} })).status,
      403,
    );
    const approved = await t.call("POST", `/approvals/${id}/approve`, {
      token: t.operator,
      body: { note: "scratch vm" },
    });
    assert.equal(approved.status, 200, approved.text);
    const decided = await pending;
    assert.equal(
      (decided.json.decision as { decisionReason: string }).decisionReason,
      "approvalGranted",
    );
    const again = await t.call("POST", `/approvals/${id}/deny`, { token: t.operator, body: {} });
    assert.equal(again.status, 409);
    assert.equal(errorCode(again.json), "approval.not_pending");
    const unknown = await t.call("POST", "/approvals/ap-nope/deny", {
      token: t.operator,
      body: {},
    });
    assert.equal(unknown.status, 404);
    assert.equal(errorCode(unknown.json), "approval.not_found");
    const all = await t.call("GET", "/approvals?all=1", { token: t.operator });
    assert.equal((all.json.approvals as unknown[]).length, 1);
    assert.equal(
      (await t.call("GET", "/approvals?everything=1", { token: t.operator })).status,
      400,
    );
  });
});
