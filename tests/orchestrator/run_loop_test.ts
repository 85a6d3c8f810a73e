// The run loop in process under the fake clock: a fake executor stands in for agent processes
// (it makes the real worktree, writes the agent's files, and exits when the test says), while
// git, the task store, lineage and the recorder are the real ones. Time moves only when the
// loop sleeps and the test advances the clock, so every timing decision (backoff, stall,
// backstop) is reproducible; nothing waits on the wall clock.
import assert from "node:assert/strict";
import { join } from "node:path";
import type { AgentResult } from "../../src/adapters/mod.ts";
import { ensureAuditKey, MemoryAuditSink } from "../../src/audit/mod.ts";
import { type Config, requireConfig } from "../../src/config/mod.ts";
import { FakeClock, mapEnv, SeededRandom } from "../../src/io/mod.ts";
import type { LedgerEntryInput } from "../../src/ledger/mod.ts";
import { openLineageStore } from "../../src/lineage/store/mod.ts";
import {
  type AgentExit,
  type Execution,
  type ExecutionRequest,
  type Executor,
  Git,
  type RunEvent,
  type RunFact,
  RunLoop,
  type RunOutcome,
} from "../../src/orchestrator/mod.ts";
import { listSessionFiles } from "../../src/orchestrator/run_state.ts";
import { EventHub, type ServerEvent, TokenRegistry } from "../../src/server/mod.ts";
import {
  createMemoryTaskStore,
  type HoldStore,
  type TaskDraft,
  type TaskStore,
  TaskStoreLockLostError,
} from "../../src/tasks/mod.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

/** What one fake agent attempt does. */
interface AgentScript {
  /** Files it writes in its worktree. */
  files?: Record<string, string>;
  /** It exits with this result (default: ok). */
  fail?: string;
  /** It never exits by itself (only when terminated). */
  hang?: boolean;
  /** Something it reports through the store before exiting. */
  report?: (store: TaskStore, taskId: string, session: string) => Promise<void>;
  /** It works this long (fake time) before it may exit. */
  runsMs?: number;
  /** Its start takes this long (fake time): a worker fetching the base, a slow CLI. */
  startsMs?: number;
  /**
   * It reports completion through the task server before the orchestrator has recorded its
   * start (claimed → in_progress → done, as the server's /complete does for a fast agent).
   */
  reportsBeforeStartRecorded?: boolean;
  /** Asked to stop, it takes this long (fake time) to die: it stays silent meanwhile. */
  diesAfterMs?: number;
}

function result(ok: boolean, error: string | null, code = ok ? 0 : 1): AgentResult {
  return {
    ok,
    summary: ok ? "did it" : "",
    turns: 1,
    tokens: null,
    cost_usd: null,
    error,
    subtype: null,
    session_id: null,
    exit_code: code,
  };
}

/**
 * Starts fake agents: one worktree each, files written. An agent that does not hang exits when
 * the driver releases it at the next idle point, so its exit has a definite fake time.
 */
class FakeExecutor implements Executor {
  /** Each start: task, session, fake time. */
  readonly starts: {
    taskId: string;
    session: string;
    atMs: number;
    prompt: string;
    baseSha: string;
  }[] = [];
  /** Sessions terminated, with the fake time. */
  readonly terminated: { session: string; atMs: number }[] = [];
  /** Agents ready to exit, waiting for the driver. */
  #ready: { atMs: number; exit: () => Promise<AgentExit> }[] = [];
  #parked = 0;
  #onPark: (() => void)[] = [];
  readonly #scripts: (taskId: string, attempt: number) => AgentScript;
  readonly #ctx: { git: Git; sdd: string; clock: FakeClock; store: TaskStore };

  constructor(
    ctx: { git: Git; sdd: string; clock: FakeClock; store: TaskStore },
    scripts: (taskId: string, attempt: number) => AgentScript,
  ) {
    this.#ctx = ctx;
    this.#scripts = scripts;
  }

