// Task store throughput: the embedded JSONL store (fsync per acknowledged change, group
// commit across concurrent callers) next to the pure in-memory backend, and replay time.
import { join } from "node:path";
import { systemClock, systemRandom } from "../../src/io/mod.ts";
import { createMemoryTaskStore, openJsonlTaskStore, type TaskStore } from "../../src/tasks/mod.ts";
import { report } from "./_report.ts";

const TASKS = 2000;
const OP = { actor: "bench", reason: "bench" };
const dir = await Deno.makeTempDir({ prefix: "bernstein-bench-tasks-" });

async function openJsonl(name: string): Promise<TaskStore> {
  return await openJsonlTaskStore(join(dir, name), {
    clock: systemClock,
    random: systemRandom,
    defaults: { priority: 2, max_retries: 2 },
    compactMinRecords: 1_000_000,
  });
}

/** Claims, starts and completes every task with `workers` concurrent loops; tasks/s. */
async function claimComplete(store: TaskStore, workers: number): Promise<number> {
  await store.createMany(
    Array.from({ length: TASKS }, (_, i) => ({ title: `t${i}`, role: "dev" })),
    OP,
  );
  const t0 = performance.now();
  let done = 0;
  await Promise.all(Array.from({ length: workers }, async (_, w) => {
    for (;;) {
      const t = await store.claimNext("dev", { agent: `w${w}` });
      if (t === undefined) return;
      await store.transition(t.id, "in_progress", OP);
      await store.transition(t.id, "done", { ...OP, result_summary: "ok" });
      done++;
    }
  }));
  const seconds = (performance.now() - t0) / 1000;
  if (done !== TASKS) throw new Error(`completed ${done} of ${TASKS}`);
  return TASKS / seconds;
}

/** Creates tasks one by one with `workers` concurrent callers; creates/s. */
async function creates(store: TaskStore, workers: number, count: number): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: workers }, async () => {
    while (next < count) {
      next++;
      await store.create({ title: "c", role: "dev" }, OP);
    }
  }));
  return count / ((performance.now() - t0) / 1000);
}

for (const workers of [1, 16]) {
  const jsonl = await openJsonl(`claim-${workers}.jsonl`);
  const rate = await claimComplete(jsonl, workers);
  await jsonl.close();
  report(
    "tasks",
    `jsonl claim+start+complete x${workers}`,
    rate,
    "tasks/s (3 fsynced writes each)",
  );
}
for (const workers of [1, 16]) {
  const jsonl = await openJsonl(`create-${workers}.jsonl`);
  report("tasks", `jsonl create x${workers}`, await creates(jsonl, workers, 1000), "creates/s");
  await jsonl.close();
}
const memory = createMemoryTaskStore({ clock: systemClock, random: systemRandom });
report("tasks", "memory claim+start+complete x16", await claimComplete(memory, 16), "tasks/s");

// Replay after a crash: a log of TASKS tasks × 4 records each (create, claim, start, done).
const t0 = performance.now();
const reopened = await openJsonl("claim-16.jsonl");
const replayMs = performance.now() - t0;
const records = (await reopened.list()).length;
await reopened.close();
report("tasks", `jsonl open+replay (${records} tasks, ${records * 4} records)`, replayMs, "ms");

await Deno.remove(dir, { recursive: true });
