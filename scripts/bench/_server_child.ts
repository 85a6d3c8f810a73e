// Child process of scripts/bench/server.ts: a task server over a JSONL store with tasks to
// read and claimed tasks to report progress on. Prints {url, token, read, write} as one JSON
// line, serves until stdin closes. Arguments: the project folder, and optionally the server's
// connection cap (default tuning.server.max_connections).
import { join } from "node:path";
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { primeSignalDelivery, systemClock, systemRandom } from "../../src/io/mod.ts";
import { startTaskServer, TokenRegistry } from "../../src/server/mod.ts";
import { openHoldStore, openJsonlTaskStore } from "../../src/tasks/mod.ts";

// Before any descriptor is opened: the hardening test runs this child out of descriptors, and
// Deno panics if it sets up its signal delivery then (src/io/signals.ts).
primeSignalDelivery();
const runtimeDir = join(Deno.args[0], ".sdd", "runtime");
const store = await openJsonlTaskStore(join(runtimeDir, "tasks.jsonl"), {
  clock: systemClock,
  random: systemRandom,
  defaults: { priority: 2, max_retries: 2 },
  compactMinRecords: DEFAULT_TUNING.tasks.jsonl_compact_min_records,
});
const op = { actor: "bench", reason: "setup" };
const tasks = await store.createMany(
  Array.from({ length: 1000 }, (_, i) => ({ title: `task ${i}`, role: "dev" })),
  op,
);
const write = tasks.slice(0, 100).map((t) => t.id);
for (const id of write) await store.claim(id, { agent: "bench", expectedVersion: 1 });
const tokens = await TokenRegistry.open(runtimeDir, {
  random: systemRandom,
  operatorTokenPath: join(Deno.args[0], "state", "auth.token"),
});
const server = await startTaskServer({
  store,
  holds: await openHoldStore(undefined, { clock: systemClock, random: systemRandom }),
  tokens,
  runtimeDir,
  clock: systemClock,
  config: {
    network: { allowed_ips: ["127.0.0.1"] },
    // A second argument raises the connection cap (the bench holds 1,000 idle connections).
    tuning: Deno.args[1] === undefined ? DEFAULT_TUNING : {
      ...DEFAULT_TUNING,
      server: { ...DEFAULT_TUNING.server, max_connections: Number(Deno.args[1]) },
    },
  },
});
const token = (await Deno.readTextFile(tokens.operatorTokenPath)).trim();
console.log(JSON.stringify({ url: server.url, token, read: tasks.map((t) => t.id), write }));
for await (const _ of Deno.stdin.readable) {
  // Serve until the parent closes stdin.
}
await server.close();
await store.close();
