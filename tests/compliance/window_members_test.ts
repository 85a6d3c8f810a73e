// The signature members' name order: the keyed sort (first four digest bytes and the index in
// one number) gives exactly the order of the byte-by-byte comparison, ties on the first four
// bytes included; the order is computed once and redone after a new member. And a window
// entry is checked against the checkpoint's leaf byte by byte.
import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { digestOrder, SignatureMembers } from "../../src/compliance/window_members.ts";
import { CompliancePackError } from "../../src/compliance/mod.ts";
import { digestText } from "../../src/lineage/mod.ts";
import { sampleCheckpoint, sampleLog } from "../../scripts/sample_pack.ts";

function comparisonOrder(digests: Uint8Array, count: number): number[] {
  return Array.from({ length: count }, (_, i) => i).sort((a, b) => {
    for (let k = 0; k < 32; k++) {
      const d = digests[a * 32 + k] - digests[b * 32 + k];
      if (d !== 0) return d;
    }
    return 0;
  });
}

/** Pseudo-random digests (a fixed LCG), some sharing their first four bytes or all 32. */
function digests(count: number, seed: number): Uint8Array {
  const out = new Uint8Array(32 * count);
  let x = seed;
  for (let i = 0; i < out.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  for (let i = 3; i < count; i += 7) out.copyWithin(i * 32, (i - 3) * 32, (i - 3) * 32 + 4);
  for (let i = 5; i < count; i += 11) out.copyWithin(i * 32, (i - 5) * 32, (i - 5) * 32 + 31);
  for (let i = 9; i < count; i += 13) out.copyWithin(i * 32, (i - 9) * 32, (i - 9) * 32 + 32);
  // Extremes of the first four bytes.
  out.fill(0xff, 0, 4);
  out.fill(0x00, 32, 36);
  return out;
}

Deno.test("digestOrder is the byte-by-byte order, shared prefixes and equal digests included", () => {
  for (const [count, seed] of [[0, 1], [1, 2], [2, 3], [50, 4], [5000, 5]]) {
    const d = digests(count, seed);
    deepStrictEqual(Array.from(digestOrder(d, count)), comparisonOrder(d, count));
  }
});

Deno.test("signature members come in name order, sorted again after a new member", () => {
  const d = digests(300, 7);
  const members = new SignatureMembers();
  const hashes: string[] = [];
  for (let i = 0; i < 300; i++) {
    const hash = digestText(d, 32 * i);
    if (hashes.includes(hash)) continue;
    hashes.push(hash);
    members.add(hash, new Uint8Array([i & 0xff, i >> 8]));
  }
  const names = () => [...members.inNameOrder()].map((m) => m.name);
  const expected = (list: string[]) =>
    [...list].sort().map((h) => `signatures/${h.slice("sha256:".length)}.jws`);
  deepStrictEqual(names(), expected(hashes));
  deepStrictEqual(names(), expected(hashes));
  const late = `sha256:${"0".repeat(63)}1`;
  members.add(late, new Uint8Array([1]));
  deepStrictEqual(names(), expected([...hashes, late]));
});

Deno.test("a window entry that is not the line the checkpoint committed to stops the pack", () => {
  const sample = sampleLog({ seed: 3, entries: 8 });
  const entries = sample.log.map((e, leaf) => ({ hash: e.hash, leaf }));
  // The lines as committed: the checkpoint members are made.
  sampleCheckpoint(sample, entries);
  // Line 4's entry given for line 3: the leaf hashes differ in their bytes.
  const swapped = entries.map((e, i) => i === 2 ? { ...e, hash: entries[3].hash } : e);
  throws(() => sampleCheckpoint(sample, swapped), (e: Error) => {
    ok(e instanceof CompliancePackError);
    strictEqual(e.code, "compliance.log_changed");
    ok(e.message.includes("log line 3 is not the line the checkpoint committed to"), e.message);
    return true;
  });
  // A line past the checkpoint's size is not covered.
  const past = [...entries, { hash: entries[0].hash, leaf: entries.length }];
  throws(
    () => sampleCheckpoint(sample, past),
    (e: Error) => e instanceof CompliancePackError && e.code === "compliance.not_checkpointed",
  );
});

Deno.test("the manifest's signature entries and the archive's names are the members' names and hashes", () => {
  for (const count of [0, 1, 2, 500]) {
    const d = digests(count, 13);
    const members = new SignatureMembers();
    for (let i = 0; i < count; i++) {
      members.add(
        digestText(d, 32 * i),
        new Uint8Array(Array.from({ length: i % 40 }, (_, k) => k)),
      );
    }
    const listed = [...members.inNameOrder()];
    const run = members.inputHashes();
    const bytes = new Uint8Array(run.length + 4).fill(0x20);
    run.writeInto(bytes, 2);
    strictEqual(
      new TextDecoder().decode(bytes),
      "  " +
        listed.map((m) => `${JSON.stringify(m.name)}:${JSON.stringify(m.sha256)}`).join(",") +
        "  ",
    );
    strictEqual(run.first, listed[0]?.name ?? "");
    strictEqual(run.last, listed.at(-1)?.name ?? "");
    const stored = members.storedRun();
    strictEqual(stored.nameBytes, "signatures/".length + 64 + ".jws".length);
    strictEqual(stored.names.length, listed.length * stored.nameBytes);
    listed.forEach((m, k) => {
      strictEqual(
        new TextDecoder().decode(
          stored.names.subarray(k * stored.nameBytes, (k + 1) * stored.nameBytes),
        ),
        m.name,
      );
      deepStrictEqual(stored.data(k), m.bytes);
    });
  }
});