  async start(request: ExecutionRequest): Promise<Execution> {
    const { git, sdd, clock, store } = this.#ctx;
    const attempt = this.starts.filter((s) => s.taskId === request.taskId).length + 1;
    this.starts.push({
      taskId: request.taskId,
      session: request.session,
      atMs: clock.nowMs(),
      prompt: request.prompt,
      baseSha: request.baseSha,
    });
    const worktree = join(sdd, "worktrees", request.session);
    const branch = `agent/${request.session}`;
    await git.addWorktree(worktree, branch, request.baseSha);
    const script = this.#scripts(request.taskId, attempt);
    for (const [path, text] of Object.entries(script.files ?? {})) {
      await Deno.writeTextFile(join(worktree, path), text);
    }
    if (script.startsMs !== undefined) {
      this.#parked++;
      for (const wake of this.#onPark.splice(0)) wake();
      await clock.sleep(script.startsMs);
      this.#parked--;
    }
    if (script.reportsBeforeStartRecorded) {
      const by = { actor: `agent:${request.session}`, holder: request.session };
      await store.transition(request.taskId, "in_progress", { ...by, reason: "early report" });
      await store.transition(request.taskId, "done", { ...by, reason: "agent reported" });
    }
    let finish: (exit: AgentExit) => void = () => {};
    const exit = new Promise<AgentExit>((resolve) => (finish = resolve));
    if (!script.hang) {
      this.#ready.push({
        atMs: clock.nowMs() + (script.runsMs ?? 0),
        exit: async () => {
          await script.report?.(store, request.taskId, request.session);
          finish({
            result: result(!script.fail, script.fail ?? null),
            timedOut: false,
            signal: null,
          });
          return await exit;
        },
      });
    }
    const startedMs = clock.monotonicMs();
    return {
      session: request.session,
      worktree,
      branch,
      baseSha: request.baseSha,
      pid: 4242,
      logPath: join(sdd, "runtime", `${request.session}.log`),
      argv0: "fake-agent",
      promptChannel: "stdin",
      notes: [],
      isolation: { isolation: "none" },
      lastOutputMs: () => startedMs,
      lastText: () => "",
      terminate: async (_graceMs: number) => {
        this.terminated.push({ session: request.session, atMs: clock.nowMs() });
        if (script.diesAfterMs !== undefined) await clock.sleep(script.diesAfterMs);
        finish({ result: result(false, "terminated", 143), timedOut: false, signal: "SIGTERM" });
      },
      exit,
    };
  }

  /**
   * Resolves while a start waits on the fake clock (a slow start keeps the loop busy, so the
   * driver cannot wait for the loop to be idle: time must move for the start to finish).
   */
  parked(): Promise<void> {
    if (this.#parked > 0) return Promise.resolve();
    return new Promise((resolve) => this.#onPark.push(resolve));
  }

  /** Lets every agent that is ready exit; true when there was one. */
  async release(): Promise<boolean> {
    const now = this.#ctx.clock.nowMs();
    const ready = this.#ready.filter((r) => r.atMs <= now);
    this.#ready = this.#ready.filter((r) => r.atMs > now);
    for (const r of ready) await r.exit();
    return ready.length > 0;
  }
}

const NO_HOLDS: HoldStore = {
  add: () => Promise.reject(new Error("no holds in this test")),
  list: () => Promise.resolve([]),
  release: () => Promise.reject(new Error("no holds in this test")),
};

interface Harness {
  loop: RunLoop;
  clock: FakeClock;
  store: TaskStore;
  executor: FakeExecutor;
  audit: MemoryAuditSink;
  ledger: LedgerEntryInput[];
  events: RunEvent[];
  facts: RunFact[];
  git: Git;
}

async function harness(
  dir: string,
  drafts: TaskDraft[],
  scripts: (taskId: string, attempt: number) => AgentScript,
  tune: (config: Config) => void = () => {},
  maxAgents = 4,
): Promise<Harness> {
  await makeRepo(dir);
  const env = mapEnv({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir });
  const loaded = await requireConfig({ cwd: dir, env });
  const config = structuredClone(loaded.config) as Config;
  config.tuning.orchestrator.tick_interval_s = 1;
  tune(config);
  const clock = new FakeClock();
  const random = new SeededRandom(7);
  const audit = new MemoryAuditSink({ clock });
  const store = createMemoryTaskStore({ clock, random });
  await store.createMany(drafts, { actor: "test" });
  const sdd = join(dir, ".sdd");
  const runtimeDir = join(sdd, "runtime");
  await Deno.mkdir(runtimeDir, { recursive: true });
  const git = new Git(dir, { env });
  const executor = new FakeExecutor({ git, sdd, clock, store }, scripts);
  const ledger: LedgerEntryInput[] = [];
  const events: RunEvent[] = [];
  const serverEvents = new EventHub<ServerEvent>();
  const auditKey = await ensureAuditKey(join(dir, "..", `${dir.split("/").pop()}.key`), random);
  const loop = new RunLoop({
    auditKey,
    runId: "calm-otter-0a1b2c",
    root: dir,
    sdd,
    branch: "feature",
    config,
    git,
    store,
    holds: NO_HOLDS,
    server: { url: "http://127.0.0.1:9", events: serverEvents, agents: () => [] },
    tokens: await TokenRegistry.open(runtimeDir, {
      random,
      operatorTokenPath: join(dir, "..", `${dir.split("/").pop()}-auth.token`),
    }),
    audit,
    ledger: {
      append: (input) => {
        ledger.push(input);
        return Promise.resolve({} as never);
      },
    },
    lineage: openLineageStore({ sdd, operatorKey: new Uint8Array(32).fill(3), clock, random }),
    clock,
    env,
    lookup: { which: () => Promise.resolve(undefined) },
    scripted: () => Promise.resolve({ ok: true, deno: "deno", script: "agent.ts" }),
    selfCommand: ["true"],
    reporter: { event: (e) => events.push(e) },
    cliOverride: "scripted",
    maxAgents,
    runAttempt: 1,
    isRoot: false,
    executor,
  });
  const facts: RunFact[] = [];
  loop.recorder.on((f) => facts.push(f));
  return { loop, clock, store, executor, audit, ledger, events, facts, git };
}

/**
 * Runs the loop to its end. Whenever it is idle (or a start waits on the clock), agents that
 * are ready exit (no time passes); when none is, the fake clock moves by `stepMs`.
 */
async function drive(h: Harness, stepMs = 1000, maxSteps = 10_000): Promise<RunOutcome> {
  let ended = false;
  const run = h.loop.run().finally(() => (ended = true));
  for (let step = 0; !ended; step++) {
    assert.ok(step < maxSteps, "the run did not end");
    await Promise.race([h.loop.whenIdle(), run, h.executor.parked()]);
    if (!ended && !(await h.executor.release())) h.clock.advance(stepMs);
  }
  return await run;
}

function draft(id: string, extra: Partial<TaskDraft> = {}): TaskDraft {
  return { id, title: `task ${id}`, role: "backend", max_retries: 0, ...extra };
}

Deno.test("run loop: dependents start only after their dependency merged; all merge in order", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("a"), draft("b", { depends_on: ["a"] }), draft("c", { depends_on: ["b"] })],
      (taskId) => ({ files: { [`${taskId}.txt`]: `work of ${taskId}\n` } }),
    );
    const outcome = await drive(h);
    assert.equal(outcome.end, "quiescent");
    assert.deepEqual(outcome.merges.map((m) => m.task_id), ["a", "b", "c"]);
    assert.deepEqual(h.executor.starts.map((s) => s.taskId), ["a", "b", "c"]);
    // b started from the commit that merged a, c from the one that merged b.
    const merged = new Map(outcome.merges.map((m) => [m.task_id, m.sha]));
    for (const [dep, task] of [["a", "b"], ["b", "c"]]) {
      const started = h.executor.starts.find((s) => s.taskId === task);
      assert.equal(started?.baseSha, merged.get(dep), `${task} worked on top of ${dep}'s merge`);
    }
    for (const id of ["a", "b", "c"]) {
      assert.equal((await h.store.get(id))?.status, "closed");
      assert.equal(await Deno.readTextFile(join(dir, `${id}.txt`)), `work of ${id}\n`);
    }
    // One fact, three records: the audit chain, the ledger and the progress stream agree.
    assert.equal(h.audit.ofType("merge.completed").length, 3);
    assert.deepEqual(
      h.ledger.filter((r) => r.kind === "task.completed").map((r) => r.task_id),
      ["a", "b", "c"],
    );
    assert.deepEqual(h.events.filter((e) => e.type === "task.merged").map((e) => e.task_id), [
      "a",
      "b",
      "c",
    ]);
    assert.equal(h.facts.filter((f) => f.kind === "merge.completed").length, 3);
    assert.equal(h.loop.decisions.length, 3, "one spawn decision per task");
  });
});

