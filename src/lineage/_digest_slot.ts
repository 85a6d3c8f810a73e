// Where a key goes in an open-addressing table: a 32-byte digest (DigestTable's slots) or a
// 52-bit hash prefix (the pack facts' sibling groups). Keys come from files an attacker may have
// written (a forged pack's member names, a log's parent hashes), so they need not be uniform:
// any fixed function of their bytes (their first four bytes, say) lets 100 000 chosen keys share
// one slot, and every lookup then walks them all. The slot is instead simple tabulation hashing
// with tables drawn at random for each table: one random 32-bit word per (byte position, byte
// value), XORed over the key's bytes. Linear probing under it takes O(1) expected probes on any
// key set, with runs concentrated like a truly random hash's (Pătraşcu and Thorup, "The power of
// simple tabulation hashing"). Pairwise-universal hashing is not enough for linear probing: the
// multilinear mix used before spread keys that count up in one 16-bit chunk as an arithmetic
// progression of sums, and for about one multiplier in 3 000 that progression piled onto a few
// points (runs of 3 000-13 000 slots for 40 000 keys). Outside the process no one knows the
// tables, so no one can aim keys at a slot. Nothing a table answers depends on them (its entries
// come in table order, which no caller keeps), so outputs stay reproducible.

const KEY_BYTES = 32;
const BYTE_VALUES = 256;
// A 52-bit prefix is 7 bytes; it uses the first seven positions' tables.
const PREFIX_BYTES = 7;

/** Fresh random tables for one hash table: 32 positions × 256 byte values (32 KiB). */
export function randomSlotMix(): Int32Array {
  return crypto.getRandomValues(new Int32Array(KEY_BYTES * BYTE_VALUES));
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
  let h = 0;
  for (let i = 0; i < KEY_BYTES; i++) h ^= mix[i * BYTE_VALUES + key[from + i]];
  return scaled(h, slots);
}

/**
 * The slot in [0, `slots`) of a whole number in 0..2^52-1 (a 13-hex-digit hash prefix), under
 * `mix`: the same hashing over the number's seven low-order-first bytes.
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
  let rest = (key - lo) / 0x100000000;
  let h = mix[lo & 0xff] ^ mix[BYTE_VALUES + ((lo >>> 8) & 0xff)] ^
    mix[2 * BYTE_VALUES + ((lo >>> 16) & 0xff)] ^ mix[3 * BYTE_VALUES + (lo >>> 24)];
  for (let i = 4; i < PREFIX_BYTES; i++) {
    h ^= mix[i * BYTE_VALUES + (rest & 0xff)];
    rest >>>= 8;
  }
  return scaled(h, slots);
}

/** The 32-bit hash scaled onto the slots (exact: the product stays below 2^53). */
function scaled(h: number, slots: number): number {
  return Math.floor((h >>> 0) * slots / 4294967296);
}
