import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import { VERSION } from "../../src/meta/mod.ts";
import {
  type ServerEvent,
  ServerStartError,
  startTaskServer,
  TokenRegistry,
} from "../../src/server/mod.ts";
import {
  createMemoryTaskStore,
  openHoldStore,
  type Task,
  type TaskStore,
} from "../../src/tasks/mod.ts";
import { errorCode, errorField, startTestServer, type TestServer } from "./_server.ts";

async function withServer(
  fn: (s: TestServer) => Promise<void>,
  options: Parameters<typeof startTestServer>[0] = {},
): Promise<void> {
  const s = await startTestServer(options);
  try {
    await fn(s);
  } finally {
    await s.stop();
  }
}

const OP = { actor: "test", reason: "setup" };

async function agentFor(s: TestServer, taskIds: string[], manager = false): Promise<string> {
  const issued = await s.tokens.issueAgentToken({
    session: `sess-${taskIds.join("-") || "none"}`,
    agent_id: `agent-${taskIds.join("-") || "none"}`,
    task_ids: taskIds,
    can_create_tasks: manager,
  });
  return issued.token;
}

Deno.test("server: /health answers without a token; every other route needs one (401)", async () => {
  await withServer(async (s) => {
    const health = await s.call("GET", "/health");
    assert.equal(health.status, 200);
    assert.deepEqual(health.json, { ok: true, version: VERSION });
    const routes: [string, string][] = [
      ["GET", "/tasks"],
      ["POST", "/tasks"],
      ["GET", "/tasks/x"],
      ["POST", "/tasks/x/claim"],
      ["POST", "/tasks/x/complete"],
      ["POST", "/tasks/x/fail"],
      ["POST", "/tasks/x/block"],
      ["POST", "/tasks/x/progress"],
      ["POST", "/agents/a/heartbeat"],
      ["GET", "/status"],
      ["GET", "/metrics"],
      ["GET", "/orchestrator/holds"],
      ["POST", "/orchestrator/holds"],
      ["DELETE", "/orchestrator/holds/h-0000000000000000"],
    ];
    for (const [method, path] of routes) {
      const r = await s.call(method, path, { body: {} });
      assert.equal(r.status, 401, `${method} ${path}`);
      assert.equal(errorCode(r.json), "auth.missing_token");
      assert.match(r.headers.get("www-authenticate") ?? "", /^Bearer/);
    }
    const wrong = await s.call("GET", "/tasks", { token: "bop_not-the-token" });
    assert.equal(wrong.status, 401);
    assert.equal(errorCode(wrong.json), "auth.invalid_token");
    const basic = await s.call("GET", "/tasks", { headers: { authorization: "Basic abc" } });
    assert.equal(errorCode(basic.json), "auth.invalid_token");
    const ok = await s.call("GET", "/tasks", { token: s.operator });
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json, { tasks: [] });
  });
});

Deno.test("server: network.allowed_ips is enforced on every route, /health included", async () => {
  await withServer(async (s) => {
    for (const path of ["/health", "/tasks"]) {
      const r = await s.call("GET", path, { token: s.operator });
      assert.equal(r.status, 403, path);
      assert.equal(errorCode(r.json), "server.ip_not_allowed");
      assert.match(String((r.json.error as { message: string }).message), /127\.0\.0\.1/);
    }
  }, { allowedIps: ["10.0.0.0/8", "2001:db8::/32"] });
  await withServer(async (s) => {
    assert.equal((await s.call("GET", "/tasks", { token: s.operator })).status, 200);
  }, { allowedIps: ["127.0.0.0/8"] });
  await assert.rejects(
    startTestServer({ allowedIps: ["127.0.0.1", "127.0.0.300"] }),
    (e: unknown) =>
      e instanceof ServerStartError && e.code === "server.bad_allowed_ip" &&
      e.location === "network.allowed_ips[1]",
  );
});

Deno.test("server: unknown route 404, wrong method 405 with Allow", async () => {
  await withServer(async (s) => {
    const nf = await s.call("GET", "/nope", { token: s.operator });
    assert.equal(nf.status, 404);
    assert.equal(errorCode(nf.json), "server.not_found");
    const na = await s.call("PUT", "/tasks", { token: s.operator });
    assert.equal(na.status, 405);
    assert.equal(errorCode(na.json), "server.method_not_allowed");
    assert.equal(na.headers.get("allow"), "POST, GET");
  });
});

