// The TaskStore conformance suite. Every backend registers it with a factory:
//   runTaskStoreConformance({ name: "jsonl", open: async (ctx) => … });
// Later backends (PostgreSQL, Redis locks) must pass it unchanged.
import assert from "node:assert/strict";
import { FakeClock, type Random, SeededRandom } from "../../src/io/mod.ts";
import {
  canTransition,
  DependenciesUnfinishedError,
  DuplicateTaskError,
  IllegalTransitionError,
  MemoryEventSink,
  RetriesExhaustedError,
  type Task,
  TASK_STATUSES,
  type TaskEvent,
  TaskEventNotRecordedError,
  type TaskEventSink,
  TaskNotActiveError,
  TaskNotFoundError,
  type TaskStatus,
  type TaskStore,
  TaskStoreUnavailableError,
  TaskValidationError,
  UnknownTaskReferenceError,
  VersionConflictError,
} from "../../src/tasks/mod.ts";

/** What a backend factory gets: deterministic time and ids, and the event sink to use. */
export interface HarnessContext {
  /** Fake time. */
  clock: FakeClock;
  /** Seeded randomness. */
  random: Random;
  /** Sink the store must deliver events to. */
  sink: TaskEventSink;
}

/** One opened backend. */
export interface StoreHarness {
  /** The store under test. */
  store: TaskStore;
  /** Durable backends: close the store and open the same storage again. */
  reopen?: () => Promise<TaskStore>;
  /** Removes whatever the backend created. */
  cleanup(): Promise<void>;
}

/** A process that writes to the backend and prints `ack <id> <version> <status>` lines. */
export interface CrashWriter {
  /** argv of the writer (it loops until killed). */
  argv: string[];
  /** Opens the storage again after the writer was killed. */
  reopen(): Promise<TaskStore>;
  /** Removes the storage. */
  cleanup(): Promise<void>;
}

/** A backend under test. */
export interface BackendFactory {
  /** Name shown in test names. */
  name: string;
  /** Opens a fresh, empty store. */
  open(ctx: HarnessContext): Promise<StoreHarness>;
  /** Durable backends: a writer process for the kill -9 test. */
  crashWriter?: () => Promise<CrashWriter>;
}

interface Ctx extends HarnessContext {
  store: TaskStore;
  events: TaskEvent[];
  harness: StoreHarness;
}

const OP = { actor: "test", reason: "because" };

async function withStore(
  factory: BackendFactory,
  fn: (ctx: Ctx) => Promise<void>,
  sinkOverride?: TaskEventSink,
): Promise<void> {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  const random = new SeededRandom(42);
  const memory = new MemoryEventSink();
  const harness = await factory.open({ clock, random, sink: sinkOverride ?? memory });
  try {
    await fn({ clock, random, sink: memory, store: harness.store, events: memory.events, harness });
  } finally {
    await harness.store.close();
    await harness.cleanup();
  }
}

/** Drives a fresh task to `status` through legal transitions only. */
export async function taskIn(
  store: TaskStore,
  status: TaskStatus,
  extra: { title?: string } = {},
): Promise<Task> {
  const title = extra.title ?? `task in ${status}`;
  if (status === "planned") return await store.create({ title, role: "dev", status }, OP);
  let t = await store.create({ title, role: "dev", max_retries: 1 }, OP);
  const go = async (to: TaskStatus, more: Record<string, unknown> = {}) =>
    t = await store.transition(t.id, to, { ...OP, ...more });
  if (status === "open") return t;
  if (status === "cancelled") return await go("cancelled");
  t = await store.claim(t.id, { agent: "a1", expectedVersion: t.version });
  if (status === "claimed") return t;
  if (status === "orphaned") return await go("orphaned");
  await go("in_progress");
  if (status === "in_progress") return t;
  if (status === "blocked") return await go("blocked");
  if (status === "waiting_for_subtasks") return await go("waiting_for_subtasks");
  if (status === "failed") return await go("failed");
  await go("done", { result_summary: "did it" });
  if (status === "done") return t;
  return await go("closed");
}

