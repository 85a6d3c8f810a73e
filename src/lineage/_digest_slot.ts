// Where a key goes in an open-addressing table: a 32-byte digest (DigestTable's slots) or a
// 52-bit hash prefix (the pack facts' sibling groups). Keys come from
// files an attacker may have written (a forged pack's member names, a log's parent hashes), so
// they need not be uniform: any fixed function of their bytes (their first four bytes, say)
// lets 100 000 chosen keys share one slot, and every lookup then walks them all. The slot is
// instead a keyed mix with multipliers drawn at random for each table: multilinear hashing of
// the key's sixteen 16-bit chunks, whose top 16 bits are strongly universal (Lemire and Kaser,
// "Strongly universal string hashing is fast"), done twice for 32 bits. Outside the process no
// one knows the multipliers, so no one can aim keys at a slot. Nothing a table answers depends
// on them (its entries come in table order, which no caller keeps), so outputs stay
// reproducible.

const KEY_BYTES = 32;
const CHUNKS = KEY_BYTES / 2;
const MIX_WORDS = 2 * (CHUNKS + 1);

/** Fresh random multipliers for one table. */
export function randomSlotMix(): Int32Array {
  return crypto.getRandomValues(new Int32Array(MIX_WORDS));
}

/**
 * The slot in [0, `slots`) of the 32-byte key at `from` in `key`, under `mix`.
 *
 * @example
 * ```ts
 * import { randomSlotMix, slotOf } from "./_digest_slot.ts";
 * const slot = slotOf(randomSlotMix(), new Uint8Array(32), 0, 1000);
 * if (!(slot >= 0 && slot < 1000)) throw new Error("out of range");
 * ```
 */
export function slotOf(mix: Int32Array, key: Uint8Array, from: number, slots: number): number {
  let a = mix[0];
  let b = mix[CHUNKS + 1];
  for (let c = 0; c < CHUNKS; c++) {
    const chunk = key[from + 2 * c] | (key[from + 2 * c + 1] << 8);
    a = (a + Math.imul(mix[1 + c], chunk)) | 0;
    b = (b + Math.imul(mix[CHUNKS + 2 + c], chunk)) | 0;
  }
  return scaled(a, b, slots);
}

/**
 * The slot in [0, `slots`) of a whole number in 0..2^52-1 (a 13-hex-digit hash prefix), under
 * `mix`: the same hashing over the number's four 16-bit chunks.
 *
 * @example
 * ```ts
 * import { randomSlotMix, slotOfPrefix } from "./_digest_slot.ts";
 * const slot = slotOfPrefix(randomSlotMix(), 2 ** 52 - 1, 1000);
 * if (!(slot >= 0 && slot < 1000)) throw new Error("out of range");
 * ```
 */
export function slotOfPrefix(mix: Int32Array, key: number, slots: number): number {
  const lo = key % 0x100000000;
  const hi = (key - lo) / 0x100000000;
  const c0 = lo & 0xffff, c1 = lo >>> 16, c2 = hi & 0xffff, c3 = hi >>> 16;
  // The sums stay exact in doubles before `| 0` takes them modulo 2^32.
  const a = (mix[0] + Math.imul(mix[1], c0) + Math.imul(mix[2], c1) + Math.imul(mix[3], c2) +
    Math.imul(mix[4], c3)) | 0;
  const b = (mix[CHUNKS + 1] + Math.imul(mix[CHUNKS + 2], c0) + Math.imul(mix[CHUNKS + 3], c1) +
    Math.imul(mix[CHUNKS + 4], c2) + Math.imul(mix[CHUNKS + 5], c3)) | 0;
  return scaled(a, b, slots);
}

/** The two sums' top halves as one 32-bit number, scaled onto the slots (exact: < 2^53). */
function scaled(a: number, b: number, slots: number): number {
  const mixed = (a >>> 16) * 65536 + (b >>> 16);
  return Math.floor(mixed * slots / 4294967296);
}