Deno.test("server: POST /tasks creates (201), validates naming the field, refuses duplicates", async () => {
  await withServer(async (s) => {
    const made = await s.call("POST", "/tasks", {
      token: s.operator,
      body: { id: "plan-1", title: "Write parser", role: "backend", priority: 1 },
    });
    assert.equal(made.status, 201);
    const task = made.json.task as Task;
    assert.equal(task.id, "plan-1");
    assert.equal(task.status, "open");
    assert.equal(s.sink.events.at(-1)?.actor, "operator");

    const cases: [unknown, string, string][] = [
      [{ role: "backend" }, "task.invalid", "title"],
      [{ title: "x", role: "backend", scope: "huge" }, "task.invalid", "scope"],
      [{ title: "x", role: "backend", depends_on: [7] }, "task.invalid", "depends_on[0]"],
      [
        { title: "x", role: "backend", depends_on: ["ghost"] },
        "task.unknown_reference",
        "depends_on[0]",
      ],
      [{ title: "x", role: "backend", colour: "red" }, "task.invalid", "colour"],
    ];
    for (const [body, code, field] of cases) {
      const r = await s.call("POST", "/tasks", { token: s.operator, body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(errorCode(r.json), code);
      assert.equal(errorField(r.json), field);
      assert.ok(String((r.json.error as { message: string }).message).startsWith(`${field}: `));
    }
    const notJson = await s.call("POST", "/tasks", { token: s.operator, raw: "{title:" });
    assert.equal(notJson.status, 400);
    assert.equal(errorCode(notJson.json), "server.invalid_json");
    const dup = await s.call("POST", "/tasks", {
      token: s.operator,
      body: { id: "plan-1", title: "again", role: "backend" },
    });
    assert.equal(dup.status, 409);
    assert.equal(errorCode(dup.json), "task.duplicate_id");
    assert.equal((await s.store.list()).length, 1);
  });
});

Deno.test("server: bodies over tuning.server.max_body_bytes are refused with 413", async () => {
  await withServer(async (s) => {
    const big = JSON.stringify({ title: "x".repeat(5000), role: "r" });
    const declared = await s.call("POST", "/tasks", { token: s.operator, raw: big });
    assert.equal(declared.status, 413);
    assert.equal(errorCode(declared.json), "server.body_too_large");
    // A chunked body without Content-Length is cut off once it passes the limit.
    const chunks = [new TextEncoder().encode('{"title":"'), new Uint8Array(3000).fill(0x78)];
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    });
    const res = await fetch(s.server.url + "/tasks", {
      method: "POST",
      headers: { authorization: `Bearer ${s.operator}` },
      body: stream,
    });
    assert.equal(res.status, 413);
    assert.equal(errorCode(await res.json()), "server.body_too_large");
    const small = await s.call("POST", "/tasks", {
      token: s.operator,
      body: { title: "fits", role: "r" },
    });
    assert.equal(small.status, 201);
    assert.equal((await s.store.list()).length, 1);
  }, { server: { max_body_bytes: 2048 } });
});

Deno.test("server: GET /tasks filters by status/role/parent and validates the query", async () => {
  await withServer(async (s) => {
    await s.store.createMany([
      { id: "p", title: "p", role: "manager" },
      { id: "a", title: "a", role: "dev", parent_task_id: "p" },
      { id: "b", title: "b", role: "qa", parent_task_id: "p" },
    ], OP);
    await s.store.transition("b", "cancelled", OP);
    const ids = async (q: string) =>
      ((await s.call("GET", `/tasks${q}`, { token: s.operator })).json.tasks as Task[]).map((
        t,
      ) => t.id);
    assert.deepEqual(await ids(""), ["p", "a", "b"]);
    assert.deepEqual(await ids("?status=open"), ["p", "a"]);
    assert.deepEqual(await ids("?status=open,cancelled&parent=p"), ["a", "b"]);
    assert.deepEqual(await ids("?role=qa"), ["b"]);
    const bad = await s.call("GET", "/tasks?status=finished", { token: s.operator });
    assert.equal(bad.status, 400);
    assert.equal(errorField(bad.json), "status");
    const unknown = await s.call("GET", "/tasks?colour=red", { token: s.operator });
    assert.equal(unknown.status, 400);
    assert.equal(errorCode(unknown.json), "server.invalid_query");
    assert.equal(errorField(unknown.json), "colour");
  });
});

