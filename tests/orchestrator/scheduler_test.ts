import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import {
  decideTermination,
  isRateLimitReason,
  ownedEntriesOverlap,
  retryDelayMs,
  type SchedulableTask,
  scheduleTick,
  spawnBackoffMs,
  type StallState,
} from "../../src/orchestrator/mod.ts";

function task(id: string, extra: Partial<SchedulableTask> = {}): SchedulableTask {
  return {
    id,
    status: "open",
    priority: 2,
    created_at: `2026-01-01T00:00:0${id.length}.000Z`,
    depends_on: [],
    owned_files: [],
    role: "backend",
    ...extra,
  };
}

const base = { running: [], maxAgents: 4, notBefore: new Map<string, number>(), nowMs: 1000 };

Deno.test("ready tasks spawn by priority, then age, then id, up to max_agents", () => {
  const tasks = [
    task("c", { priority: 2, created_at: "2026-01-01T00:00:02.000Z" }),
    task("a", { priority: 1, created_at: "2026-01-01T00:00:09.000Z" }),
    task("b", { priority: 2, created_at: "2026-01-01T00:00:01.000Z" }),
    task("d", { priority: 3 }),
  ];
  deepStrictEqual(scheduleTick({ ...base, tasks, maxAgents: 3 }), [
    { kind: "spawn", taskId: "a" },
    { kind: "spawn", taskId: "b" },
    { kind: "spawn", taskId: "c" },
    { kind: "defer", taskId: "d", reason: "capacity" },
  ]);
});

Deno.test("unfinished dependencies hold a task back; dead-end dependencies fail it", () => {
  const tasks = [
    task("x", { status: "in_progress" }),
    task("y", { status: "failed" }),
    task("z", { status: "closed" }),
    task("wait", { depends_on: ["x"] }),
    task("doomed", { depends_on: ["z", "y"] }),
    task("ghost", { depends_on: ["nope"] }),
    task("go", { depends_on: ["z"] }),
  ];
  // Age order: the helper dates each task by its id's length (go < ghost < doomed).
  deepStrictEqual(scheduleTick({ ...base, tasks, running: ["x"] }), [
    { kind: "spawn", taskId: "go" },
    { kind: "fail_dependent", taskId: "ghost", reason: "dependency nope does not exist" },
    { kind: "fail_dependent", taskId: "doomed", reason: "dependency y ended failed" },
  ]);
});

Deno.test("owned-file overlap with running or just-chosen tasks defers; backoff defers", () => {
  const tasks = [
    task("run", { status: "in_progress", owned_files: ["src/api/"] }),
    task("a", { owned_files: ["src/api/users.ts"] }),
    task("b", { owned_files: ["docs/**"] }),
    task("c", { owned_files: ["docs/guide.md"] }),
    task("d", { owned_files: ["web/app.ts"] }),
  ];
  deepStrictEqual(
    scheduleTick({ ...base, tasks, running: ["run"], notBefore: new Map([["d", 5000]]) }),
    [
      { kind: "defer", taskId: "a", reason: "owned_files" },
      { kind: "spawn", taskId: "b" },
      { kind: "defer", taskId: "c", reason: "owned_files" },
      { kind: "defer", taskId: "d", reason: "backoff" },
    ],
  );
});

Deno.test("scheduling is deterministic: shuffled input, same decisions", () => {
  const tasks = Array.from(
    { length: 30 },
    (_, i) =>
      task(`t${i}`, {
        priority: (i * 7) % 3 + 1,
        created_at: `2026-01-01T00:00:${String(i % 10).padStart(2, "0")}.000Z`,
      }),
  );
  const expected = scheduleTick({ ...base, tasks });
  for (let seed = 1; seed < 20; seed++) {
    const shuffled = [...tasks].sort((a, b) =>
      ((a.id.length * seed + a.id.charCodeAt(1) * seed) % 7) -
      ((b.id.length * seed + b.id.charCodeAt(1) * seed) % 7)
    );
    deepStrictEqual(scheduleTick({ ...base, tasks: shuffled }), expected);
  }
});

Deno.test("owned entries overlap for equal paths, folders, and globs", () => {
  const cases: [string, string, boolean][] = [
    ["a.ts", "a.ts", true],
    ["src/", "src/a.ts", true],
    ["src", "src/a.ts", true],
    ["src/a.ts", "src/ab.ts", false],
    ["src/*.ts", "src/a.ts", true],
    ["src/*.ts", "src/x/a.ts", false],
    ["src/**/*.ts", "src/x/a.ts", true],
    ["docs/**", "src/**", false],
    ["src/**", "src/api/*.ts", true],
  ];
  for (const [a, b, want] of cases) strictEqual(ownedEntriesOverlap(a, b), want, `${a} vs ${b}`);
});

