// Child of lineage.ts: records N writes through the real store into <dir>/.sdd and writes the
// measured rate to <dir>/rate.json (stdout stays free for the parent).
import { join } from "node:path";
import { openLineageStore } from "../../src/lineage/store/mod.ts";

const [dir, count] = Deno.args;
const n = Number(count);
const store = openLineageStore({
  sdd: join(dir, ".sdd"),
  operatorKey: new TextEncoder().encode(Deno.env.get("BERNSTEIN_OPERATOR_SECRET") ?? "x"),
  strict: true,
});
const enc = new TextEncoder();
// The first write mints the agent keys; it is not part of the steady-state figure.
await store.recordWrite("src/warmup.ts", enc.encode("w"), {
  agent: "agent-0",
  toolCallId: "t",
  spanId: "s",
});
await store.recordWrite("src/warmup.ts", enc.encode("w2"), {
  agent: "agent-1",
  toolCallId: "t",
  spanId: "s",
});
const start = performance.now();
for (let i = 0; i < n; i++) {
  await store.recordWrite(`src/f${i % 20}.ts`, enc.encode(`content ${i}`), {
    agent: `agent-${i % 2}`,
    toolCallId: `t${i}`,
    spanId: `s${i}`,
  });
}
const ms = performance.now() - start;
await Deno.writeTextFile(join(dir, "rate.json"), JSON.stringify({ writes: n, ms }));