Deno.test("server: agent tokens see and change only their own tasks (403 otherwise)", async () => {
  await withServer(async (s) => {
    await s.store.createMany([
      { id: "mine", title: "mine", role: "dev" },
      { id: "theirs", title: "theirs", role: "dev" },
    ], OP);
    const token = await agentFor(s, ["mine"]);
    assert.equal((await s.call("GET", "/tasks/mine", { token })).status, 200);
    const other = await s.call("GET", "/tasks/theirs", { token });
    assert.equal(other.status, 403);
    assert.equal(errorCode(other.json), "auth.forbidden");
    const listed = (await s.call("GET", "/tasks", { token })).json.tasks as Task[];
    assert.deepEqual(listed.map((t) => t.id), ["mine"]);
    for (const verb of ["claim", "complete", "fail", "block", "progress"]) {
      const r = await s.call("POST", `/tasks/theirs/${verb}`, {
        token,
        body: { expected_version: 1, summary: "s", reason: "r", message: "m" },
      });
      assert.equal(r.status, 403, verb);
    }
    for (
      const [method, path] of [["GET", "/status"], ["GET", "/metrics"], [
        "GET",
        "/orchestrator/holds",
      ], ["POST", "/orchestrator/holds"]]
    ) {
      const r = await s.call(method, path, { token, body: { reason: "x" } });
      assert.equal(r.status, 403, path);
    }
    assert.equal((await s.store.get("theirs"))?.version, 1, "nothing changed");
    await s.tokens.revoke("sess-mine");
    const revoked = await s.call("GET", "/tasks/mine", { token });
    assert.equal(revoked.status, 401);
  });
});

Deno.test("server: claim checks the version; agent claims for itself, operator names the agent", async () => {
  await withServer(async (s) => {
    await s.store.createMany([{ id: "a", title: "a", role: "dev" }, {
      id: "b",
      title: "b",
      role: "dev",
    }], OP);
    const noAgent = await s.call("POST", "/tasks/a/claim", {
      token: s.operator,
      body: { expected_version: 1 },
    });
    assert.equal(noAgent.status, 400);
    assert.equal(errorField(noAgent.json), "agent");
    const stale = await s.call("POST", "/tasks/a/claim", {
      token: s.operator,
      body: { expected_version: 3, agent: "w1" },
    });
    assert.equal(stale.status, 409);
    assert.equal(errorCode(stale.json), "task.version_conflict");
    const ok = await s.call("POST", "/tasks/a/claim", {
      token: s.operator,
      body: { expected_version: 1, agent: "w1" },
    });
    assert.equal(ok.status, 200);
    assert.equal((ok.json.task as Task).assigned_agent, "w1");
    const token = await agentFor(s, ["b"]);
    const spoof = await s.call("POST", "/tasks/b/claim", {
      token,
      body: { expected_version: 1, agent: "someone" },
    });
    assert.equal(spoof.status, 403);
    const own = await s.call("POST", "/tasks/b/claim", { token, body: { expected_version: 1 } });
    assert.equal(own.status, 200);
    assert.equal((own.json.task as Task).assigned_agent, "agent-b");
    const missing = await s.call("POST", "/tasks/zzz/claim", {
      token: s.operator,
      body: { expected_version: 1, agent: "w" },
    });
    assert.equal(missing.status, 404);
    assert.equal(errorCode(missing.json), "task.not_found");
  });
});