Deno.test("run loop: a failed attempt is retried after the backoff the fake clock measures, with the failure in its prompt", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("flaky", { max_retries: 2 })],
      (_taskId, attempt) =>
        attempt === 1
          ? { fail: "tool crashed: segfault in parser" }
          : { files: { "fixed.txt": "ok\n" } },
    );
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "quiescent");
    assert.equal(h.executor.starts.length, 2);
    const [first, second] = h.executor.starts;
    // Retry 1 waits spawn_backoff_base_s (5 s) after the failure, measured on the fake clock.
    assert.equal(second.atMs - first.atMs, 5000);
    assert.match(second.prompt, /The previous attempt failed: tool crashed: segfault in parser/);
    assert.equal((await h.store.get("flaky"))?.status, "closed");
    const failed = h.ledger.find((r) => r.kind === "task.failed");
    assert.equal(failed?.payload?.reason, "agent-failed");
    assert.deepEqual(h.events.filter((e) => e.type === "task.retry").map((e) => e.delay_s), [5]);
  });
});

Deno.test("run loop: an agent silent past the stall threshold is stopped and its task fails", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("quiet")],
      () => ({ hang: true }),
      (config) => (config.tuning.agent.stall_threshold_s = 30),
    );
    const outcome = await drive(h, 1000);
    assert.equal(h.executor.terminated.length, 1);
    // The first tick with more than 30 s of silence (ticks are 1 s apart) stops it.
    assert.equal(h.executor.terminated[0].atMs - h.executor.starts[0].atMs, 31_000);
    const stalled = h.audit.ofType("agent.stalled");
    assert.equal(stalled.length, 1);
    assert.equal(stalled[0].details.task_id, "quiet");
    assert.equal((await h.store.get("quiet"))?.status, "failed");
    assert.equal(outcome.end, "quiescent");
    assert.deepEqual(outcome.merges, []);
  });
});