/** Registers every conformance test for `factory`. */
export function runTaskStoreConformance(factory: BackendFactory): void {
  const test = (name: string, fn: (ctx: Ctx) => Promise<void>) =>
    Deno.test(`[${factory.name}] ${name}`, () => withStore(factory, fn));

  test("create fills defaults, version 1, clock times and records a created event", async (c) => {
    const t = await c.store.create({ title: "Parse input", role: "backend" }, {
      actor: "planner",
    });
    assert.match(t.id, /^t-[0-9a-z]{26}$/);
    assert.equal(t.status, "open");
    assert.equal(t.version, 1);
    assert.equal(t.priority, 2);
    assert.equal(t.max_retries, 2);
    assert.equal(t.retry_count, 0);
    assert.equal(t.scope, "medium");
    assert.equal(t.complexity, "medium");
    assert.deepEqual(t.depends_on, []);
    assert.equal(t.parent_task_id, null);
    assert.equal(t.assigned_agent, null);
    assert.equal(t.created_at, "2026-01-01T00:00:00.000Z");
    assert.equal(t.updated_at, t.created_at);
    assert.deepEqual(await c.store.get(t.id), t);
    assert.equal(c.events.length, 1);
    assert.deepEqual(
      {
        type: c.events[0].type,
        id: c.events[0].resource_id,
        actor: c.events[0].actor,
        to: c.events[0].to,
      },
      { type: "task.created", id: t.id, actor: "planner", to: "open" },
    );
  });

  test("create keeps an explicit id and refuses a duplicate", async (c) => {
    const t = await c.store.create({ id: "step-1", title: "x", role: "dev" }, OP);
    assert.equal(t.id, "step-1");
    await assert.rejects(
      c.store.create({ id: "step-1", title: "y", role: "dev" }, OP),
      (e: unknown) => e instanceof DuplicateTaskError && e.code === "task.duplicate_id",
    );
    assert.equal((await c.store.list()).length, 1);
  });

  test("generated ids increase in creation order within one millisecond", async (c) => {
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push((await c.store.create({ title: `t${i}`, role: "r" }, OP)).id);
    }
    assert.deepEqual([...ids].sort(), ids);
    assert.equal(new Set(ids).size, 20);
  });

  test("create refuses bad drafts naming the field, and stores nothing", async (c) => {
    const cases: [unknown, string, string][] = [
      [{ role: "dev" }, "task.invalid", "title"],
      [{ title: "x", role: "dev", scope: "huge" }, "task.invalid", "scope"],
      [{ title: "x", role: "dev", priority: 0 }, "task.invalid", "priority"],
      [
        { title: "x", role: "dev", owned_files: ["../etc/passwd"] },
        "task.invalid",
        "owned_files[0]",
      ],
      [
        { title: "x", role: "dev", depends_on: ["nope"] },
        "task.unknown_reference",
        "depends_on[0]",
      ],
      [
        { title: "x", role: "dev", parent_task_id: "nope" },
        "task.unknown_reference",
        "parent_task_id",
      ],
      [{ title: "x", role: "dev", colour: "red" }, "task.invalid", "colour"],
      [{ title: "x", role: "dev", status: "done" }, "task.invalid", "status"],
      [{ title: "x", role: "dev", id: "../x" }, "task.invalid", "id"],
      [
        { title: "x", role: "dev", completion_signals: [{ kind: "magic" }] },
        "task.invalid",
        "completion_signals[0].kind",
      ],
    ];
    for (const [draft, code, location] of cases) {
      await assert.rejects(
        // deno-lint-ignore no-explicit-any
        c.store.create(draft as any, OP),
        (e: unknown) => {
          const err = e as { code?: string; location?: string };
          assert.equal(err.code, code, JSON.stringify(draft));
          assert.equal(err.location ?? "", location, JSON.stringify(draft));
          return true;
        },
      );
    }
    assert.deepEqual(await c.store.list(), []);
    assert.equal(c.events.length, 0);
  });

  test("createMany is all-or-nothing and may depend on earlier drafts of the batch", async (c) => {
    await assert.rejects(
      c.store.createMany([
        { id: "a", title: "a", role: "dev" },
        { id: "b", title: "b", role: "dev", depends_on: ["a"] },
        { id: "c", title: "", role: "dev" },
      ], OP),
      (e: unknown) => e instanceof TaskValidationError && e.location === "[2].title",
    );
    assert.deepEqual(await c.store.list(), []);
    await assert.rejects(
      c.store.createMany([
        { id: "a", title: "a", role: "dev", depends_on: ["b"] },
        { id: "b", title: "b", role: "dev" },
      ], OP),
      (e: unknown) => e instanceof UnknownTaskReferenceError && e.location === "[0].depends_on[0]",
    );
    const made = await c.store.createMany([
      { id: "a", title: "a", role: "dev" },
      { id: "b", title: "b", role: "dev", depends_on: ["a"] },
    ], OP);
    assert.deepEqual(made.map((t) => t.id), ["a", "b"]);
    assert.deepEqual((await c.store.list()).map((t) => t.id), ["a", "b"]);
    assert.equal(c.events.length, 2);
  });

  test("get of an unknown id is undefined; transitions of it are task.not_found", async (c) => {
    assert.equal(await c.store.get("missing"), undefined);
    await assert.rejects(c.store.transition("missing", "open", OP), TaskNotFoundError);
    await assert.rejects(
      c.store.progress("missing", { actor: "a", message: "m" }),
      TaskNotFoundError,
    );
    await assert.rejects(
      c.store.claim("missing", { agent: "a", expectedVersion: 1 }),
      TaskNotFoundError,
    );
  });

  test("list filters by status, several statuses, role, parent and ids, oldest first", async (c) => {
    const p = await c.store.create({ id: "p", title: "parent", role: "manager" }, OP);
    c.clock.advance(1000);
    const a = await c.store.create({ id: "z-a", title: "a", role: "dev", parent_task_id: "p" }, OP);
    c.clock.advance(1000);
    const b = await c.store.create({ id: "a-b", title: "b", role: "qa", parent_task_id: "p" }, OP);
    await c.store.transition(b.id, "cancelled", OP);
    const ids = async (f: Parameters<TaskStore["list"]>[0]) =>
      (await c.store.list(f)).map((t) => t.id);
    assert.deepEqual(await ids({}), ["p", "z-a", "a-b"]);
    assert.deepEqual(await ids({ status: "open" }), ["p", "z-a"]);
    assert.deepEqual(await ids({ status: ["cancelled", "open"] }), ["p", "z-a", "a-b"]);
    assert.deepEqual(await ids({ role: "dev" }), [a.id]);
    assert.deepEqual(await ids({ parent_task_id: p.id }), ["z-a", "a-b"]);
    assert.deepEqual(await ids({ parent_task_id: p.id, status: "open" }), ["z-a"]);
    assert.deepEqual(await ids({ ids: ["a-b", "nope", "p"] }), ["p", "a-b"]);
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      c.store.list({ status: "finished" as any }),
      (e: unknown) => e instanceof TaskValidationError && e.location === "status",
    );
  });

  test("claimNext takes priority first, then age, then creation order; skips other roles", async (c) => {
    await c.store.create({ id: "low-old", title: "x", role: "dev", priority: 3 }, OP);
    c.clock.advance(10);
    await c.store.create({ id: "zz-high-first", title: "x", role: "dev", priority: 1 }, OP);
    await c.store.create({ id: "aa-high-second", title: "x", role: "dev", priority: 1 }, OP);
    await c.store.create({ id: "other-role", title: "x", role: "qa", priority: 1 }, OP);
    c.clock.advance(10);
    await c.store.create({ id: "high-newer", title: "x", role: "dev", priority: 1 }, OP);
    const order: string[] = [];
    for (;;) {
      const t = await c.store.claimNext("dev", { agent: "s1" });
      if (t === undefined) break;
      assert.equal(t.status, "claimed");
      assert.equal(t.assigned_agent, "s1");
      order.push(t.id);
    }
    assert.deepEqual(order, ["zz-high-first", "aa-high-second", "high-newer", "low-old"]);
    assert.equal((await c.store.get("other-role"))?.status, "open");
    assert.equal((await c.store.claimNext(undefined, { agent: "s2" }))?.id, "other-role");
    assert.equal(await c.store.claimNext(undefined, { agent: "s2" }), undefined);
  });

  test("a released task keeps its place in claim order", async (c) => {
    const first = await c.store.create({ id: "zz-first", title: "x", role: "dev" }, OP);
    await c.store.create({ id: "aa-second", title: "x", role: "dev" }, OP);
    const claimed = await c.store.claimNext("dev", { agent: "s" });
    assert.equal(claimed?.id, first.id);
    await c.store.transition(first.id, "open", { actor: "orchestrator", reason: "agent died" });
    assert.equal((await c.store.claimNext("dev", { agent: "s" }))?.id, first.id);
    assert.deepEqual((await c.store.list()).map((t) => t.id), ["zz-first", "aa-second"]);
  });

  test("claimNext waits until every dependency is closed; planned tasks are never claimed", async (c) => {
    const dep = await c.store.create({ id: "dep", title: "dep", role: "dev", priority: 5 }, OP);
    await c.store.create({
      id: "child",
      title: "child",
      role: "dev",
      priority: 1,
      depends_on: ["dep"],
    }, OP);
    await c.store.create({ id: "plan", title: "later", role: "dev", status: "planned" }, OP);
    const first = await c.store.claimNext("dev", { agent: "s" });
    assert.equal(first?.id, "dep");
    assert.equal(await c.store.claimNext("dev", { agent: "s" }), undefined);
    await c.store.transition(dep.id, "in_progress", OP);
    await c.store.transition(dep.id, "done", OP);
    assert.equal(await c.store.claimNext("dev", { agent: "s" }), undefined, "done is not merged");
    await c.store.transition(dep.id, "closed", OP);
    assert.equal((await c.store.claimNext("dev", { agent: "s" }))?.id, "child");
    assert.equal(await c.store.claimNext("dev", { agent: "s" }), undefined);
  });

  test("claim by id checks the version, readiness and state", async (c) => {
    const dep = await c.store.create({ id: "d", title: "d", role: "dev" }, OP);
    const t = await c.store.create({ id: "t", title: "t", role: "dev", depends_on: ["d"] }, OP);
    await assert.rejects(
      c.store.claim(t.id, { agent: "s", expectedVersion: t.version }),
      (e: unknown) =>
        e instanceof DependenciesUnfinishedError && e.pending.join() === "d" &&
        e.code === "task.dependencies_unfinished",
    );
    await assert.rejects(
      c.store.claim(dep.id, { agent: "s", expectedVersion: 7 }),
      (e: unknown) => e instanceof VersionConflictError && e.actual === 1 && e.expected === 7,
    );
    const claimed = await c.store.claim(dep.id, { agent: "s", expectedVersion: 1 });
    assert.equal(claimed.version, 2);
    assert.equal(claimed.assigned_agent, "s");
    await assert.rejects(
      c.store.claim(dep.id, { agent: "s2", expectedVersion: 2 }),
      (e: unknown) => e instanceof IllegalTransitionError && e.from === "claimed",
    );
    assert.equal((await c.store.get(dep.id))?.assigned_agent, "s");
  });

  test("concurrent claimNext from many callers never claims a task twice", async (c) => {
    await c.store.createMany(
      Array.from({ length: 20 }, (_, i) => ({ title: `t${i}`, role: "dev" })),
      OP,
    );
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => c.store.claimNext("dev", { agent: `agent-${i}` })),
    );
    const claimed = results.filter((t) => t !== undefined) as Task[];
    assert.equal(claimed.length, 20);
    assert.equal(new Set(claimed.map((t) => t.id)).size, 20);
    const stored = await c.store.list({ status: "claimed" });
    assert.equal(stored.length, 20);
    for (const t of claimed) {
      assert.equal(stored.find((s) => s.id === t.id)?.assigned_agent, t.assigned_agent);
    }
    assert.equal(c.events.filter((e) => e.to === "claimed").length, 20);
  });

  test("concurrent claims of one version: exactly one wins, the rest conflict", async (c) => {
    const t = await c.store.create({ title: "contested", role: "dev" }, OP);
    const outcomes = await Promise.allSettled(
      Array.from(
        { length: 10 },
        (_, i) => c.store.claim(t.id, { agent: `a${i}`, expectedVersion: t.version }),
      ),
    );
    const won = outcomes.filter((o) => o.status === "fulfilled");
    assert.equal(won.length, 1);
    for (const o of outcomes) {
      if (o.status === "rejected") assert.ok(o.reason instanceof VersionConflictError);
    }
  });

  test("every pair of statuses: legal transitions succeed, illegal ones are typed errors", async (c) => {
    let checked = 0;
    for (const from of TASK_STATUSES) {
      for (const to of TASK_STATUSES) {
        const t = await taskIn(c.store, from);
        assert.equal(t.status, from);
        const options = { ...OP, agent: "a2", result_summary: "ok" };
        if (canTransition(from, to)) {
          const after = await c.store.transition(t.id, to, options);
          assert.equal(after.status, to, `${from} → ${to}`);
          assert.equal(after.version, t.version + 1);
        } else {
          await assert.rejects(
            c.store.transition(t.id, to, options),
            (e: unknown) =>
              e instanceof IllegalTransitionError && e.from === from && e.to === to &&
              e.code === "task.illegal_transition",
            `${from} → ${to} must be refused`,
          );
          assert.equal((await c.store.get(t.id))?.version, t.version, "refusal changes nothing");
        }
        checked++;
      }
    }
    assert.equal(checked, TASK_STATUSES.length ** 2);
  });

  test("transition side effects: summary, terminal reason, release clears the agent", async (c) => {
    const done = await taskIn(c.store, "done");
    assert.equal(done.result_summary, "did it");
    assert.equal(done.assigned_agent, "a1");
    const failed = await c.store.transition(done.id, "failed", {
      actor: "gate",
      reason: "tests failed",
    });
    assert.equal(failed.terminal_reason, "tests failed");
    const blocked = await taskIn(c.store, "in_progress");
    const b = await c.store.transition(blocked.id, "blocked", {
      ...OP,
      terminal_reason: "needs an API key",
    });
    assert.equal(b.terminal_reason, "needs an API key");
    const reopened = await c.store.transition(b.id, "open", OP);
    assert.equal(reopened.assigned_agent, null);
    assert.equal(reopened.terminal_reason, null);
    await assert.rejects(
      c.store.transition(reopened.id, "claimed", OP),
      (e: unknown) => e instanceof TaskValidationError && e.location === "agent",
    );
  });

  test("a transition with a stale expectedVersion is refused", async (c) => {
    const t = await taskIn(c.store, "in_progress");
    await assert.rejects(
      c.store.transition(t.id, "done", { ...OP, expectedVersion: t.version - 1 }),
      VersionConflictError,
    );
    const ok = await c.store.transition(t.id, "done", { ...OP, expectedVersion: t.version });
    assert.equal(ok.status, "done");
  });

  test("retry of a failed task counts up to max_retries, then is refused", async (c) => {
    let t = await c.store.create({ title: "flaky", role: "dev", max_retries: 2 }, OP);
    for (let attempt = 1; attempt <= 2; attempt++) {
      t = await c.store.claim(t.id, { agent: "a", expectedVersion: t.version });
      t = await c.store.transition(t.id, "failed", OP);
      t = await c.store.transition(t.id, "open", { actor: "orchestrator", reason: "retry" });
      assert.equal(t.retry_count, attempt);
    }
    t = await c.store.claim(t.id, { agent: "a", expectedVersion: t.version });
    t = await c.store.transition(t.id, "failed", OP);
    await assert.rejects(
      c.store.transition(t.id, "open", OP),
      (e: unknown) => e instanceof RetriesExhaustedError && e.code === "task.retries_exhausted",
    );
    assert.equal((await c.store.get(t.id))?.status, "failed");
  });

  test("actor and reason are required on every change", async (c) => {
    const t = await c.store.create({ title: "x", role: "dev" }, OP);
    await assert.rejects(
      c.store.transition(t.id, "cancelled", { actor: "x", reason: " " }),
      (e: unknown) => e instanceof TaskValidationError && e.location === "reason",
    );
    await assert.rejects(
      c.store.transition(t.id, "cancelled", { actor: "", reason: "r" }),
      (e: unknown) => e instanceof TaskValidationError && e.location === "actor",
    );
    await assert.rejects(
      // deno-lint-ignore no-explicit-any
      c.store.transition(t.id, "finished" as any, OP),
      (e: unknown) => e instanceof TaskValidationError && e.location === "to",
    );
    assert.equal((await c.store.get(t.id))?.status, "open");
  });

  test("progress is recorded for claimed and running tasks only", async (c) => {
    const open = await c.store.create({ title: "x", role: "dev" }, OP);
    await assert.rejects(
      c.store.progress(open.id, { actor: "agent:a", message: "hi" }),
      TaskNotActiveError,
    );
    const running = await taskIn(c.store, "in_progress");
    c.clock.advance(5000);
    const after = await c.store.progress(running.id, {
      actor: "agent:a1",
      message: "tests written",
      percent: 40,
    });
    assert.equal(after.status, "in_progress");
    assert.equal(after.version, running.version + 1);
    assert.equal(after.updated_at, "2026-01-01T00:00:05.000Z");
    const e = c.events.at(-1);
    assert.equal(e?.type, "task.progress");
    assert.deepEqual(e?.details, { message: "tests written", percent: 40 });
    await assert.rejects(
      c.store.progress(running.id, { actor: "a", message: "m", percent: 101 }),
      (err: unknown) => err instanceof TaskValidationError && err.location === "percent",
    );
    await assert.rejects(
      c.store.progress(running.id, { actor: "a", message: "" }),
      (err: unknown) => err instanceof TaskValidationError && err.location === "message",
    );
  });

  test("attachment digests are stamped on an active task, survive a reopen, and record an event", async (c) => {
    const d1 = "a".repeat(64);
    const d2 = "b".repeat(64);
    const open = await c.store.create({ title: "x", role: "dev", metadata: { stage: "s" } }, OP);
    await assert.rejects(
      c.store.stampAttachments(open.id, { actor: "orchestrator", session: "s1", digests: [d1] }),
      TaskNotActiveError,
    );
    const claimed = await taskIn(c.store, "claimed");
    const after = await c.store.stampAttachments(claimed.id, {
      actor: "orchestrator",
      session: "s1",
      digests: [d1, d2],
    });
    assert.equal(after.status, "claimed");
    assert.equal(after.version, claimed.version + 1);
    assert.deepEqual(after.metadata.attachment_digests, [d1, d2]);
    assert.equal(after.metadata.attachment_session, "s1");
    const e = c.events.at(-1);
    assert.equal(e?.type, "task.attachments");
    assert.deepEqual(e?.details, { session: "s1", attachment_digests: [d1, d2] });
    await assert.rejects(
      c.store.stampAttachments(claimed.id, { actor: "o", session: "s1", digests: ["ABC"] }),
      (err: unknown) => err instanceof TaskValidationError && err.location === "digests",
    );
    if (c.harness.reopen) {
      const again = await c.harness.reopen();
      c.store = again;
      c.harness.store = again;
      assert.deepEqual((await again.get(claimed.id))?.metadata.attachment_digests, [d1, d2]);
    }
  });

  test("releaseStaleClaims reopens only claims idle past the limit, unless kept", async (c) => {
    const old = await taskIn(c.store, "in_progress", { title: "old" });
    const kept = await taskIn(c.store, "claimed", { title: "kept" });
    const waiting = await taskIn(c.store, "waiting_for_subtasks", { title: "waiting" });
    c.clock.advance(60_000);
    const fresh = await taskIn(c.store, "claimed", { title: "fresh" });
    c.clock.advance(1_000);
    const released = await c.store.releaseStaleClaims({
      olderThanMs: 30_000,
      actor: "orchestrator",
      reason: "no heartbeat",
      keep: (t) => t.id === kept.id,
    });
    assert.deepEqual(released.map((t) => t.id), [old.id]);
    assert.equal(released[0].status, "open");
    assert.equal(released[0].assigned_agent, null);
    assert.equal((await c.store.get(kept.id))?.status, "claimed");
    assert.equal((await c.store.get(fresh.id))?.status, "claimed");
    assert.equal((await c.store.get(waiting.id))?.status, "waiting_for_subtasks");
    const e = c.events.at(-1);
    assert.deepEqual([e?.from, e?.to, e?.actor, e?.reason, e?.details.released_agent], [
      "in_progress",
      "open",
      "orchestrator",
      "no heartbeat",
      "a1",
    ]);
  });

  test("each change delivers one event, in order, with actor and reason", async (c) => {
    const t = await c.store.create({ title: "x", role: "dev" }, { actor: "planner" });
    await c.store.claim(t.id, { agent: "s1", expectedVersion: 1 });
    await c.store.transition(t.id, "in_progress", { actor: "orchestrator", reason: "spawned" });
    await c.store.progress(t.id, { actor: "agent:s1", message: "half" });
    await c.store.transition(t.id, "done", {
      actor: "agent:s1",
      reason: "reported",
      result_summary: "ok",
    });
    assert.deepEqual(
      c.events.map((e) => [e.type, e.actor, e.reason, e.from, e.to, e.version]),
      [
        ["task.created", "planner", "created", null, "open", 1],
        ["task.transition", "agent:s1", "claimed", "open", "claimed", 2],
        ["task.transition", "orchestrator", "spawned", "claimed", "in_progress", 3],
        ["task.progress", "agent:s1", "progress", "in_progress", "in_progress", 4],
        ["task.transition", "agent:s1", "reported", "in_progress", "done", 5],
      ],
    );
    assert.deepEqual(c.events[4].details, { result_summary: "ok" });
  });

  test("events of concurrent changes arrive in commit order", async (c) => {
    await c.store.createMany(
      Array.from({ length: 30 }, (_, i) => ({ title: `${i}`, role: "r" })),
      OP,
    );
    c.events.length = 0;
    const claims = await Promise.all(
      Array.from({ length: 30 }, (_, i) => c.store.claimNext("r", { agent: `a${i}` })),
    );
    assert.deepEqual(
      c.events.map((e) => e.resource_id),
      claims.map((t) => t?.id),
    );
  });

  test("returned tasks are frozen: callers cannot edit the store's copy", async (c) => {
    const t = await c.store.create({ title: "x", role: "dev", metadata: { k: [1] } }, OP);
    assert.throws(() => {
      (t as { title: string }).title = "changed";
    }, TypeError);
    assert.throws(() => (t.metadata.k as number[]).push(2), TypeError);
    assert.equal((await c.store.get(t.id))?.title, "x");
  });

  test("close makes further calls fail with task.store_unavailable", async (c) => {
    await c.store.create({ title: "x", role: "dev" }, OP);
    await c.store.close();
    await assert.rejects(c.store.list(), TaskStoreUnavailableError);
    await assert.rejects(
      c.store.create({ title: "y", role: "dev" }, OP),
      TaskStoreUnavailableError,
    );
    await c.store.close();
  });

  Deno.test(`[${factory.name}] a refusing event sink fails the call but the change stays`, async () => {
    let refuse = false;
    const sink: TaskEventSink = {
      append: () => {
        if (refuse) throw new Error("audit disk full");
      },
    };
    await withStore(factory, async (c) => {
      const t = await c.store.create({ title: "x", role: "dev" }, OP);
      refuse = true;
      await assert.rejects(
        c.store.transition(t.id, "cancelled", OP),
        (e: unknown) => e instanceof TaskEventNotRecordedError && /audit disk full/.test(e.message),
      );
      refuse = false;
      assert.equal((await c.store.get(t.id))?.status, "cancelled");
    }, sink);
  });

  Deno.test(`[${factory.name}] state survives close and reopen (durable backends)`, {
    ignore: factory.name === "memory",
  }, async () => {
    await withStore(factory, async (c) => {
      assert.ok(c.harness.reopen, `${factory.name} must provide reopen`);
      const a = await taskIn(c.store, "done");
      const b = await c.store.create({
        title: "b",
        role: "qa",
        depends_on: [a.id],
        metadata: { n: 1 },
      }, OP);
      const before = await c.store.list();
      const again = await c.harness.reopen();
      c.store = again;
      c.harness.store = again;
      assert.deepEqual(await again.list(), before);
      assert.equal((await again.get(b.id))?.version, 1);
      const next = await again.create({ title: "c", role: "dev" }, OP);
      assert.ok(next.id > b.id, "ids keep increasing after reopen");
    });
  });

  if (factory.crashWriter !== undefined) {
    const makeWriter = factory.crashWriter;
    Deno.test(`[${factory.name}] kill -9 mid-write loses nothing that was acknowledged`, async () => {
      const writer = await makeWriter();
      try {
        const acked = await runAndKill(writer.argv, 400);
        assert.ok(acked.size > 0, "the writer acknowledged writes before it was killed");
        const store = await writer.reopen();
        try {
          for (const [id, ack] of acked) {
            const t = await store.get(id);
            assert.ok(t !== undefined, `acknowledged task ${id} is missing`);
            assert.ok(
              t.version >= ack.version,
              `${id}: version ${t.version} < acked ${ack.version}`,
            );
            if (t.version === ack.version) assert.equal(t.status, ack.status);
          }
          // The store is usable after recovery.
          const more = await store.create({ title: "after crash", role: "dev" }, OP);
          assert.equal((await store.get(more.id))?.status, "open");
        } finally {
          await store.close();
        }
      } finally {
        await writer.cleanup();
      }
    });
  }
}

