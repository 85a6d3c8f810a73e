// Stopping a run when what it waits for never comes: an agent whose exit never arrives after
// it was told to stop (a worker host killed mid-task, a hostile agent), a merge that hangs.
// The stop must end after its documented bound on the run's clock (the fake one here: time
// moves only when the test moves it, and the test moves it only once the stop sleeps).
import assert from "node:assert/strict";
import { join } from "node:path";
import { MemoryAuditSink } from "../../src/audit/mod.ts";
import { type Config, requireConfig } from "../../src/config/mod.ts";
import { FakeClock, mapEnv, SeededRandom, spawnProcess } from "../../src/io/mod.ts";
import type { Execution } from "../../src/orchestrator/executor.ts";
import type { MergeQueue } from "../../src/orchestrator/merge_queue.ts";
import { Recorder } from "../../src/orchestrator/recorder.ts";
import { BackgroundWork, SessionTable } from "../../src/orchestrator/sessions.ts";
import { type RunStop, Stopping } from "../../src/orchestrator/stopping.ts";
import { createMemoryTaskStore } from "../../src/tasks/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { guard, until } from "../_helpers/wait.ts";

/**
 * A fake clock that knows, at every moment, whether someone sleeps on it: a sleep leaves the
 * count the moment it is woken or aborted, so a driver never moves time past a wake-up.
 */
class WatchedClock extends FakeClock {
  #sleepers: { until: number; wake: () => void }[] = [];
  #onSleep: (() => void)[] = [];