Deno.test("server: complete/fail/block/progress move the task and emit events at once", async () => {
  await withServer(async (s) => {
    await s.store.createMany(
      ["c", "f", "b", "p"].map((id) => ({ id, title: id, role: "dev" })),
      OP,
    );
    for (const id of ["c", "f", "b", "p"]) {
      await s.store.claim(id, { agent: `agent-${id}`, expectedVersion: 1 });
    }
    const seen: ServerEvent[] = [];
    s.server.events.on((e) => seen.push(e));

    const tc = await agentFor(s, ["c"]);
    const completed = s.server.events.next((e) => e.type === "task.completed");
    const noSummary = await s.call("POST", "/tasks/c/complete", { token: tc, body: {} });
    assert.equal(noSummary.status, 400);
    assert.equal(errorField(noSummary.json), "summary");
    const done = await s.call("POST", "/tasks/c/complete", {
      token: tc,
      body: { summary: "added parser" },
    });
    assert.equal(done.status, 200);
    const doneTask = done.json.task as Task;
    assert.equal(doneTask.status, "done");
    assert.equal(doneTask.result_summary, "added parser");
    const event = await completed;
    assert.equal(event.type === "task.completed" && event.task.id, "c");
    assert.deepEqual(
      s.sink.events.filter((e) => e.resource_id === "c" && e.type === "task.transition").map((
        e,
      ) => [e.from, e.to, e.actor]),
      [["open", "claimed", "agent:agent-c"], ["claimed", "in_progress", "agent:agent-c"], [
        "in_progress",
        "done",
        "agent:agent-c",
      ]],
    );
    const again = await s.call("POST", "/tasks/c/complete", {
      token: tc,
      body: { summary: "again" },
    });
    assert.equal(again.status, 409);
    assert.equal(errorCode(again.json), "task.illegal_transition");

    const tf = await agentFor(s, ["f"]);
    const failed = await s.call("POST", "/tasks/f/fail", {
      token: tf,
      body: { reason: "tests do not build" },
    });
    assert.equal((failed.json.task as Task).status, "failed");
    assert.equal((failed.json.task as Task).terminal_reason, "tests do not build");
    const noReason = await s.call("POST", "/tasks/f/fail", { token: tf, body: { reason: "  " } });
    assert.equal(errorField(noReason.json), "reason");

    const tb = await agentFor(s, ["b"]);
    const blocked = await s.call("POST", "/tasks/b/block", {
      token: tb,
      body: { reason: "needs credentials" },
    });
    assert.equal((blocked.json.task as Task).status, "blocked");

    const tp = await agentFor(s, ["p"]);
    const prog = await s.call("POST", "/tasks/p/progress", {
      token: tp,
      body: { message: "halfway", percent: 50 },
    });
    assert.equal(prog.status, 200);
    assert.equal((prog.json.task as Task).status, "claimed");
    const badPct = await s.call("POST", "/tasks/p/progress", {
      token: tp,
      body: { message: "x", percent: 150 },
    });
    assert.equal(badPct.status, 400);
    assert.equal(errorField(badPct.json), "percent");
    const extra = await s.call("POST", "/tasks/p/progress", {
      token: tp,
      body: { message: "x", colour: 1 },
    });
    assert.equal(errorField(extra.json), "colour");

    assert.deepEqual(seen.map((e) => e.type), [
      "task.completed",
      "task.failed",
      "task.blocked",
      "task.progress",
    ]);
    const p = seen[3];
    assert.ok(p.type === "task.progress" && p.message === "halfway" && p.percent === 50);
  });
});

Deno.test("server: heartbeats are recorded per agent and scoped to the token's agent", async () => {
  await withServer(async (s) => {
    await s.store.create({ id: "t", title: "t", role: "dev" }, OP);
    await s.store.claim("t", { agent: "agent-t", expectedVersion: 1 });
    const token = await agentFor(s, ["t"]);
    const beat = s.server.events.next((e) => e.type === "heartbeat");
    const r = await s.call("POST", "/agents/agent-t/heartbeat", {
      token,
      body: { task_id: "t", note: "compiling" },
    });
    assert.equal(r.status, 200);
    const e = await beat;
    assert.ok(e.type === "heartbeat" && e.note === "compiling" && e.agent.session === "sess-t");
    s.clock.advance(30_000);
    await s.call("POST", "/agents/agent-t/heartbeat", { token });
    assert.deepEqual(s.server.agents(), [{
      agent_id: "agent-t",
      session: "sess-t",
      task_id: "t",
      last_heartbeat_at: "2026-01-01T00:00:30.000Z",
      heartbeats: 2,
    }]);
    assert.equal((await s.call("POST", "/agents/someone-else/heartbeat", { token })).status, 403);
    const otherTask = await s.call("POST", "/agents/agent-t/heartbeat", {
      token,
      body: { task_id: "x" },
    });
    assert.equal(otherTask.status, 403);
    assert.equal(
      (await s.call("POST", "/agents/anyone/heartbeat", { token: s.operator })).status,
      200,
    );
  });
});

