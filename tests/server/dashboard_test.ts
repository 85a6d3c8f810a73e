// The dashboard's routes over real HTTP: the one-time login, refusals, the security headers,
// the Host check, the JSON view, and Server-Sent Events paced to at most one a second (driven
// by the fake clock: each update says when it was built).
import assert from "node:assert/strict";
import { RunJournal } from "../../src/report/mod.ts";
import { created, ev, recordsOf } from "../report/_records.ts";
import { guard } from "../_helpers/wait.ts";
import { startTestServer, type TestServer } from "./_server.ts";

function journal(): RunJournal {
  const records = recordsOf([
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "a", "Task <b>A</b>"),
  ], { state: "running" });
  const j = new RunJournal(records.header);
  for (const e of records.events) j.add(e);
  return j;
}

async function login(s: TestServer): Promise<string> {
  const link = s.server.loginLink?.();
  assert.ok(link !== undefined);
  const res = await fetch(link, { redirect: "manual" });
  await res.body?.cancel();
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/");
  const cookie = res.headers.get("set-cookie") ?? "";
  assert.match(cookie, /; HttpOnly; SameSite=Strict$/);
  return cookie.split(";")[0];
}

Deno.test("dashboard: without a login every page is refused; the login link works once", async () => {
  const s = await startTestServer({ dashboard: journal() });
  try {
    for (const path of ["/", "/dashboard/events", "/dashboard/state.json"]) {
      const r = await s.call("GET", path);
      assert.equal(r.status, 401, path);
    }
    assert.match((await s.call("GET", "/")).text, /one-time login link/);
    const link = s.server.loginLink?.() as string;
    assert.match(link, /^http:\/\/127\.0\.0\.1:\d+\/login\?code=[A-Za-z0-9_-]{43}$/);
    const first = await fetch(link, { redirect: "manual" });
    await first.body?.cancel();
    assert.equal(first.status, 303);
    const cookie = (first.headers.get("set-cookie") ?? "").split(";")[0];
    const again = await fetch(link, { redirect: "manual" });
    assert.equal(again.status, 401);
    assert.match(await again.text(), /works once/);
    const page = await s.call("GET", "/", { headers: { cookie } });
    assert.equal(page.status, 200);
    assert.match(page.text, /brave-otter-3fa9c2/);
    assert.ok(page.text.includes("Task &lt;b&gt;A&lt;/b&gt;"), "titles are escaped");
    // A made-up code and a made-up session are refused.
    const forged = await fetch(link.replace(/code=.*/, "code=forged"), { redirect: "manual" });
    assert.equal(forged.status, 401);
    await forged.body?.cancel();
    const wrongCookie = await s.call("GET", "/", {
      headers: { cookie: cookie.replace(/=.*/, "=forged") },
    });
    assert.equal(wrongCookie.status, 401);
  } finally {
    await s.stop();
  }
});

Deno.test("dashboard: pages carry a strict CSP and no-referrer; the code never reaches a page", async () => {
  const s = await startTestServer({ dashboard: journal() });
  try {
    const cookie = await login(s);
    const page = await s.call("GET", "/", { headers: { cookie } });
    const csp = page.headers.get("content-security-policy") ?? "";
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'/);
    assert.ok(!csp.includes("unsafe-inline"));
    assert.equal(page.headers.get("referrer-policy"), "no-referrer");
    assert.equal(page.headers.get("cache-control"), "no-store");
    assert.ok(!page.text.includes("code="), "no login code in the page");
    assert.ok(!/<script>/.test(page.text), "no inline script");
    const css = await s.call("GET", "/dashboard/assets/dashboard.css");
    assert.equal(css.status, 200);
    assert.match(css.headers.get("content-type") ?? "", /^text\/css/);
    const js = await s.call("GET", "/dashboard/assets/dashboard.js");
    assert.match(js.headers.get("content-type") ?? "", /^text\/javascript/);
  } finally {
    await s.stop();
  }
});

