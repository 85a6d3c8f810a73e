import assert from "node:assert/strict";
import { assignLanes, buildRunModel, selectRunEvents } from "../../src/report/mod.ts";
import { at, created, ev, mergedAttempt, moved, recordsOf } from "./_records.ts";

const NOW = Date.parse(at(60_000));

Deno.test("model: parallel attempts get their own lanes; a later one reuses a free lane", () => {
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "a", "Task A"),
    created(2, "b", "Task B"),
    created(3, "c", "Task C", ["a"]),
    ...mergedAttempt(10, "a", "a-a1-x"),
    ...mergedAttempt(20, "b", "b-a1-x", { model: "opus", cost: 0.5 }),
    ...mergedAttempt(2000, "c", "c-a1-x"),
    ev(4000, "run.finished", "run", "brave-otter-3fa9c2", {
      end: "quiescent",
      reason: "every task finished",
    }),
  ];
  const m = buildRunModel(recordsOf(events), { nowMs: NOW });
  assert.equal(m.attempts.length, 3);
  assert.deepEqual(m.attempts.map((a) => a.lane), [0, 1, 0]);
  assert.equal(m.lanes, 2);
  assert.deepEqual(m.attempts[0].phases.map((p) => [p.phase, p.start_ms, p.end_ms]), [
    ["spawn", 10, 60],
    ["work", 60, 1010],
    ["gate", 1010, 1210],
    ["merge", 1210, 1410],
  ]);
  assert.deepEqual(m.counts, {
    tasks: 3,
    merged: 3,
    refused: 0,
    failed: 0,
    running: 0,
    waiting: 0,
    attempts: 3,
    by_status: { closed: 3 },
  });
  assert.equal(m.run.health, "HEALTHY");
  assert.equal(m.run.end, "quiescent");
  assert.equal(m.run.elapsed_s, 4);
  assert.deepEqual(m.cost.by_adapter.map((c) => [c.adapter, c.model, c.runs, c.cost_usd]), [
    ["scripted", "default", 2, 0.02],
    ["scripted", "opus", 1, 0.5],
  ]);
  assert.equal(m.cost.total_usd, 0.52);
  assert.deepEqual(m.tasks.map((t) => [t.id, t.depth, t.tokens_in, t.turns]), [
    ["a", 0, 100, 2],
    ["b", 0, 100, 2],
    ["c", 1, 100, 2],
  ]);
});

Deno.test("model: a failed attempt and its escalated retry are two bars, the retry marked", () => {
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "a", "Task A"),
    ev(10, "scheduler.claim", "task", "a", { session: "a-a1-x", attempt: 1, adapter: "scripted" }),
    ev(20, "agent.spawned", "agent", "a-a1-x", {
      task_id: "a",
      adapter: "scripted",
      model: "haiku",
    }),
    ev(500, "agent.exited", "agent", "a-a1-x", {
      ok: false,
      exit_code: 1,
      error: "tests failed",
      cost_usd: 0.1,
    }),
    moved(510, "a", "in_progress", "failed", "tests failed"),
    moved(520, "a", "failed", "open", "retry 1 of 2: tests failed"),
    ...mergedAttempt(600, "a", "a-a2-x", { attempt: 2, model: "sonnet", cost: 0.2 }),
  ];
  const m = buildRunModel(recordsOf(events, { state: "running" }), { nowMs: NOW });
  assert.deepEqual(m.attempts.map((a) => [a.session, a.outcome, a.retry, a.escalated]), [
    ["a-a1-x", "failed", false, false],
    ["a-a2-x", "merged", true, true],
  ]);
  assert.equal(m.attempts[0].reason, "tests failed");
  assert.equal(m.tasks[0].attempts, 2);
  assert.equal(m.tasks[0].cost_usd, 0.3);
  assert.equal(m.tasks[0].model, "sonnet");
});

Deno.test("model: a refused merge keeps its reason, detail and branch", () => {
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "ops", "Raise the limit"),
    ev(10, "scheduler.claim", "task", "ops", {
      session: "ops-a1-x",
      attempt: 1,
      adapter: "scripted",
    }),
    ev(20, "agent.spawned", "agent", "ops-a1-x", {
      task_id: "ops",
      adapter: "scripted",
      model: null,
    }),
    ev(300, "agent.exited", "agent", "ops-a1-x", { ok: true, exit_code: 0 }),
    ev(400, "gate.result", "task", "ops", {
      gate: "run_config",
      ok: false,
      reason: "the diff touches protected run configuration: bernstein.yaml",
      session: "ops-a1-x",
    }),
    ev(410, "merge.refused", "task", "ops", {
      session: "ops-a1-x",
      branch: "agent/ops-a1-x",
      reason: "gate-failed",
      detail: "gate run_config: the diff touches protected run configuration: bernstein.yaml",
    }),
    moved(420, "ops", "done", "failed", "gate-failed: gate run_config"),
    ev(500, "run.finished", "run", "brave-otter-3fa9c2", {
      end: "quiescent",
      reason: "every task finished",
    }),
  ];
  const m = buildRunModel(recordsOf(events), { nowMs: NOW });
  assert.equal(m.run.health, "UNHEALTHY");
  assert.deepEqual(m.refused_merges.map((r) => [r.task_id, r.reason, r.branch]), [
    ["ops", "gate-failed", "agent/ops-a1-x"],
  ]);
  assert.equal(m.attempts[0].outcome, "refused");
  assert.match(m.attempts[0].reason ?? "", /protected run configuration/);
  assert.deepEqual(m.gates.map((g) => [g.gate, g.ok]), [["run_config", false]]);
  assert.deepEqual(m.attempts[0].phases.map((p) => p.phase), ["spawn", "work", "gate", "merge"]);
  assert.equal(m.counts.failed, 1);
});

