// Claim expiry on every backend (memory, JSONL, PostgreSQL, PostgreSQL + Redis): a heartbeat
// renews a claim; without one the claim is released after the timeout, the task runs once
// elsewhere, and a late result from the old holder is refused (409 at the task server) and
// recorded as a `task.refused` event — never applied twice.
import assert from "node:assert/strict";
import { join } from "node:path";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { FakeClock, SeededRandom } from "../../src/io/mod.ts";
import {
  ClaimLostError,
  createMemoryTaskStore,
  MemoryEventSink,
  openJsonlTaskStore,
  type Task,
  TaskNotFoundError,
  type TaskStore,
} from "../../src/tasks/mod.ts";
import {
  POSTGRES_MISSING,
  REDIS_MISSING,
  startPostgres,
  startRedis,
  type TestServer as ServiceServer,
} from "../_helpers/services.ts";
import { errorCode, startTestServer } from "../server/_server.ts";
import { openTestStore } from "./_shared_store.ts";

const TIMEOUT_MS = DEFAULT_TUNING.orchestrator.stale_claim_timeout_s * 1000;
const OP = { actor: "orchestrator", reason: "test" };

interface Opened {
  store: TaskStore;
  cleanup(): Promise<void>;
}

type Opener = (clock: FakeClock, sink: MemoryEventSink) => Promise<Opened>;

async function claimed(store: TaskStore, agent: string, id = "t"): Promise<Task> {
  await store.create({ id, title: "work", role: "dev" }, { actor: "planner" });
  const t = await store.claimNext("dev", { agent, actor: "orchestrator" });
  assert.equal(t?.id, id);
  return await store.transition(id, "in_progress", OP);
}

function release(store: TaskStore) {
  return store.releaseStaleClaims({
    olderThanMs: TIMEOUT_MS,
    actor: "orchestrator",
    reason: "no heartbeat",
  });
}