Deno.test("server: a manager creates children of its own task only; other agents cannot create", async () => {
  await withServer(async (s) => {
    await s.store.createMany([{ id: "goal", title: "goal", role: "manager" }, {
      id: "other",
      title: "o",
      role: "dev",
    }], OP);
    const manager = await agentFor(s, ["goal"], true);
    const child = await s.call("POST", "/tasks", {
      token: manager,
      body: { title: "step 1", role: "dev" },
    });
    assert.equal(child.status, 201);
    assert.equal((child.json.task as Task).parent_task_id, "goal");
    const created = s.sink.events.at(-1);
    assert.equal(created?.actor, "agent:agent-goal");
    const elsewhere = await s.call("POST", "/tasks", {
      token: manager,
      body: { title: "x", role: "dev", parent_task_id: "other" },
    });
    assert.equal(elsewhere.status, 403);
    const visible = (await s.call("GET", "/tasks", { token: manager })).json.tasks as Task[];
    assert.deepEqual(
      visible.map((t) => t.id).sort(),
      ["goal", (child.json.task as Task).id].sort(),
    );
    const worker = await agentFor(s, ["other"]);
    const refused = await s.call("POST", "/tasks", {
      token: worker,
      body: { title: "x", role: "dev" },
    });
    assert.equal(refused.status, 403);
    assert.equal(errorCode(refused.json), "auth.forbidden");
  });
});

Deno.test("server: holds can be placed, listed and released by the operator", async () => {
  await withServer(async (s) => {
    const tooLong = await s.call("POST", "/orchestrator/holds", {
      token: s.operator,
      body: { reason: "x", ttl_s: 10_000 },
    });
    assert.equal(tooLong.status, 400);
    assert.equal(errorField(tooLong.json), "ttl_s");
    const placed = await s.call("POST", "/orchestrator/holds", {
      token: s.operator,
      body: { reason: "adding tasks" },
    });
    assert.equal(placed.status, 201);
    const hold = placed.json.hold as { id: string; expires_at: string };
    assert.equal(hold.expires_at, "2026-01-01T00:10:00.000Z", "default ttl from tuning");
    const listed = await s.call("GET", "/orchestrator/holds", { token: s.operator });
    assert.deepEqual((listed.json.holds as { id: string }[]).map((h) => h.id), [hold.id]);
    const released = await s.call("DELETE", `/orchestrator/holds/${hold.id}`, {
      token: s.operator,
    });
    assert.equal(released.status, 200);
    const gone = await s.call("DELETE", `/orchestrator/holds/${hold.id}`, { token: s.operator });
    assert.equal(gone.status, 404);
    assert.equal(errorCode(gone.json), "hold.not_found");
    assert.deepEqual(s.sink.events.map((e) => e.type), ["hold.added", "hold.released"]);
  }, { server: { hold_max_ttl_s: 3600 } });
});

Deno.test("server: /status reports tasks by status, agents and holds", async () => {
  await withServer(async (s) => {
    await s.store.createMany([{ id: "a", title: "a", role: "r" }, {
      id: "b",
      title: "b",
      role: "r",
    }], OP);
    await s.store.transition("b", "cancelled", OP);
    await s.call("POST", "/agents/w/heartbeat", { token: s.operator });
    await s.call("POST", "/orchestrator/holds", { token: s.operator, body: { reason: "r" } });
    const r = await s.call("GET", "/status", { token: s.operator });
    assert.equal(r.status, 200);
    const body = r.json as {
      tasks: { total: number; by_status: Record<string, number> };
      agents: { agent_id: string }[];
      holds: unknown[];
      store: { backend: string };
      server: { version: string; url: string };
    };
    assert.equal(body.tasks.total, 2);
    assert.equal(body.tasks.by_status.open, 1);
    assert.equal(body.tasks.by_status.cancelled, 1);
    assert.equal(body.tasks.by_status.done, 0);
    assert.deepEqual(body.agents.map((a) => a.agent_id), ["w"]);
    assert.equal(body.holds.length, 1);
    assert.equal(body.store.backend, "memory");
    assert.equal(body.server.url, s.server.url);
  });
});