Deno.test("run loop: a stalled agent slow to die is stopped and reported once", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("quiet")],
      () => ({ hang: true, diesAfterMs: 10_000 }),
      (config) => (config.tuning.agent.stall_threshold_s = 30),
    );
    await drive(h, 1000);
    // Ten ticks pass while it dies, each seeing it still silent.
    assert.equal(h.executor.terminated.length, 1);
    assert.equal(h.audit.ofType("agent.stalled").length, 1);
    assert.equal((await h.store.get("quiet"))?.status, "failed");
  });
});

const diskFull = () => new Error("No space left on device (os error 28): write '.sdd/x'");

/**
 * The disk fills the moment an agent starts (it filled it): each write the orchestrator makes
 * after the start fails in turn. Whichever it is, the run stops as storage-failed, the started
 * agent is stopped once (and that is recorded), nothing spawns it again, and its task keeps a
 * resumable state: claimed when the in_progress write failed, in_progress after it.
 */
for (
  const [what, status, fail] of [
    ["the in_progress transition", "claimed", (h: Harness) => {
      const transition = h.store.transition.bind(h.store);
      h.store.transition = (id, to, options) =>
        to === "in_progress" ? Promise.reject(diskFull()) : transition(id, to, options);
    }],
    ["the agent.spawned record", "in_progress", (h: Harness) => {
      const append = h.audit.append.bind(h.audit);
      h.audit.append = (event, options) =>
        event.event_type === "agent.spawned" ? Promise.reject(diskFull()) : append(event, options);
    }],
  ] as const
) {
  Deno.test(`run loop: a disk that fills as its agent starts (${what}) stops the run; the agent is stopped once, the task stays ${status}`, async () => {
    await withTempDir(async (dir) => {
      const h = await harness(dir, [draft("fill")], () => ({ hang: true }));
      fail(h);
      const outcome = await drive(h, 1000);
      assert.equal(outcome.end, "storage-failed");
      assert.match(outcome.reason ?? "", /No space left on device/);
      assert.equal(
        (await h.store.get("fill"))?.status,
        status,
        "resumable: not reopened, not failed",
      );
      assert.equal(h.executor.starts.length, 1, "not spawned again on a full disk");
      const session = h.executor.starts[0].session;
      assert.deepEqual(h.executor.terminated.map((t) => t.session), [session], "stopped once");
      const aborted = h.audit.ofType("agent.start_aborted");
      assert.equal(aborted.length, 1);
      assert.equal(aborted[0].resource_id, session);
      assert.match(String(aborted[0].details.reason), /No space left on device/);
      assert.equal(h.audit.ofType("agent.spawn_failed").length, 0, "not a failed spawn");
      assert.equal(h.audit.ofType("agent.stalled").length, 0);
    });
  });
}