  override sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const sleeper = { until: this.nowMs() + ms, wake: resolve };
      this.#sleepers.push(sleeper);
      signal?.addEventListener("abort", () => {
        this.#sleepers = this.#sleepers.filter((s) => s !== sleeper);
        resolve();
      }, { once: true });
      for (const wake of this.#onSleep.splice(0)) wake();
    });
  }

  override advance(ms: number): void {
    super.advance(ms);
    const due = this.#sleepers.filter((s) => s.until <= this.nowMs());
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.nowMs());
    for (const s of due) s.wake();
  }

  /** Resolves once someone sleeps (at once when someone does already). */
  sleeping(): Promise<void> {
    if (this.#sleepers.length > 0) return Promise.resolve();
    return new Promise((resolve) => this.#onSleep.push(resolve));
  }
}

interface Scene {
  stopping: Stopping;
  sessions: SessionTable;
  /** Each fact recorded, with the fake time it was recorded at. */
  facts: { kind: string; atMs: number }[];
  clock: WatchedClock;
  audit: MemoryAuditSink;
  terminated: string[];
  store: ReturnType<typeof createMemoryTaskStore>;
}

/**
 * One task in progress with one live session. Its agent ignores its stop (`terminate`
 * returns, its exit never comes, so the watch tracked for it never settles) unless
 * `exitsOnStop`.
 */
async function scene(
  dir: string,
  merges: Pick<MergeQueue, "drained">,
  exitsOnStop = false,
  joinsLate = false,
): Promise<Scene> {
  const env = mapEnv({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", HOME: dir });
  const config = structuredClone((await requireConfig({ cwd: dir, env })).config) as Config;
  config.tuning.agent.kill_grace_s = 10;
  config.tuning.orchestrator.drain_timeout_s = 60;
  const clock = new WatchedClock();
  const store = createMemoryTaskStore({ clock, random: new SeededRandom(3) });
  await store.createMany([{ id: "t", title: "t", role: "backend" }], { actor: "test" });
  await store.transition("t", "claimed", { actor: "orchestrator", agent: "s1", reason: "x" });
  const task = await store.transition("t", "in_progress", {
    actor: "orchestrator",
    holder: "s1",
    reason: "started",
  });
  const audit = new MemoryAuditSink({ clock });
  const sdd = join(dir, ".sdd");
  const recorder = new Recorder({
    audit,
    ledger: { append: () => Promise.resolve() },
    reporter: { event: () => {} },
    sdd,
  });
  const facts: Scene["facts"] = [];
  recorder.on((fact) => facts.push({ kind: fact.kind, atMs: clock.nowMs() }));
  const sessions = new SessionTable(sdd);
  const work = new BackgroundWork(() => {}, () => {});
  const terminated: string[] = [];
  let exited: () => void = () => {};
  const exit = new Promise<void>((resolve) => (exited = resolve));
  const execution = {
    session: "s1",
    pid: 999_999,
    terminate: (_grace: number) => {
      terminated.push("s1");
      if (exitsOnStop) exited();
      return Promise.resolve();
    },
  } as Partial<Execution> as Execution;
  const joinTable = () => {
    sessions.add({
      session: "s1",
      task,
      execution,
      adapterName: "scripted",
      agentId: "scripted:s1",
      startedMs: 0,
      file: {
        session: "s1",
        task_id: "t",
        adapter: "scripted",
        model: null,
        agent_id: "scripted:s1",
        worktree: join(dir, "wt"),
        branch: "agent/s1",
        base_sha: "0".repeat(40),
        pid: 999_999,
        started_at: "2026-01-01T00:00:00.000Z",
        state: "running",
        attachment_digests: [],
      },
      worktree: join(dir, "wt"),
      branch: "agent/s1",
      baseSha: "0".repeat(40),
      state: "running",
    });
    // The agent's watch: it waits for the exit.
    work.track(work.waiting(exit));
  };
  if (joinsLate) {
    // Its start is still being recorded (a spawn in flight, tracked): it joins 1 s later.
    work.track(clock.sleep(1000).then(joinTable));
  } else {
    joinTable();
  }
  const stopping = new Stopping({
    ctx: { config, clock, runId: "calm-otter-0a1b2c" },
    store,
    recorder,
    sessions,
    work,
    merges: merges as MergeQueue,
    wake: () => {},
  });
  return { stopping, sessions, clock, audit, terminated, store, facts };
}

/** Fake-clock ms from the stop's request to each later fact of `kind`. */
function msUntil(s: Scene, kind: string): number[] {
  const asked = s.facts.find((f) => f.kind === "run.stop_requested");
  assert.ok(asked !== undefined, "the stop request is recorded");
  return s.facts.filter((f) => f.kind === kind).map((f) => f.atMs - asked.atMs);
}

/** Carries out the stop, moving the fake clock only while the stop sleeps on it. */
async function stopWhileTimeMoves(s: Scene, stepMs: number): Promise<RunStop> {
  let ended = false;
  const stop = s.stopping.drain().finally(() => (ended = true));
  for (let steps = 0; !ended; steps++) {
    assert.ok(steps < 1000, "the stop did not end");
    await Promise.race([s.clock.sleeping(), stop]);
    // What was already due runs before time moves (a macrotask turn drains every microtask).
    await new Promise((resolve) => setTimeout(resolve, 0));
    if (!ended) s.clock.advance(stepMs);
  }
  return await stop;
}

Deno.test("stopping: a forced stop whose agent's exit never comes ends after kill_grace_s + 10 s, abandons the task and records what it left", async () => {
  await withTempDir(async (dir) => {
    const s = await scene(dir, { drained: () => Promise.resolve() });
    s.stopping.request("SIGTERM received", true);
    const stop = await stopWhileTimeMoves(s, 1000);
    assert.equal(stop.end, "stopped");
    assert.deepEqual(s.terminated, ["s1"]);
    assert.deepEqual(msUntil(s, "run.stop_unsettled"), [20_000], "kill_grace_s + 10 s, no more");
    const [left] = s.audit.ofType("run.stop_unsettled");
    assert.deepEqual(left.details, { what: "agent watches and checks", waited_s: 20 });
    assert.equal((await s.store.get("t"))?.status, "failed");
    assert.deepEqual(msUntil(s, "task.abandoned"), [20_000]);
  });
});

Deno.test("stopping: a draining stop kills after drain_timeout_s; a merge that never ends is left after kill_grace_s + 10 s", async () => {
  await withTempDir(async (dir) => {
    const s = await scene(dir, { drained: () => new Promise<never>(() => {}) });
    s.stopping.request("SIGTERM received");
    const stop = await stopWhileTimeMoves(s, 500);
    assert.equal(stop.end, "stopped");
    // The 60 s drain, 20 s for the watches, then 20 s for the merge.
    assert.deepEqual(msUntil(s, "run.stop_unsettled"), [80_000, 100_000]);
    assert.deepEqual(msUntil(s, "task.abandoned"), [80_000]);
    assert.deepEqual(
      s.audit.ofType("run.stop_unsettled").map((r) => r.details.what),
      ["agent watches and checks", "merges in progress"],
    );
    assert.equal(s.audit.ofType("run.stop_requested").length, 1);
  });
});

Deno.test("stopping: an agent that dies when told ends the stop at once, with no unsettled record", async () => {
  await withTempDir(async (dir) => {
    const s = await scene(dir, { drained: () => Promise.resolve() }, true);
    s.stopping.request("operator", true);
    const stop = await stopWhileTimeMoves(s, 1000);
    assert.equal(stop.end, "stopped");
    assert.deepEqual(msUntil(s, "task.abandoned"), [0], "no time had to pass");
    assert.deepEqual(s.audit.ofType("run.stop_unsettled"), []);
    assert.equal((await s.store.get("t"))?.status, "failed");
  });
});

Deno.test("stopping: an agent whose start was still being recorded when the stop came is stopped too", async () => {
  await withTempDir(async (dir) => {
    for (const force of [true, false]) {
      const s = await scene(
        join(dir, String(force)),
        { drained: () => Promise.resolve() },
        true,
        true,
      );
      s.stopping.request("SIGTERM received", force);
      const stop = await stopWhileTimeMoves(s, 1000);
      assert.equal(stop.end, "stopped");
      assert.deepEqual(s.terminated, ["s1"], `stopped (force ${force})`);
      assert.deepEqual(s.audit.ofType("run.stop_unsettled"), []);
      assert.equal((await s.store.get("t"))?.status, "failed");
    }
  });
});

Deno.test({
  name:
    "stopping: a run ended at once kills the group of an agent whose start is still being recorded",
  ignore: Deno.build.os !== "linux", // process groups
  fn: async () => {
    await withTempDir(async (dir) => {
      const s = await scene(dir, { drained: () => Promise.resolve() });
      const ready = join(dir, "ready");
      // A real agent in a group of its own (as agents run), with a child of its own in it.
      const agent = spawnProcess(["sh", "-c", `sleep 600 & echo $! > ${ready}; exec sleep 600`], {
        env: { PATH: "/usr/bin:/bin" },
        group: "setsid",
      });
      try {
        const child = await until(async () => {
          const text = await Deno.readTextFile(ready).catch(() => "");
          return text.endsWith("\n") ? Number(text) : undefined;
        }, "the agent's child to start");
        const execution = { session: "s2", pid: agent.pid } as Partial<Execution> as Execution;
        s.sessions.startRecording(execution);
        s.stopping.killNow();
        const exit = await guard(agent.done, "the agent to be killed");
        assert.equal(exit.signal, "SIGKILL");
        // Its child went with the group: kill(0) fails once it is gone (a zombie is reaped by
        // init at once, its parent being dead).
        await until(() => {
          try {
            Deno.kill(child, "SIGCONT");
            return undefined;
          } catch {
            return true;
          }
        }, "the agent's child to be gone");
      } finally {
        try {
          Deno.kill(-agent.pid, "SIGKILL");
        } catch {
          // Gone, as it should be.
        }
      }
    });
  },
});

Deno.test("stopping: a storage halt's wait for work is bounded too, and records nothing", async () => {
  await withTempDir(async (dir) => {
    const s = await scene(dir, { drained: () => Promise.resolve() });
    let settled: boolean | undefined;
    const wait = s.stopping.settleWithinGrace(
      "agent watches and checks",
      new Promise(() => {}),
      false,
    )
      .then((v) => (settled = v));
    await s.clock.sleeping();
    s.clock.advance(19_999);
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(settled, undefined, "still within kill_grace_s + 10 s");
    s.clock.advance(1);
    await wait;
    assert.equal(settled, false);
    assert.deepEqual(s.facts, [], "nothing written");
  });
});