Deno.test("spawn backoff doubles and caps", () => {
  deepStrictEqual([0, 1, 2, 3, 10].map((n) => spawnBackoffMs(n, 5, 60)), [
    0,
    5000,
    10000,
    20000,
    60000,
  ]);
});

function terminate(
  tasks: { id: string; status: string; version?: number }[],
  extra: Partial<Parameters<typeof decideTermination>[0]> = {},
) {
  return decideTermination({
    tasks: tasks.map((t) => ({ version: 1, ...t })),
    runningAgents: 0,
    pendingMerges: 0,
    deferredByBackoff: 0,
    holdActive: false,
    nowMs: 0,
    graceS: 10,
    minTicks: 3,
    ...extra,
  });
}

Deno.test("quiescence stops a run when nothing is open or running and something finished", () => {
  deepStrictEqual(terminate([{ id: "a", status: "closed" }, { id: "b", status: "failed" }]), {
    stop: "quiescent",
    planned: 0,
  });
  deepStrictEqual(terminate([{ id: "a", status: "closed" }], { runningAgents: 1 }), {
    stop: false,
  });
  deepStrictEqual(terminate([{ id: "a", status: "closed" }], { pendingMerges: 1 }), {
    stop: false,
  });
  deepStrictEqual(
    terminate([{ id: "a", status: "closed" }, { id: "b", status: "open" }]).stop,
    false,
  );
  deepStrictEqual(terminate([{ id: "a", status: "closed" }], { holdActive: true }), {
    stop: false,
  });
});

Deno.test("the zero-terminal backstop needs both the grace period and the tick count", () => {
  const tasks = [{ id: "b", status: "open" }, { id: "a", status: "claimed" }];
  let stall: StallState | undefined;
  const seen: string[] = [];
  for (const nowMs of [0, 4000, 8000, 12000]) {
    const d = terminate(tasks, { nowMs, stall });
    seen.push(String(d.stop));
    if (d.stop === false) stall = d.stall;
    else {deepStrictEqual(d, {
        stop: "backstop",
        failTaskIds: ["a", "b"],
        reason: "no task finished and nothing changed for 10s over 4 ticks",
      });}
  }
  deepStrictEqual(seen, ["false", "false", "false", "backstop"]);
  // Enough time but too few ticks: no stop.
  const early = terminate(tasks, {
    nowMs: 20_000,
    stall: { ...(stall as StallState), sinceMs: 0, ticks: 1 },
  });
  strictEqual(early.stop, false);
});

Deno.test("any task change, backoff, a live agent or a hold resets or suppresses the backstop", () => {
  const tasks = [{ id: "a", status: "open" }];
  const d1 = terminate(tasks, { nowMs: 0 });
  const stall = d1.stop === false ? d1.stall : undefined;
  ok(stall);
  const changed = terminate([{ id: "a", status: "open", version: 2 }], {
    nowMs: 50_000,
    stall: { ...stall, ticks: 99 },
  });
  strictEqual(changed.stop, false);
  if (changed.stop === false) {
    strictEqual(changed.stall?.ticks, 1, "a new fingerprint restarts the count");
  }
  for (const extra of [{ deferredByBackoff: 1 }, { runningAgents: 1 }, { holdActive: true }]) {
    deepStrictEqual(terminate(tasks, { nowMs: 50_000, stall: { ...stall, ticks: 99 }, ...extra }), {
      stop: false,
    });
  }
});

Deno.test("rate-limit reasons are recognised in each API's and CLI's wording, others are not", () => {
  const limited = [
    "API Error: Request rejected (429) · This request would exceed the rate limit",
    "exceeded retry limit, last status: 429 Too Many Requests",
    "[API Error: Resource has been exhausted (e.g. check quota).]",
    "RESOURCE_EXHAUSTED",
    "Rate limit reached for gpt-5 on requests per min",
    "rate_limit_exceeded",
  ];
  for (const r of limited) ok(isRateLimitReason(r), r);
  const other = [
    "API Error: 500 internal error",
    "deadline: killed after 900s (scope small)",
    "Reached maximum number of turns (2)",
    "exited with code 1: port 4290 in use",
    "signals-unmet: completion signals not met",
  ];
  for (const r of other) ok(!isRateLimitReason(r), r);
});

Deno.test("a rate-limited retry waits at least the cooldown; other failures the backoff", () => {
  const tuning = { spawn_backoff_base_s: 5, spawn_backoff_max_s: 300, rate_limit_cooldown_s: 60 };
  deepStrictEqual([1, 2, 3].map((n) => retryDelayMs(n, tuning, false)), [5000, 10000, 20000]);
  deepStrictEqual([1, 2, 3].map((n) => retryDelayMs(n, tuning, true)), [60000, 60000, 60000]);
  // A backoff already longer than the cooldown is kept.
  deepStrictEqual(retryDelayMs(6, tuning, true), 160000);
});