/**
 * Runs `argv`, reads `ack <id> <version> <status>` lines until `minAcks` arrived, SIGKILLs it
 * and returns the highest acknowledged version of every task (complete lines only).
 */
async function runAndKill(
  argv: string[],
  minAcks: number,
): Promise<Map<string, { version: number; status: string }>> {
  const child = new Deno.Command(argv[0], {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const acked = new Map<string, { version: number; status: string }>();
  let count = 0;
  let buffer = "";
  let killed = false;
  const decoder = new TextDecoder();
  const stderr = new Response(child.stderr).text();
  for await (const chunk of child.stdout) {
    buffer += decoder.decode(chunk, { stream: true });
    let nl: number;
    while ((nl = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      const m = /^ack (\S+) (\d+) (\S+)$/.exec(line);
      if (!m) continue;
      const version = Number(m[2]);
      if ((acked.get(m[1])?.version ?? 0) < version) acked.set(m[1], { version, status: m[3] });
      count++;
    }
    if (!killed && count >= minAcks) {
      child.kill("SIGKILL");
      killed = true;
    }
  }
  const status = await child.status;
  if (!killed) throw new Error(`writer exited by itself (${status.code}): ${await stderr}`);
  assert.equal(status.signal, "SIGKILL");
  return acked;
}
