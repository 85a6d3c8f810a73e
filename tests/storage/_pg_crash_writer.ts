// Child process of the kill -9 conformance test for the shared stores: writes from several
// concurrent loops (one store object each, like several workers) and prints
// `ack <id> <version> <status>` after every acknowledged write, until it is killed.
import { systemClock, systemRandom } from "../../src/io/mod.ts";
import type { Task, TaskStore } from "../../src/tasks/mod.ts";
import { openTestStore } from "./_shared_store.ts";

const [databaseUrl, namespace, redisUrl] = Deno.args;
const encoder = new TextEncoder();
function ack(t: Task): void {
  Deno.stdout.writeSync(encoder.encode(`ack ${t.id} ${t.version} ${t.status}\n`));
}
const op = { actor: "writer", reason: "crash test" };

async function loop(store: TaskStore, n: number): Promise<never> {
  for (let i = 0;; i++) {
    let t = await store.create({ title: `w${n}-${i}`, role: `r${n}` }, op);
    ack(t);
    t = await store.claim(t.id, { agent: `w${n}`, expectedVersion: t.version });
    ack(t);
    t = await store.transition(t.id, "in_progress", op);
    ack(t);
    t = await store.progress(t.id, { actor: "writer", message: `step ${i}`, percent: 50 });
    ack(t);
    t = await store.transition(t.id, "done", { ...op, result_summary: `done ${i}` });
    ack(t);
  }
}

const stores = await Promise.all(
  Array.from({ length: 4 }, () =>
    openTestStore({
      databaseUrl,
      redisUrl: redisUrl === "" ? undefined : redisUrl,
      namespace,
      clock: systemClock,
      random: systemRandom,
    })),
);
await Promise.all(stores.map((s, n) => loop(s, n)));