Deno.test("run loop: a started agent's session file is written before its task is in progress; a start that cannot be recorded leaves it abandoned", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(dir, [draft("a"), draft("b")], (taskId) => ({
      files: { [`${taskId}.txt`]: `${taskId}\n` },
    }));
    const transition = h.store.transition.bind(h.store);
    const atInProgress: Record<string, [string, number, string | null | undefined][]> = {};
    h.store.transition = async (id, to, options) => {
      if (to === "in_progress") {
        // A kill -9 here must leave the record by which the next run ends the agent.
        atInProgress[id] ??= (await listSessionFiles(join(dir, ".sdd")))
          .filter((f) => f.session === options.holder)
          .map((f) => [f.state, f.pid, f.pid_start]);
        // b's claim went elsewhere while its agent started.
        if (id === "b") throw new Error("claim lost");
      }
      return await transition(id, to, options);
    };
    await drive(h);
    // The fake agent's pid is no process here: its start time is unknown (null).
    assert.deepEqual(atInProgress.a, [["running", 4242, null]]);
    assert.deepEqual(atInProgress.b, [["running", 4242, null]]);
    const starts = h.executor.starts.filter((s) => s.taskId === "b").length;
    const files = await listSessionFiles(join(dir, ".sdd"));
    assert.deepEqual(
      files.filter((f) => f.task_id === "b").map((f) => f.state),
      Array(starts).fill("abandoned"),
      "no refused start's file claims a running agent",
    );
    assert.equal(h.audit.ofType("agent.start_aborted").length, starts);
  });
});

Deno.test("run loop: tasks stuck behind a blocked one end in the zero-terminal backstop", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("stuck"), draft("after", { depends_on: ["stuck"] })],
      () => ({
        report: async (store, taskId, session) => {
          await store.transition(taskId, "blocked", {
            actor: `agent:${session}`,
            reason: "needs a credential nobody has",
          });
        },
      }),
      (config) => {
        config.tuning.orchestrator.stalled_run_grace_s = 20;
        config.tuning.orchestrator.stalled_run_ticks = 3;
      },
    );
    const startMs = h.clock.nowMs();
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "backstop");
    // The grace period on the fake clock, not the machine, decided when.
    assert.equal(h.clock.nowMs() - startMs, 20_000);
    assert.match(outcome.reason, /^backstop: no task finished and nothing changed for 20s/);
    assert.equal(h.executor.starts.length, 1, "the dependent never started");
    for (const id of ["stuck", "after"]) assert.equal((await h.store.get(id))?.status, "failed");
    const backstop = h.audit.ofType("run.backstop");
    assert.equal(backstop.length, 1);
    assert.deepEqual(backstop[0].details.tasks, ["after", "stuck"]);
    assert.deepEqual(
      h.ledger.filter((r) => r.kind === "task.abandoned").map((r) => r.task_id).sort(),
      ["after", "stuck"],
    );
  });
});

