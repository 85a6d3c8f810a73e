// LogFactsCollector against the rule it implements, on entries made to stress its keys: sibling
// groups are (artefact, first 52 bits of the parent hash), forks are groups whose children
// differ in the first 52 bits of their content hash; hashes that are not lowercase hex (which
// no parsed entry has) still give parseInt's value, so the facts never depend on a fast path.
import { deepStrictEqual } from "node:assert/strict";
import { type FactFields, LogFactsCollector } from "../../src/pack_format/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";

/** The fork count as the rule states it, with string keys. */
function forksByRule(entries: readonly FactFields[]): number {
  const artefacts = new Map<string, number>();
  const groups = new Map<string, { content: number; forked: boolean }>();
  const prefix = (h: string) => parseInt(h.slice(7, 20), 16);
  let forks = 0;
  for (const e of entries) {
    if (!artefacts.has(e.artefact_path)) artefacts.set(e.artefact_path, artefacts.size);
    if (e.parent_hashes.length !== 1) continue;
    const key = `${artefacts.get(e.artefact_path)}:${prefix(e.parent_hashes[0])}`;
    const content = prefix(e.content_hash);
    const g = groups.get(key);
    if (g === undefined) groups.set(key, { content, forked: false });
    else if (!g.forked && g.content !== content) {
      g.forked = true;
      forks++;
    }
  }
  return forks;
}

Deno.test("fork figures follow the (artefact, parent prefix) rule, shared parents and odd hashes included", () => {
  const random = new SeededRandom(52);
  const pick = <T>(xs: readonly T[]): T => xs[random.bytes(1)[0] % xs.length];
  const hex = (n: number) =>
    Array.from(random.bytes(n), (b) => b.toString(16).padStart(2, "0")).join("");
  // Few parents and contents, so groups collide across artefacts; some hashes share their first
  // 52 bits and differ after; some are not lowercase hex at all.
  const base = hex(32);
  const parents = [
    ...Array.from({ length: 6 }, () => `sha256:${hex(32)}`),
    `sha256:${base}`,
    `sha256:${base.slice(0, 13)}${"f".repeat(51)}`,
    `sha256:${base.toUpperCase()}`,
    "sha256:-000000000000" + "0".repeat(52),
    "sha256:zz",
    "sha256:",
    "sha256:0000000000000" + "1".repeat(51),
  ];
  const contents = [...parents, `sha256:${hex(32)}`, `sha256:${hex(32)}`];
  for (let round = 0; round < 40; round++) {
    const entries: FactFields[] = [];
    for (let k = 0; k < 200; k++) {
      const n = pick([0, 1, 1, 1, 1, 2]);
      entries.push({
        artefact_path: pick(["a.ts", "b.ts", "c.ts", "d/e.ts"]),
        ts_ns: BigInt(random.bytes(1)[0]),
        parent_hashes: Array.from({ length: n }, () => pick(parents)),
        content_hash: pick(contents),
        agent_id: pick(["agent-1", "agent-2"]),
        agent_card_kid: pick(["k1", "k2", "k3"]),
      });
    }
    const c = new LogFactsCollector();
    for (const e of entries) c.add(e);
    deepStrictEqual(c.facts().fork_count, forksByRule(entries), `round ${round}`);
  }
});
