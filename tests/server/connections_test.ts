// The task server's part of connections in a run (docs/FLEET.md): an agent may not create a
// task that asks for a connection, and every body an agent sends is stored redacted.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { SecretRedactor } from "../../src/io/mod.ts";
import type { Task } from "../../src/tasks/mod.ts";
import { startTestServer } from "./_server.ts";

const SECRET = "ghp_SERVERsecret0123456789";
const OP = { actor: "test", reason: "setup" };

Deno.test("a manager agent cannot create a task that asks for a connection (403)", async () => {
  const s = await startTestServer();
  try {
    await s.store.createMany([{ id: "m", title: "manage", role: "manager" }], OP);
    const token = (await s.tokens.issueAgentToken({
      session: "sess-m",
      agent_id: "agent-m",
      task_ids: ["m"],
      can_create_tasks: true,
    })).token;
    const refused = await s.call("POST", "/tasks", {
      token,
      body: {
        title: "leak",
        role: "backend",
        metadata: { connections: [{ name: "prod-github", env: "GITHUB_TOKEN" }] },
      },
    });
    strictEqual(refused.status, 403);
    match(JSON.stringify(refused.json), /may not ask for connections/);
    const made = await s.call("POST", "/tasks", {
      token,
      body: { title: "fine", role: "backend", metadata: { note: "x" } },
    });
    strictEqual(made.status, 201, made.text);
    strictEqual((made.json.task as Task).parent_task_id, "m");
  } finally {
    await s.stop();
  }
});

Deno.test("what an agent sends (progress, summary, reasons) is stored with minted secrets redacted", async () => {
  const redactor = new SecretRedactor();
  const s = await startTestServer({ redactor });
  try {
    await s.store.createMany([{ id: "t", title: "t", role: "dev" }], OP);
    await s.store.claim("t", { agent: "agent-t", expectedVersion: 1 });
    const token = (await s.tokens.issueAgentToken({
      session: "sess-t",
      agent_id: "agent-t",
      task_ids: ["t"],
      can_create_tasks: false,
    })).token;
    // Registered at mint time, before the agent ever runs.
    redactor.add(SECRET, "connection gh");
    const progress = await s.call("POST", "/tasks/t/progress", {
      token,
      body: { message: `using ${SECRET}`, percent: 10 },
    });
    strictEqual(progress.status, 200, progress.text);
    const done = await s.call("POST", "/tasks/t/complete", {
      token,
      body: { summary: `token was ${SECRET}` },
    });
    strictEqual(done.status, 200, done.text);
    const task = await s.store.get("t");
    strictEqual(task?.result_summary, "token was [REDACTED: connection gh]");
    const events = JSON.stringify(s.sink.events);
    ok(!events.includes(SECRET), events);
    ok(events.includes("using [REDACTED: connection gh]"), events);
    deepStrictEqual(redactor.secrets().map((x) => x.name), ["connection gh"]);
  } finally {
    await s.stop();
  }
});