Deno.test("dashboard: the operator token (in a header) reads the JSON view and mints links; agents cannot", async () => {
  const s = await startTestServer({ dashboard: journal() });
  try {
    const state = await s.call("GET", "/dashboard/state.json", { token: s.operator });
    assert.equal(state.status, 200);
    const model = state.json.model as { run: { run_id: string }; tasks: unknown[] };
    assert.equal(model.run.run_id, "brave-otter-3fa9c2");
    assert.equal(model.tasks.length, 1);
    const minted = await s.call("POST", "/dashboard/login-links", { token: s.operator });
    assert.equal(minted.status, 201);
    assert.match(String(minted.json.url), /\/login\?code=/);
    const agent = await s.tokens.issueAgentToken({
      session: "a-a1-x",
      agent_id: "a-a1-x",
      task_ids: ["a"],
      can_create_tasks: false,
    });
    assert.equal(
      (await s.call("GET", "/dashboard/state.json", { token: agent.token })).status,
      401,
    );
    assert.equal(
      (await s.call("POST", "/dashboard/login-links", { token: agent.token })).status,
      401,
    );
    assert.equal((await s.call("POST", "/dashboard/login-links")).status, 401);
    assert.equal(
      (await s.call("GET", "/dashboard/login-links", { token: s.operator })).status,
      405,
    );
    assert.equal((await s.call("GET", "/dashboard/nope", { token: s.operator })).status, 404);
  } finally {
    await s.stop();
  }
});

/** The status line of a raw HTTP/1.1 request (fetch will not send another Host). */
async function rawStatus(port: number, host: string, path: string, token: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(
      `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    ));
    let text = "";
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await guard(conn.read(buf), "the status line");
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
      if (text.includes("\r\n")) break;
    }
    return text.split("\r\n")[0];
  } finally {
    conn.close();
  }
}

Deno.test("dashboard: a request naming another Host is refused (no DNS rebinding)", async () => {
  const s = await startTestServer({ dashboard: journal() });
  try {
    const port = s.server.port;
    const path = "/dashboard/state.json";
    assert.match(await rawStatus(port, `attacker.example:${port}`, path, s.operator), / 403 /);
    assert.match(await rawStatus(port, `127.0.0.1:${port + 1}`, path, s.operator), / 403 /);
    assert.match(await rawStatus(port, `localhost:${port}`, path, s.operator), / 200 /);
  } finally {
    await s.stop();
  }
});

/** Reads SSE messages from a response, one at a time. */
function sseReader(res: Response) {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return {
    async next(): Promise<{ event: string; data: string } | undefined> {
      for (;;) {
        const end = buffer.indexOf("\n\n");
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const lines = block.split("\n").filter((l) => !l.startsWith(":"));
          const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
          const data = lines.find((l) => l.startsWith("data: "))?.slice(6);
          if (event !== undefined && data !== undefined) return { event, data };
          continue;
        }
        const { value, done } = await guard(reader.read(), "the next SSE message");
        if (done) return undefined;
        buffer += decoder.decode(value, { stream: true });
      }
    },
    cancel: () => reader.cancel(),
  };
}

Deno.test("dashboard: SSE sends the state at once, then at most one update per second of the clock", async () => {
  const j = journal();
  const s = await startTestServer({ dashboard: j });
  try {
    const cookie = await login(s);
    const res = await fetch(`${s.server.url}/dashboard/events`, { headers: { cookie } });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const sse = sseReader(res);
    const t0 = s.clock.nowMs();
    const first = await sse.next();
    assert.equal(first?.event, "sections");
    assert.equal(JSON.parse(first?.data ?? "{}").generated_at, new Date(t0).toISOString());
    // Twenty changes in a burst, and most of a second passes: nothing may be sent yet.
    for (let i = 0; i < 20; i++) j.add(created(10 + i, `t${i}`, `Task ${i}`));
    s.clock.advance(999);
    j.touch();
    s.clock.advance(1);
    const second = JSON.parse((await sse.next())?.data ?? "{}");
    assert.equal(second.generated_at, new Date(t0 + 1000).toISOString());
    assert.match(second.sections["d-tasks"], /t19/, "the burst arrives as one update");
    j.touch();
    s.clock.advance(1000);
    const third = JSON.parse((await sse.next())?.data ?? "{}");
    assert.equal(third.generated_at, new Date(t0 + 2000).toISOString());
    // The run ends: one last update, then `ended`, then the stream closes.
    s.clock.advance(1000);
    j.end();
    assert.equal((await sse.next())?.event, "sections");
    assert.equal((await sse.next())?.event, "ended");
    assert.equal(await sse.next(), undefined);
  } finally {
    await s.stop();
  }
});

Deno.test("dashboard: closing the server ends open event streams with the final state", async () => {
  const s = await startTestServer({ dashboard: journal() });
  const cookie = await login(s);
  const res = await fetch(`${s.server.url}/dashboard/events`, { headers: { cookie } });
  const sse = sseReader(res);
  assert.equal((await sse.next())?.event, "sections");
  await s.stop();
  // The stream gets the final state and `ended` before it closes.
  assert.equal((await sse.next())?.event, "sections");
  assert.equal((await sse.next())?.event, "ended");
  assert.equal(await sse.next(), undefined);
});