Deno.test("server: writes its port to .sdd/runtime/server.port and removes it on close", async () => {
  const s = await startTestServer();
  const portFile = join(s.runtimeDir, "server.port");
  assert.equal((await Deno.readTextFile(portFile)).trim(), String(s.server.port));
  assert.equal(s.server.url, `http://127.0.0.1:${s.server.port}`);
  const second = startTestServer({ server: { port: s.server.port } });
  await assert.rejects(
    second,
    (e: unknown) =>
      e instanceof ServerStartError && e.code === "server.port_in_use" &&
      e.location === "tuning.server.port",
  );
  await s.server.close();
  await assert.rejects(Deno.stat(portFile), Deno.errors.NotFound);
  await s.stop();
});

Deno.test("server: an unexpected error is a 500 without details; a store outage is 503", async () => {
  const clock = new FakeClock();
  const inner = createMemoryTaskStore({ clock, random: new SeededRandom(1) });
  let mode: "ok" | "crash" | "closed" = "ok";
  const store: TaskStore = {
    backend: "flaky",
    create: (d, o) => inner.create(d, o),
    createMany: (d, o) => inner.createMany(d, o),
    get: (id) => inner.get(id),
    list: (f) => {
      if (mode === "crash") return Promise.reject(new Error("secret internal detail"));
      if (mode === "closed") return inner.close().then(() => inner.list(f));
      return inner.list(f);
    },
    claimNext: (r, o) => inner.claimNext(r, o),
    claim: (id, o) => inner.claim(id, o),
    transition: (id, to, o) => inner.transition(id, to, o),
    progress: (id, o) => inner.progress(id, o),
    stampAttachments: (id, o) => inner.stampAttachments(id, o),
    heartbeat: (id, o) => inner.heartbeat(id, o),
    releaseStaleClaims: (o) => inner.releaseStaleClaims(o),
    onWork: (l) => inner.onWork(l),
    close: () => inner.close(),
  };
  await withServer(async (s) => {
    mode = "crash";
    const crash = await s.call("GET", "/tasks", { token: s.operator });
    assert.equal(crash.status, 500);
    assert.deepEqual(crash.json, { error: { code: "internal", message: "internal server error" } });
    assert.ok(!crash.text.includes("secret"));
    mode = "closed";
    const down = await s.call("GET", "/tasks", { token: s.operator });
    assert.equal(down.status, 503);
    assert.equal(errorCode(down.json), "task.store_unavailable");
  }, { store });
});

