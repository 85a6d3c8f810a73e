// The gate's list of line digests (the checkpoint tree's leaves): an entry's digest handed over
// already decoded gives the same leaves as its `sha256:` text, lines that are not entries are
// hashed, a cut line's digest is unknown, and the list grows past the lines it was sized for.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { digestInto } from "../../src/lineage/mod.ts";
import { LeafDigests } from "../../src/verify/_leaf_digests.ts";

const line = (i: number) => new TextEncoder().encode(`{"line":${i}}`);
const hashOf = (bytes: Uint8Array) => `sha256:${sha256Hex(bytes)}`;

Deno.test("leaf digests: a decoded digest gives the leaf its text gives, past the expected size", () => {
  const byText = new LeafDigests(false, 4);
  const byDigest = new LeafDigests(false, 4);
  const scratch = new Uint8Array(40);
  // 5,000 lines: past the 4,096 lines any list starts with, so both grow.
  for (let i = 0; i < 5000; i++) {
    const bytes = line(i);
    if (i % 7 === 3) {
      // Not an entry: hashed from its bytes either way.
      byText.add(undefined, bytes, false);
      byDigest.add(undefined, bytes, false);
    } else if (i % 11 === 5) {
      // Cut by the framer: its digest is unknown either way.
      byText.add(undefined, bytes, true);
      byDigest.add(undefined, bytes, true);
    } else {
      const hash = hashOf(bytes);
      byText.add(hash, bytes, false);
      // At an offset, as a caller's scratch holds it.
      digestInto(hash, scratch, 8);
      byDigest.addDigest(scratch, 8);
    }
  }
  const a = byText.leaves();
  const b = byDigest.leaves();
  strictEqual(a.count, 5000);
  strictEqual(b.count, 5000);
  deepStrictEqual(b.unknown, a.unknown);
  deepStrictEqual(b.digests, a.digests);
  // Each leaf is its line's SHA-256 (a non-entry line's too), so neither side is trivially equal.
  const expected = new Uint8Array(32);
  digestInto(hashOf(line(3)), expected);
  deepStrictEqual(b.digests.subarray(3 * 32, 4 * 32), expected);
  digestInto(hashOf(line(4998)), expected);
  deepStrictEqual(b.digests.subarray(4998 * 32, 4999 * 32), expected);
});

Deno.test("leaf digests: with nothing to check against, lines are only counted", () => {
  const leaves = new LeafDigests(true, 100);
  leaves.add(hashOf(line(0)), line(0), false);
  leaves.addDigest(new Uint8Array(32).fill(7), 0);
  leaves.add(undefined, line(2), true);
  strictEqual(leaves.count, 3);
  strictEqual(leaves.leaves().digests.length, 0);
});