function suite(name: string, open: Opener | string): void {
  const test = (
    title: string,
    fn: (s: TaskStore, c: FakeClock, e: MemoryEventSink) => Promise<void>,
  ) =>
    Deno.test({
      name: typeof open === "string"
        ? `[${name}] ${title} (ignored: ${open})`
        : `[${name}] ${title}`,
      ignore: typeof open === "string",
      async fn() {
        const clock = new FakeClock(Date.UTC(2026, 0, 1));
        const sink = new MemoryEventSink();
        const opened = await (open as Opener)(clock, sink);
        try {
          await fn(opened.store, clock, sink);
        } finally {
          await opened.store.close();
          await opened.cleanup();
        }
      },
    });

  test(
    "a heartbeat renews the claim; without one it is released after the timeout",
    async (s, c) => {
      await claimed(s, "a1");
      c.advance(TIMEOUT_MS - 1000);
      await s.heartbeat("t", { agent: "a1" });
      c.advance(TIMEOUT_MS - 1000);
      assert.deepEqual(await release(s), [], "renewed by the heartbeat");
      assert.equal((await s.get("t"))?.status, "in_progress");
      c.advance(1000);
      const released = await release(s);
      assert.deepEqual(released.map((t) => [t.id, t.status, t.assigned_agent]), [[
        "t",
        "open",
        null,
      ]]);
    },
  );

  test("only the holder renews: others and unknown tasks are refused", async (s) => {
    await claimed(s, "a1");
    await assert.rejects(
      s.heartbeat("t", { agent: "intruder" }),
      (e: unknown) =>
        e instanceof ClaimLostError && e.code === "task.claim_lost" && e.assignedAgent === "a1",
    );
    await assert.rejects(s.heartbeat("nope", { agent: "a1" }), TaskNotFoundError);
  });

  test(
    "a released task runs once elsewhere; the old holder's late result is refused and recorded",
    async (s, c, events) => {
      await claimed(s, "old");
      c.advance(TIMEOUT_MS);
      assert.equal((await release(s)).length, 1);
      const again = await s.claimNext("dev", { agent: "new", actor: "orchestrator" });
      assert.equal(again?.assigned_agent, "new");
      await assert.rejects(
        s.heartbeat("t", { agent: "old" }),
        ClaimLostError,
        "the old holder learns it lost the claim",
      );
      const before = await s.get("t");
      await assert.rejects(
        s.transition("t", "done", {
          actor: "agent:old",
          reason: "agent reported completion",
          result_summary: "late",
          holder: "old",
        }),
        (e: unknown) =>
          e instanceof ClaimLostError && e.holder === "old" && e.assignedAgent === "new",
      );
      await assert.rejects(
        s.progress("t", { actor: "agent:old", message: "still here", holder: "old" }),
        ClaimLostError,
      );
      assert.deepEqual(await s.get("t"), before, "a refusal changes nothing");
      const refused = events.events.filter((e) => e.type === "task.refused");
      assert.deepEqual(
        refused.map((
          e,
        ) => [e.actor, e.details.attempted, e.details.holder, e.details.assigned_agent]),
        [["agent:old", "done", "old", "new"], ["agent:old", "progress", "old", "new"]],
      );
      await s.transition("t", "in_progress", { ...OP, holder: "new" });
      const done = await s.transition("t", "done", {
        actor: "agent:new",
        reason: "agent reported completion",
        result_summary: "ok",
        holder: "new",
      });
      assert.equal(done.result_summary, "ok");
      const completions = events.events.filter((e) =>
        e.type === "task.transition" && e.to === "done"
      );
      assert.equal(completions.length, 1, "completed exactly once");
    },
  );

  test("the old holder's heartbeat does not keep the new claim alive", async (s, c) => {
    await claimed(s, "old");
    await s.heartbeat("t", { agent: "old" });
    c.advance(TIMEOUT_MS);
    await release(s);
    await s.claimNext("dev", { agent: "new", actor: "orchestrator" });
    c.advance(TIMEOUT_MS);
    assert.deepEqual((await release(s)).map((t) => t.id), ["t"], "the new claim is stale too");
  });

  Deno.test({
    name: typeof open === "string"
      ? `[${name}] the task server answers a late result with 409 task.claim_lost and audits it (ignored: ${open})`
      : `[${name}] the task server answers a late result with 409 task.claim_lost and audits it`,
    ignore: typeof open === "string",
    async fn() {
      const clock = new FakeClock(Date.UTC(2026, 0, 1));
      const sink = new MemoryEventSink();
      const opened = await (open as Opener)(clock, sink);
      const s = await startTestServer({ store: opened.store });
      try {
        // The server's own clock drives its timestamps; the store's clock drives expiry.
        const token = (agent: string) =>
          s.tokens.issueAgentToken({
            session: agent,
            agent_id: agent,
            task_ids: ["t"],
            can_create_tasks: false,
          }).then((i) => i.token);
        const oldToken = await token("old");
        const newToken = await token("new");
        await claimed(opened.store, "old");
        const beat = await s.call("POST", "/agents/old/heartbeat", {
          token: oldToken,
          body: { task_id: "t" },
        });
        assert.equal(beat.status, 200);
        clock.advance(TIMEOUT_MS);
        await release(opened.store);
        await opened.store.claimNext("dev", { agent: "new", actor: "orchestrator" });
        const lateBeat = await s.call("POST", "/agents/old/heartbeat", {
          token: oldToken,
          body: { task_id: "t" },
        });
        assert.equal(lateBeat.status, 409);
        assert.equal(errorCode(lateBeat.json), "task.claim_lost");
        const late = await s.call("POST", "/tasks/t/complete", {
          token: oldToken,
          body: { summary: "late work" },
        });
        assert.equal(late.status, 409);
        assert.equal(errorCode(late.json), "task.claim_lost");
        const lateFail = await s.call("POST", "/tasks/t/fail", {
          token: oldToken,
          body: { reason: "gave up" },
        });
        assert.equal(lateFail.status, 409);
        assert.equal((await opened.store.get("t"))?.status, "claimed");
        const ok = await s.call("POST", "/tasks/t/complete", {
          token: newToken,
          body: { summary: "real work" },
        });
        assert.equal(ok.status, 200);
        const task = (ok.json as { task: Task }).task;
        assert.deepEqual([task.status, task.result_summary], ["done", "real work"]);
        const refused = sink.events.filter((e) => e.type === "task.refused");
        assert.deepEqual(refused.map((e) => [e.actor, e.details.attempted]), [
          ["agent:old", "in_progress"],
          ["agent:old", "failed"],
        ]);
      } finally {
        await s.stop();
        await opened.cleanup();
      }
    },
  });
}

suite("memory", (clock, sink) =>
  Promise.resolve({
    store: createMemoryTaskStore({ clock, random: new SeededRandom(3), sink }),
    cleanup: () => Promise.resolve(),
  }));

suite("jsonl", async (clock, sink) => {
  const dir = await Deno.makeTempDir({ prefix: "bernstein-expiry-" });
  return {
    store: await openJsonlTaskStore(join(dir, "tasks.jsonl"), {
      clock,
      random: new SeededRandom(3),
      sink,
      defaults: { priority: 2, max_retries: 2 },
      compactMinRecords: 10_000,
    }),
    cleanup: () => Deno.remove(dir, { recursive: true }),
  };
});

let pg: ServiceServer | undefined;
let redis: ServiceServer | undefined;
if (POSTGRES_MISSING === undefined) pg = await startPostgres();
if (POSTGRES_MISSING === undefined && REDIS_MISSING === undefined) redis = await startRedis();

suite(
  "postgres",
  pg === undefined ? (POSTGRES_MISSING as string) : async (clock, sink) => ({
    store: await openTestStore({
      databaseUrl: (pg as ServiceServer).url,
      clock,
      random: new SeededRandom(3),
      sink,
    }),
    cleanup: () => Promise.resolve(),
  }),
);

suite(
  "redis",
  redis === undefined ? (POSTGRES_MISSING ?? REDIS_MISSING as string) : async (clock, sink) => ({
    store: await openTestStore({
      databaseUrl: (pg as ServiceServer).url,
      redisUrl: (redis as ServiceServer).url,
      clock,
      random: new SeededRandom(3),
      sink,
    }),
    cleanup: () => Promise.resolve(),
  }),
);