Deno.test("run loop: a claim nobody in this run holds is released after stale_claim_timeout_s and runs", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("orphan")],
      () => ({ files: { "o.txt": "o\n" } }),
      (config) => (config.tuning.orchestrator.stale_claim_timeout_s = 60),
    );
    const start = h.clock.nowMs();
    // A worker elsewhere claimed it and went silent.
    await h.store.claim("orphan", { agent: "ghost-worker", expectedVersion: 1, actor: "test" });
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "quiescent");
    assert.equal(h.executor.starts.length, 1);
    assert.ok(h.executor.starts[0].atMs - start >= 60_000, "not before the timeout");
    assert.equal((await h.store.get("orphan"))?.status, "closed");
  });
});

Deno.test("run loop: this run's own long-running agent keeps its claim past stale_claim_timeout_s", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("long")],
      () => ({ files: { "l.txt": "l\n" }, runsMs: 30_000 }),
      (config) => {
        config.tuning.orchestrator.stale_claim_timeout_s = 5;
        config.tuning.agent.stall_threshold_s = 1000;
      },
    );
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "quiescent");
    assert.equal(h.executor.starts.length, 1, "started once, never released and restarted");
    assert.equal((await h.store.get("long"))?.status, "closed");
    assert.ok(!h.events.some((e) => String(e.message ?? "").includes("expired")));
  });
});

Deno.test("run loop: an agent that reports done before its start is recorded keeps its task; it merges once", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("quick")],
      () => ({ files: { "q.txt": "q\n" }, reportsBeforeStartRecorded: true }),
    );
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "quiescent");
    assert.equal(h.executor.starts.length, 1, "no spawn failure, no second attempt");
    assert.deepEqual(h.executor.terminated, [], "the agent was not stopped");
    assert.equal((await h.store.get("quick"))?.status, "closed");
    assert.equal(h.facts.filter((f) => f.kind === "merge.completed").length, 1);
    assert.equal(await Deno.readTextFile(join(dir, "q.txt")), "q\n");
  });
});

Deno.test("run loop: a spawn slower than stale_claim_timeout_s keeps its claim (it is vouched for while it starts)", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("slow-start")],
      () => ({ files: { "s.txt": "s\n" }, startsMs: 20_000 }),
      (config) => {
        config.tuning.orchestrator.stale_claim_timeout_s = 5;
        config.tuning.agent.stall_threshold_s = 1000;
      },
    );
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "quiescent");
    assert.equal(h.executor.starts.length, 1, "started once, never released and restarted");
    assert.equal((await h.store.get("slow-start"))?.status, "closed");
    assert.ok(!h.events.some((e) => String(e.message ?? "").includes("expired")));
  });
});

Deno.test("run loop: a store another orchestrator took over (namespace lock lost) ends the run and stops its agents", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(dir, [draft("held")], () => ({ hang: true }));
    const lost = new TaskStoreLockLostError(
      "postgresql://db:5432/bern (namespace default)",
      "run other-run on host-b, pid 9, since 2026-01-01T00:00:00.000Z",
    );
    // Held until the agent runs; then the lock is gone to another orchestrator.
    h.store.checkOwnership = () =>
      h.executor.starts.length === 0 ? Promise.resolve("held") : Promise.reject(lost);
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "store-lock-lost");
    assert.match(outcome.reason, /another orchestrator holds it now \(run other-run on host-b/);
    assert.deepEqual(h.executor.terminated.map((t) => t.session), [h.executor.starts[0].session]);
    assert.equal(h.executor.starts.length, 1, "nothing started after the loss");
  });
});

