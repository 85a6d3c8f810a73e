import assert from "node:assert/strict";
import { runProcess } from "../../src/io/mod.ts";
import { renderExposition, RequestMetrics } from "../../src/server/mod.ts";
import { startTestServer } from "./_server.ts";

Deno.test("metrics: exposition escapes label values and help text, renders histograms", () => {
  const m = new RequestMetrics();
  m.record("/tasks", "GET", 200, 0.0007);
  m.record("/tasks", "GET", 200, 0.3);
  m.record("/tasks", "GET", 404, 0.002);
  const text = renderExposition([
    {
      name: "demo_gauge",
      help: 'line one\\ and\nline "two"',
      type: "gauge",
      samples: [{ labels: { v: 'a"b\\c\nd' }, value: 1.5 }, { labels: {}, value: Infinity }],
    },
    ...m.families(),
  ]);
  const lines = text.split("\n");
  assert.equal(lines[0], '# HELP demo_gauge line one\\\\ and\\nline "two"');
  assert.equal(lines[1], "# TYPE demo_gauge gauge");
  assert.equal(lines[2], 'demo_gauge{v="a\\"b\\\\c\\nd"} 1.5');
  assert.equal(lines[3], "demo_gauge +Inf");
  assert.ok(
    text.includes('bernstein_http_requests_total{route="/tasks",method="GET",code="200"} 2'),
  );
  assert.ok(
    text.includes('bernstein_http_requests_total{route="/tasks",method="GET",code="404"} 1'),
  );
  assert.ok(
    text.includes(
      'bernstein_http_request_duration_seconds_bucket{route="/tasks",method="GET",le="0.001"} 1',
    ),
  );
  assert.ok(
    text.includes(
      'bernstein_http_request_duration_seconds_bucket{route="/tasks",method="GET",le="0.25"} 2',
    ),
  );
  assert.ok(
    text.includes(
      'bernstein_http_request_duration_seconds_bucket{route="/tasks",method="GET",le="+Inf"} 3',
    ),
  );
  assert.ok(
    text.includes('bernstein_http_request_duration_seconds_count{route="/tasks",method="GET"} 3'),
  );
  assert.ok(text.endsWith("\n"));
});

async function promtoolPath(): Promise<string | undefined> {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    try {
      const p = `${dir}/promtool`;
      if ((await Deno.stat(p)).isFile) return p;
    } catch {
      // not in this folder
    }
  }
  return undefined;
}

const promtool = await promtoolPath();
if (promtool === undefined) {
  console.log(
    "metrics: promtool not found on PATH (apt-get install -y prometheus); " +
      "the promtool check below is IGNORED, not passed",
  );
}

Deno.test("metrics: GET /metrics reports tasks, holds, agents and requests", async () => {
  const s = await startTestServer();
  try {
    await s.store.create({ title: "a", role: "dev" }, { actor: "t", reason: "r" });
    await s.call("POST", "/agents/w1/heartbeat", { token: s.operator });
    await s.call("GET", "/tasks", { token: s.operator });
    await s.call("GET", "/tasks", {});
    const r = await s.call("GET", "/metrics", { token: s.operator });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "text/plain; version=0.0.4; charset=utf-8");
    for (
      const line of [
        'bernstein_tasks{status="open"} 1',
        'bernstein_tasks{status="done"} 0',
        "bernstein_holds_active 0",
        'bernstein_agent_heartbeats_total{agent="w1"} 1',
        'bernstein_http_requests_total{route="/tasks",method="GET",code="200"} 1',
        'bernstein_http_requests_total{route="/tasks",method="GET",code="401"} 1',
      ]
    ) {
      assert.ok(r.text.split("\n").includes(line), `missing: ${line}`);
    }
  } finally {
    await s.stop();
  }
});

Deno.test({
  name: "metrics: promtool check metrics accepts GET /metrics",
  ignore: promtool === undefined,
  async fn() {
    const s = await startTestServer();
    try {
      await s.store.create({ title: "a", role: "dev" }, { actor: "t", reason: "r" });
      await s.call("POST", "/agents/w1/heartbeat", { token: s.operator });
      await s.call("POST", "/orchestrator/holds", { token: s.operator, body: { reason: "x" } });
      await s.call("GET", "/nope", { token: s.operator });
      const r = await s.call("GET", "/metrics", { token: s.operator });
      const result = await runProcess([promtool ?? "promtool", "check", "metrics"], {
        stdin: new TextEncoder().encode(r.text),
        env: { PATH: Deno.env.get("PATH") ?? "/usr/bin" },
        timeoutMs: 30_000,
      });
      const out = new TextDecoder().decode(result.stdout) + new TextDecoder().decode(result.stderr);
      assert.equal(result.code, 0, `promtool rejected the exposition:\n${out}\n---\n${r.text}`);
      assert.equal(out.trim(), "", `promtool lint findings:\n${out}`);
    } finally {
      await s.stop();
    }
  },
});
