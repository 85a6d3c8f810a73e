// The route table's shared steps, checked over every route it holds (a new route is covered
// without touching this file): no token is 401 on every non-public route, an agent token is
// refused (403) by operator routes and by task routes of another task before the body is read
// (a broken body still gets 403, not 400), and path matching (parameters, 405 with the allowed
// methods, undecodable parameters) works as the dispatcher relies on.
import assert from "node:assert/strict";
import { SERVER_ROUTES } from "../../src/server/mod.ts";
import { errorCode, startTestServer } from "./_server.ts";

/** The pattern with every `{param}` filled in. */
const pathOf = (pattern: string, value: string) => pattern.replace(/\{[a-z_]+\}/g, value);

Deno.test("route table: every route but the public ones needs a token (401 auth.missing_token)", async () => {
  const t = await startTestServer();
  try {
    for (const route of SERVER_ROUTES) {
      const raw = route.method === "GET" ? undefined : "{broken";
      const r = await t.call(route.method, pathOf(route.pattern, "x"), { raw });
      const what = `${route.method} ${route.pattern}`;
      if (route.access === "public") assert.notEqual(r.status, 401, what);
      else {
        assert.equal(r.status, 401, what);
        assert.equal(errorCode(r.json), "auth.missing_token", what);
      }
    }
  } finally {
    await t.stop();
  }
});

Deno.test("route table: access rules refuse an agent token before its body is read (403, not 400)", async () => {
  const t = await startTestServer({
    policy: {
      decide: () => Promise.reject(new Error("not reached")),
      approvals: {
        list: () => [],
        resolve: () => {
          throw new Error("not reached");
        },
      },
    },
  });
  try {
    const { token } = await t.tokens.issueAgentToken({
      session: "s1",
      agent_id: "a1",
      task_ids: ["t-mine"],
      can_create_tasks: false,
    });
    const checked = new Set<string>();
    for (const route of SERVER_ROUTES) {
      if (!["operator", "own_task", "own_agent"].includes(route.access)) continue;
      const path = pathOf(route.pattern, "t-other");
      const raw = route.method === "GET" ? undefined : "{broken";
      const r = await t.call(route.method, path, { token, raw });
      const what = `${route.method} ${route.pattern}`;
      assert.equal(r.status, 403, `${what}: ${r.text}`);
      assert.equal(errorCode(r.json), "auth.forbidden", what);
      checked.add(route.access);
    }
    assert.deepEqual([...checked].sort(), ["operator", "own_agent", "own_task"]);
    // The operator token is not refused by an agent-only route's access rule: its own check
    // answers (an agent route for the operator is 403 too, an agent on its own task reads the body).
    const decide = await t.call("POST", "/policy/decide", { token: t.operator, raw: "{broken" });
    assert.equal(decide.status, 403);
    const own = await t.call("POST", "/tasks/t-mine/fail", { token, raw: "{broken" });
    assert.equal(own.status, 400);
    assert.equal(errorCode(own.json), "server.invalid_json");
  } finally {
    await t.stop();
  }
});

Deno.test("route table: parameters are decoded, a wrong method is 405 naming the allowed ones, a bad escape is 404", async () => {
  const t = await startTestServer();
  try {
    const created = await t.call("POST", "/tasks", {
      token: t.operator,
      body: { id: "t-a", title: "an id to escape", role: "backend" },
    });
    assert.equal(created.status, 201, created.text);
    const read = await t.call("GET", "/tasks/t%2Da", { token: t.operator });
    assert.equal(read.status, 200, read.text);
    const wrong = await t.call("PUT", "/orchestrator/holds", { token: t.operator });
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "GET, POST");
    const bad = await t.call("GET", "/tasks/%E0%A4%A", { token: t.operator });
    assert.equal(bad.status, 404);
    assert.equal(errorCode(bad.json), "server.not_found");
  } finally {
    await t.stop();
  }
});