Deno.test("tokens: files are 0600, the operator token is reused, reloaded tokens still work", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const runtime = join(root, ".sdd", "runtime");
    const operatorPath = join(root, "state", "projects", "p1", "auth.token");
    const open = (seed: number) =>
      TokenRegistry.open(runtime, {
        random: new SeededRandom(seed),
        operatorTokenPath: operatorPath,
      });
    const first = await open(1);
    const operator = (await Deno.readTextFile(operatorPath)).trim();
    assert.match(operator, /^bop_[A-Za-z0-9_-]{43}$/);
    assert.equal(((await Deno.stat(operatorPath)).mode ?? 0) & 0o777, 0o600);
    assert.equal(((await Deno.stat(join(operatorPath, ".."))).mode ?? 0) & 0o777, 0o700);
    const issued = await first.issueAgentToken({
      session: "s1",
      agent_id: "a1",
      task_ids: ["t1"],
      can_create_tasks: false,
    });
    // The agent's token is never stored in the project: only its digest is.
    await assert.rejects(Deno.stat(join(runtime, "tokens", "s1.token")), Deno.errors.NotFound);
    assert.equal(((await Deno.stat(join(runtime, "tokens"))).mode ?? 0) & 0o777, 0o700);
    const scopeText = await Deno.readTextFile(join(runtime, "tokens", "s1.json"));
    assert.ok(!scopeText.includes(issued.token), "scope files hold only the digest");

    const second = await open(2);
    assert.deepEqual(second.authenticate(operator), { kind: "operator" });
    assert.deepEqual(second.authenticate(issued.token), { ...issued.scope });
    await second.grantTasks("s1", ["t2"]);
    const third = await open(3);
    const scope = third.authenticate(issued.token);
    assert.ok(scope?.kind === "agent");
    assert.deepEqual(scope.task_ids, ["t1", "t2"]);
    await third.revoke("s1");
    assert.equal(third.authenticate(issued.token), undefined);
    await assert.rejects(Deno.stat(join(runtime, "tokens", "s1.json")), Deno.errors.NotFound);
    assert.equal(third.authenticate(operator.slice(0, -1) + "x"), undefined);
    await assert.rejects(
      third.issueAgentToken({
        session: "../evil",
        agent_id: "a",
        task_ids: [],
        can_create_tasks: false,
      }),
      (e: unknown) => (e as { location?: string }).location === "session",
    );

    await Deno.chmod(operatorPath, 0o644);
    await assert.rejects(
      open(4),
      (e: unknown) =>
        (e as { code?: string }).code === "secret.permissions" &&
        /readable by group or others/.test((e as Error).message),
    );
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("server: restart keeps tasks, holds and agent tokens (JSONL store)", async () => {
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const { openJsonlTaskStore } = await import("../../src/tasks/mod.ts");
    const runtime = join(root, ".sdd", "runtime");
    const open = () =>
      openJsonlTaskStore(join(runtime, "tasks.jsonl"), {
        clock: new FakeClock(),
        random: new SeededRandom(1),
        defaults: { priority: 2, max_retries: 2 },
        compactMinRecords: 100,
      });
    const a = await startTestServer({ root, store: await open() });
    await a.store.create({ id: "t", title: "t", role: "dev" }, OP);
    const token = await agentFor(a, ["t"]);
    await a.call("POST", "/orchestrator/holds", { token: a.operator, body: { reason: "keep" } });
    await a.stop();
    const b = await startTestServer({ root, store: await open() });
    const seen = await b.call("GET", "/tasks/t", { token });
    assert.equal(seen.status, 200);
    assert.equal((seen.json.task as Task).id, "t");
    const holds = await b.call("GET", "/orchestrator/holds", { token: b.operator });
    assert.equal((holds.json.holds as unknown[]).length, 1);
    assert.equal(b.operator, a.operator);
    await b.stop();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("server: startTaskServer needs no more than the store, holds and tokens", async () => {
  // The run loop's wiring, spelled out once: config-driven port 0, events without polling.
  const root = await Deno.realPath(await Deno.makeTempDir());
  try {
    const runtimeDir = join(root, ".sdd", "runtime");
    const clock = new FakeClock();
    const store = createMemoryTaskStore({ clock, random: new SeededRandom(1) });
    const server = await startTaskServer({
      store,
      holds: await openHoldStore(undefined, { clock, random: new SeededRandom(2) }),
      tokens: await TokenRegistry.open(runtimeDir, {
        random: new SeededRandom(3),
        operatorTokenPath: join(root, "state", "auth.token"),
      }),
      runtimeDir,
      clock,
      config: { network: { allowed_ips: ["127.0.0.1"] }, tuning: DEFAULT_TUNING },
    });
    assert.ok(server.port > 0);
    const res = await fetch(`${server.url}/health`);
    assert.equal(res.status, 200);
    await res.body?.cancel();
    await server.close();
    await server.close();
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test("server: a completion racing the orchestrator's own start record still completes", async () => {
  const clock = new FakeClock();
  const inner = createMemoryTaskStore({ clock, random: new SeededRandom(1) });
  let race = false;
  // The orchestrator records the start right after the server read the task as claimed (a
  // shared store makes this window a whole database round trip).
  const store: TaskStore = {
    ...Object.fromEntries(
      ([
        "create",
        "createMany",
        "list",
        "claimNext",
        "claim",
        "transition",
        "progress",
        "stampAttachments",
        "heartbeat",
        "releaseStaleClaims",
        "onWork",
        "close",
      ] as const)
        .map((m) => [m, (...a: unknown[]) => (inner[m] as (...x: unknown[]) => unknown)(...a)]),
    ) as Omit<TaskStore, "backend" | "get">,
    backend: "racing",
    async get(id) {
      const seen = await inner.get(id);
      if (race && seen?.status === "claimed") {
        race = false;
        await inner.transition(id, "in_progress", { actor: "orchestrator", reason: "spawned" });
      }
      return seen;
    },
  };
  await withServer(async (s) => {
    await inner.create({ id: "t", title: "t", role: "dev" }, OP);
    await inner.claim("t", { agent: "agent-t", expectedVersion: 1 });
    const token = await agentFor(s, ["t"]);
    race = true;
    const r = await s.call("POST", "/tasks/t/complete", { token, body: { summary: "done" } });
    assert.equal(r.status, 200, r.text);
    assert.equal((await inner.get("t"))?.status, "done");
  }, { store });
});