Deno.test("a dependent waits while its failed dependency's retry is pending and fails once it is final", () => {
  const tasks = [task("a", { status: "failed" }), task("b", { depends_on: ["a"] })];
  deepStrictEqual(scheduleTick({ ...base, tasks, failurePending: ["a"] }), []);
  deepStrictEqual(scheduleTick({ ...base, tasks, failurePending: [] }), [
    { kind: "fail_dependent", taskId: "b", reason: "dependency a ended failed" },
  ]);
  const cancelled = [task("a", { status: "cancelled" }), task("b", { depends_on: ["a"] })];
  strictEqual(
    scheduleTick({ ...base, tasks: cancelled, failurePending: ["a"] })[0].kind,
    "fail_dependent",
  );
});

Deno.test("a planned task does not keep an idle run alive: quiescent, counted", () => {
  deepStrictEqual(terminate([{ id: "a", status: "closed" }, { id: "p", status: "planned" }]), {
    stop: "quiescent",
    planned: 1,
  });
  deepStrictEqual(terminate([{ id: "p", status: "planned" }]), { stop: "quiescent", planned: 1 });
  deepStrictEqual(
    terminate([{ id: "p", status: "planned" }], { runningAgents: 1 }),
    { stop: false },
    "an agent still running may open it",
  );
});

Deno.test("a planned recovery step is routed once its upstream ended; skips propagate", () => {
  const tasks = [
    task("tests", { status: "failed" }),
    task("running", { status: "in_progress" }),
    task("fix", { status: "planned", condition_on: ["tests"] }),
    task("fix-later", { status: "planned", condition_on: ["tests", "running"] }),
    task("pending", { status: "planned", condition_on: ["retrying"] }),
    task("retrying", { status: "failed" }),
    task("plain-planned", { status: "planned" }),
    task("deploy", { status: "cancelled", skipped: true }),
    task("after-deploy", { depends_on: ["deploy"] }),
    task("both", { depends_on: ["deploy", "tests"] }),
  ];
  deepStrictEqual(
    scheduleTick({ ...base, tasks, running: ["running"], failurePending: ["retrying"] }),
    [
      { kind: "route", taskId: "fix" },
      // A skipped dependency skips; a failed one still fails (failure wins).
      { kind: "skip_dependent", taskId: "after-deploy", reason: "dependency deploy was skipped" },
      { kind: "fail_dependent", taskId: "both", reason: "dependency tests ended failed" },
    ],
  );
  // A closed or skipped upstream routes too (the condition decides); a missing one as well.
  for (const status of ["closed", "cancelled"]) {
    deepStrictEqual(
      scheduleTick({
        ...base,
        tasks: [task("u", { status }), task("r", { status: "planned", condition_on: ["u"] })],
      }),
      [{ kind: "route", taskId: "r" }],
    );
  }
  deepStrictEqual(
    scheduleTick({ ...base, tasks: [task("r", { status: "planned", condition_on: ["gone"] })] }),
    [{ kind: "route", taskId: "r" }],
  );
});

Deno.test("cells (list form): a cell's roles share its max_agents; other roles only the run's cap", () => {
  const cells = [
    { name: "api", roles: ["backend", "qa"], max_agents: 2 },
    { name: "docs", roles: ["docs"] },
  ];
  const tasks = [
    task("b1"),
    task("b2"),
    task("b3"),
    task("q1", { role: "qa" }),
    task("d1", { role: "docs" }),
    task("f1", { role: "frontend" }),
  ];
  deepStrictEqual(scheduleTick({ ...base, maxAgents: 10, tasks, cells }), [
    { kind: "spawn", taskId: "b1" },
    { kind: "spawn", taskId: "b2" },
    { kind: "defer", taskId: "b3", reason: "cell_capacity" },
    { kind: "defer", taskId: "q1", reason: "cell_capacity" },
    { kind: "spawn", taskId: "d1" },
    { kind: "spawn", taskId: "f1" },
  ]);
  // Running agents of the cell count too; the run's cap still applies first.
  deepStrictEqual(
    scheduleTick({
      ...base,
      maxAgents: 10,
      tasks: [task("r", { status: "in_progress", role: "qa" }), task("b1"), task("b2")],
      running: ["r"],
      cells,
    }),
    [{ kind: "spawn", taskId: "b1" }, { kind: "defer", taskId: "b2", reason: "cell_capacity" }],
  );
  deepStrictEqual(
    scheduleTick({
      ...base,
      maxAgents: 1,
      tasks: [task("b1"), task("d1", { role: "docs" })],
      cells,
    }),
    [{ kind: "spawn", taskId: "b1" }, { kind: "defer", taskId: "d1", reason: "capacity" }],
  );
});
