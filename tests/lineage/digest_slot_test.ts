// The digest table's slots under keys an attacker chose: a forged pack's member names or a
// log's parent hashes need not be uniform, and keys that share a slot make every lookup walk
// them all (a verifier that runs for hours on a crafted 100k-entry pack).
import assert from "node:assert/strict";
import { randomSlotMix, slotOf, slotOfPrefix } from "../../src/lineage/_digest_slot.ts";
import { DigestTable, digestText } from "../../src/lineage/digest_table.ts";

const KEYS = 40_000;
const SLOTS = 50_000;

/** Keys equal but for two bytes at `at`: what a fixed slot rule of other bytes piles up. */
function craftedKeys(at: number): Uint8Array {
  const keys = new Uint8Array(KEYS * 32).fill(0xab);
  for (let k = 0; k < KEYS; k++) {
    keys[k * 32 + at] = k & 0xff;
    keys[k * 32 + at + 1] = k >>> 8;
  }
  return keys;
}

/** The longest run of occupied slots after linear probing (what a lookup may walk). */
function longestRun(keys: Uint8Array): number {
  const mix = randomSlotMix();
  const used = new Uint8Array(SLOTS);
  for (let k = 0; k < KEYS; k++) {
    let i = slotOf(mix, keys, k * 32, SLOTS);
    while (used[i] === 1) i = (i + 1) % SLOTS;
    used[i] = 1;
  }
  let longest = 0;
  let run = 0;
  for (let i = 0; i < 2 * SLOTS; i++) {
    run = used[i % SLOTS] === 1 ? run + 1 : 0;
    longest = Math.max(longest, Math.min(run, SLOTS));
  }
  return longest;
}

Deno.test("digest slots: keys equal in all but two bytes spread like random ones", () => {
  // At load 0.8 a uniform hash's longest run is a few hundred (median 191, worst 567 over 20 000
  // tables); one slot for all would be 40 000. The bound is far from both. A pairwise-universal
  // mix is not enough here: the multilinear one before it failed this in about 1 run of 1 000
  // (the counting chunk's sums form an arithmetic progression that can pile onto a few points).
  for (const at of [0, 4, 14, 30]) {
    const longest = longestRun(craftedKeys(at));
    assert.ok(longest < 2_000, `keys differing at byte ${at}: a run of ${longest} slots`);
  }
});

Deno.test("digest slots: every slot is in range, and a table's multipliers are its own", () => {
  const key = new Uint8Array(32).fill(0xff);
  for (const slots of [1, 2, 17, 1_250_000, 2 ** 21]) {
    for (let t = 0; t < 20; t++) {
      const s = slotOf(randomSlotMix(), key, 0, slots);
      assert.ok(Number.isInteger(s) && s >= 0 && s < slots, `${s} of ${slots}`);
    }
  }
  const a = randomSlotMix();
  const b = randomSlotMix();
  assert.notDeepEqual(a, b);
});

Deno.test("digest table: crafted keys are all found, with their values, and strangers are not", () => {
  const keys = craftedKeys(30);
  const table = new DigestTable(KEYS);
  for (let k = 0; k < KEYS; k++) assert.equal(table.addDigest(keys, k * 32, k), true);
  assert.equal(table.size, KEYS);
  for (let k = 0; k < KEYS; k += 97) {
    assert.equal(table.getDigest(keys, k * 32), k);
    assert.equal(table.get(digestText(keys, k * 32)), k);
  }
  const stranger = keys.slice(0, 32);
  stranger[31] = 0xff;
  stranger[30] = 0xff;
  assert.equal(table.getDigest(stranger), undefined);
  const values = new Set<number>();
  for (const e of table.entries()) values.add(e.value);
  assert.equal(values.size, KEYS);
});

Deno.test("prefix slots: 52-bit prefixes alike in all but one 16-bit chunk spread like random ones", () => {
  for (const shift of [0, 16, 32, 36]) {
    const mix = randomSlotMix();
    const used = new Uint8Array(SLOTS);
    let longest = 0;
    for (let k = 0; k < KEYS; k++) {
      // 0xabcdabcdabcd everywhere but the chunk at `shift`, which counts k (arithmetic, not
      // bitwise: these numbers pass 32 bits).
      const base = 0xabcdabcdabcd;
      const chunk = Math.floor(base / 2 ** shift) % 65536;
      const key = base + (k - chunk) * 2 ** shift;
      assert.ok(Number.isSafeInteger(key) && key >= 0 && key < 2 ** 52, `${key}`);
      let i = slotOfPrefix(mix, key, SLOTS);
      assert.ok(i >= 0 && i < SLOTS);
      let run = 1;
      while (used[i] === 1) {
        i = (i + 1) % SLOTS;
        run++;
      }
      used[i] = 1;
      longest = Math.max(longest, run);
    }
    assert.ok(longest < 2_000, `prefixes differing at bit ${shift}: a probe of ${longest} slots`);
  }
});