Deno.test("model: an interrupted run ends its open attempts at its last record", () => {
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "a", "Task A"),
    ev(10, "scheduler.claim", "task", "a", { session: "a-a1-x", attempt: 1, adapter: "scripted" }),
    ev(20, "agent.spawned", "agent", "a-a1-x", { task_id: "a", adapter: "scripted" }),
    ev(
      900,
      "task.progress",
      "task",
      "a",
      { message: "writing tests\nsecond line" },
      "agent:a-a1-x",
    ),
  ];
  const m = buildRunModel(recordsOf(events, { state: "interrupted" }), { nowMs: NOW });
  assert.equal(m.run.state, "interrupted");
  assert.equal(m.run.health, "UNHEALTHY");
  assert.match(m.run.reason, /interrupted/);
  assert.equal(m.attempts[0].outcome, "interrupted");
  assert.equal(m.attempts[0].last_progress, "writing tests");
  assert.equal(m.attempts[0].phases.at(-1)?.end_ms, 900);
  assert.equal(m.span_ms, 900);
});

Deno.test("model: a running attempt reaches 'now' and the run has no end yet", () => {
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "a", "Task A"),
    ev(10, "scheduler.claim", "task", "a", { session: "a-a1-x", attempt: 1, adapter: "scripted" }),
    ev(20, "agent.spawned", "agent", "a-a1-x", { task_id: "a", adapter: "scripted" }),
  ];
  const m = buildRunModel(recordsOf(events, { state: "running" }), { nowMs: NOW });
  assert.equal(m.attempts[0].outcome, "running");
  assert.equal(m.counts.running, 1);
  assert.equal(m.run.ended_at, null);
  assert.equal(m.attempts[0].phases.at(-1)?.end_ms, 60_000);
  assert.equal(m.run.elapsed_s, 60);
});

Deno.test("model: a failed spawn is an attempt with a spawn phase only, and a notice", () => {
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "a", "Task A"),
    ev(10, "scheduler.claim", "task", "a", { session: "a-a1-x", attempt: 1, adapter: "scripted" }),
    ev(30, "agent.spawn_failed", "task", "a", {
      session: "a-a1-x",
      reason: "spawn failed: no git",
    }),
  ];
  const m = buildRunModel(recordsOf(events), { nowMs: NOW });
  assert.equal(m.attempts[0].outcome, "spawn-failed");
  assert.deepEqual(m.attempts[0].phases.map((p) => [p.phase, p.start_ms, p.end_ms]), [[
    "spawn",
    10,
    30,
  ]]);
  assert.equal(m.notices.length, 1);
});

Deno.test("model: attachments name their session's task and digest", () => {
  const digest = "f".repeat(64);
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    created(1, "a", "Task A"),
    ev(10, "scheduler.claim", "task", "a", { session: "a-a1-x", attempt: 1, adapter: "claude" }),
    ev(12, "multimodal.attach", "agent", "a-a1-x", {
      sha256: digest,
      mime: "text/plain",
      worker_id: "a-a1-x",
      path: "docs/spec.md",
    }),
  ];
  const m = buildRunModel(recordsOf(events), { nowMs: NOW });
  assert.deepEqual(m.attachments.map((a) => [a.task_id, a.sha256, a.path]), [[
    "a",
    digest,
    "docs/spec.md",
  ]]);
});

Deno.test("selectRunEvents: the window of one run among several, resumes included", () => {
  const events = [
    ev(0, "run.started", "run", "r1"),
    created(1, "a", "A"),
    ev(2, "run.finished", "run", "r1"),
    ev(3, "run.started", "run", "r2"),
    created(4, "b", "B"),
    ev(5, "run.resumed", "run", "r2"),
    created(6, "c", "C"),
    ev(7, "run.started", "run", "r3"),
    created(8, "d", "D"),
  ];
  const ids = (run: string) => selectRunEvents(events, run).map((e) => e.resource_id);
  assert.deepEqual(ids("r1"), ["r1", "a", "r1"]);
  assert.deepEqual(ids("r2"), ["r2", "b", "r2", "c"]);
  assert.deepEqual(ids("r3"), ["r3", "d"]);
  assert.deepEqual(ids("nope"), []);
});

Deno.test("assignLanes: touching intervals share a lane, overlapping ones never do", () => {
  assert.deepEqual(
    assignLanes([
      { start: 0, end: 5 },
      { start: 1, end: 2 },
      { start: 2, end: 3 },
      { start: 5, end: 6 },
      { start: 4, end: 9 },
    ]),
    { lanes: [0, 1, 1, 0, 1], count: 2 },
  );
});

Deno.test("model: a notification that failed or was dropped is a notice; a delivered one is not", () => {
  const events = [
    ev(0, "run.started", "run", "brave-otter-3fa9c2"),
    ev(5, "notify.delivered", "notification", "webhook", {
      event: "run.started",
      attempts: 1,
      status: "HTTP 200",
      error: null,
    }),
    ev(10, "notify.failed", "notification", "email", {
      event: "task.failed",
      attempts: 5,
      status: "SMTP 451",
      error: "the relay failed",
    }),
    ev(20, "notify.dropped", "notification", "webhook", {
      event: "run.unhealthy",
      attempts: 0,
      status: null,
      error: "queue full",
    }),
  ];
  const m = buildRunModel(recordsOf(events), { nowMs: NOW });
  assert.deepEqual(m.notices.map((n) => [n.level, n.message]), [
    [
      "warning",
      "notification task.failed to email failed after 5 attempt(s) (SMTP 451: the relay failed)",
    ],
    ["warning", "notification run.unhealthy to webhook dropped after 0 attempt(s) (queue full)"],
  ]);
});
