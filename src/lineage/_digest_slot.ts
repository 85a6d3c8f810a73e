// Where a 32-byte key goes in an open-addressing table (DigestTable's slots). Keys come from
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
  // The two top halves as one 32-bit number, scaled onto the slots: exact, since
  // 2^32 × slots stays below 2^53.
  const mixed = (a >>> 16) * 65536 + (b >>> 16);
  return Math.floor(mixed * slots / 4294967296);
}
