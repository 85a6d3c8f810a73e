// Child process of the kill -9 conformance test: writes to a JSONL task store from several
// concurrent loops and prints `ack <id> <version> <status>` after every acknowledged write,
// until it is killed.
import { systemClock, systemRandom } from "../../src/io/mod.ts";
import { openJsonlTaskStore, type Task } from "../../src/tasks/mod.ts";

const path = Deno.args[0];
const store = await openJsonlTaskStore(path, {
  clock: systemClock,
  random: systemRandom,
  defaults: { priority: 2, max_retries: 2 },
  // Small, so compaction also runs while the writer is being killed.
  compactMinRecords: 200,
});
const encoder = new TextEncoder();
function ack(t: Task): void {
  Deno.stdout.writeSync(encoder.encode(`ack ${t.id} ${t.version} ${t.status}\n`));
}
const op = { actor: "writer", reason: "crash test" };

async function loop(n: number): Promise<never> {
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

await Promise.all(Array.from({ length: 8 }, (_, n) => loop(n)));