Deno.test("run loop: a namespace lock taken again after a blip is reported once; the run goes on", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(dir, [draft("blip")], () => ({ files: { "b.txt": "b\n" } }));
    let checks = 0;
    h.store.checkOwnership = () => Promise.resolve(++checks === 2 ? "retaken" : "held");
    const outcome = await drive(h, 1000);
    assert.equal(outcome.end, "quiescent");
    const warnings = h.events.filter((e) => String(e.message ?? "").includes("holds it again"));
    assert.equal(warnings.length, 1);
    assert.equal((await h.store.get("blip"))?.status, "closed");
  });
});

Deno.test("run loop: an agent whose log stops growing is reported idle once, then stopped at the stall threshold", async () => {
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [draft("quiet")],
      () => ({ hang: true }),
      (config) => {
        config.tuning.agent.idle_log_age_threshold_s = 10;
        config.tuning.agent.stall_threshold_s = 30;
      },
    );
    await drive(h, 1000);
    const idle = h.audit.ofType("agent.idle");
    assert.equal(idle.length, 1, "reported once, not every tick");
    assert.equal(idle[0].details.idle_s, 11);
    assert.equal(h.audit.ofType("agent.stalled").length, 1);
  });
});

Deno.test("run loop: a failed task routes its recovery step (receipt on the spine, in the prompt) and skips the other branch", async () => {
  await withTempDir(async (dir) => {
    const condition = (on: string, expr: string) => ({
      status: "planned" as const,
      metadata: { condition: { on: [on], stage: null, expr } },
    });
    const h = await harness(
      dir,
      [
        draft("tests"),
        draft("fix", condition("tests", "status == 'failed' and output contains 'FAILED'")),
        draft("deploy", condition("tests", "status == 'done'")),
        draft("announce", { depends_on: ["deploy"] }),
      ],
      (taskId) =>
        taskId === "tests" ? { fail: "2 tests FAILED" } : { files: { [`${taskId}.txt`]: "ok\n" } },
    );
    const outcome = await drive(h);
    assert.equal(outcome.end, "quiescent");
    assert.deepEqual(h.executor.starts.map((s) => s.taskId), ["tests", "fix"]);
    const fix = await h.store.get("fix");
    assert.equal(fix?.status, "closed");
    const hash = fix?.metadata.recovery_receipt_hash as string;
    assert.match(hash, /^sha256:[0-9a-f]{64}$/);
    assert.match(h.executor.starts[1].prompt, new RegExp(`Failure receipt: ${hash}`));
    assert.match(h.executor.starts[1].prompt, /## Why this task runs: tests ended failed/);
    for (const id of ["deploy", "announce"]) {
      const t = await h.store.get(id);
      assert.equal(t?.status, "cancelled");
      assert.equal(t?.metadata.skipped, true);
    }
    assert.deepEqual(h.events.filter((e) => e.type === "task.skipped").map((e) => e.task_id), [
      "deploy",
      "announce",
    ]);
    const routed = h.audit.ofType("task.routed");
    assert.equal(routed.length, 1);
    assert.equal(routed[0].details.recovery_receipt_hash, hash);
    // The receipt was written after the failure was recorded: its journal ends with it.
    const receiptPath = join(
      dir,
      fix?.metadata.recovery &&
          (fix.metadata.recovery as { receipt: string }).receipt || "",
    );
    const receipt = JSON.parse(await Deno.readTextFile(receiptPath));
    assert.deepEqual(receipt.journal_tail.map((e: { type: string }) => e.type), [
      "task.spawned",
      "task.failed",
    ]);
    assert.equal(receipt.gate_report.failure.code, "agent-failed");
    assert.equal(receipt.condition_context.output, "2 tests FAILED");
    assert.ok(!JSON.stringify(receipt).includes("0a1b2c"), "no run tag in the receipt");
  });
});

/** Tasks a..f one at a time; those named in `failing` fail on every attempt. */
async function budgetRun(dir: string, failing: string[], minFailures?: number) {
  const ids = ["a", "b", "c", "d", "e", "f"];
  const h = await harness(
    dir,
    ids.map((id) => draft(id)),
    (taskId) =>
      failing.includes(taskId)
        ? { fail: `${taskId} broke` }
        : { files: { [`${taskId}.txt`]: `${taskId}\n` } },
    (config) => {
      if (minFailures !== undefined) config.tuning.slo.error_budget_min_failures = minFailures;
    },
    1,
  );
  return { h, outcome: await drive(h) };
}

Deno.test("run loop: the error budget spent pauses the run — no new agents, the rest left open, audited", async () => {
  await withTempDir(async (dir) => {
    const { h, outcome } = await budgetRun(dir, ["a", "b", "c"]);
    assert.equal(outcome.end, "stopped");
    assert.match(outcome.reason, /error budget spent: 3 of 3 finished task\(s\) failed \(budget 3/);
    assert.deepEqual(h.executor.starts.map((s) => s.taskId), ["a", "b", "c"]);
    for (const id of ["d", "e", "f"]) assert.equal((await h.store.get(id))?.status, "open");
    const [spent] = h.audit.ofType("run.error_budget_spent");
    assert.deepEqual(spent.details, { finished: 3, failed: 3, budget: 3, min_failures: 3 });
    assert.equal(spent.actor, "orchestrator");
    const [stop] = h.audit.ofType("run.stop_requested");
    assert.equal(stop.actor, "orchestrator", "the run paused itself; no operator asked");
  });
});

Deno.test("run loop: tuning.slo.error_budget_min_failures raises the floor: the same failures do not pause", async () => {
  await withTempDir(async (dir) => {
    const { h, outcome } = await budgetRun(dir, ["a", "b", "c"], 10);
    assert.equal(outcome.end, "quiescent");
    assert.equal(h.executor.starts.length, 6);
    assert.equal(h.audit.ofType("run.error_budget_spent").length, 0);
  });
});

Deno.test("run loop: an error budget of 0 pauses at the first final failure", async () => {
  await withTempDir(async (dir) => {
    const { h, outcome } = await budgetRun(dir, ["b"], 0);
    assert.equal(outcome.end, "stopped");
    assert.deepEqual(h.executor.starts.map((s) => s.taskId), ["a", "b"]);
    const [spent] = h.audit.ofType("run.error_budget_spent");
    assert.deepEqual(spent.details, { finished: 2, failed: 1, budget: 0, min_failures: 0 });
  });
});

Deno.test("run loop: failures with nothing left to start end the run as usual; dependents of a failure count once", async () => {
  await withTempDir(async (dir) => {
    const last = await budgetRun(dir, ["d", "e", "f"]);
    assert.equal(last.outcome.end, "quiescent", "nothing left to pause");
    assert.equal(last.h.audit.ofType("run.error_budget_spent").length, 0);
  });
  await withTempDir(async (dir) => {
    const h = await harness(
      dir,
      [
        draft("a"),
        draft("b", { depends_on: ["a"] }),
        draft("c", { depends_on: ["a"] }),
        draft("d", { depends_on: ["a"] }),
        draft("e"),
      ],
      (taskId) => taskId === "a" ? { fail: "a broke" } : { files: { [`${taskId}.txt`]: "x\n" } },
      () => {},
      1,
    );
    const outcome = await drive(h);
    assert.equal(outcome.end, "quiescent");
    assert.deepEqual(h.executor.starts.map((s) => s.taskId), ["a", "e"]);
    for (const id of ["b", "c", "d"]) assert.equal((await h.store.get(id))?.status, "failed");
    assert.equal(h.audit.ofType("run.error_budget_spent").length, 0);
  });
});
