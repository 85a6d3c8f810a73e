// A writer process for the crash and concurrency tests: records `count` writes through the
// real store into `<dir>/.sdd`, cycling over the given artefacts, and prints one line per
// recorded entry ("<n> <entry hash>") so the parent knows what was acknowledged.
import { join } from "node:path";
import { openLineageStore } from "../../src/lineage/store/mod.ts";

const [dir, agent, count, ...artefacts] = Deno.args;
const store = openLineageStore({
  sdd: join(dir, ".sdd"),
  operatorKey: new TextEncoder().encode("test-operator-secret"),
  strict: true,
  warn: (w) => console.error(`warning[${w.code}]: ${w.message}`),
});
const enc = new TextEncoder();
for (let i = 0; i < Number(count); i++) {
  const artefact = artefacts[i % artefacts.length];
  const r = await store.recordWrite(artefact, enc.encode(`${agent} ${i} ${crypto.randomUUID()}`), {
    agent,
    toolCallId: `${agent}-${i}`,
    spanId: `${i}`,
  });
  if (r.status !== "recorded") throw new Error(`write ${i} not recorded`);
  console.log(`${i} ${r.entryHash}`);
}
