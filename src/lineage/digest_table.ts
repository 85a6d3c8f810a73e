// A compact map from SHA-256 digests (`sha256:<hex>`) to non-negative integers: open
// addressing over typed arrays, ~40 bytes per key instead of ~200 for a Map of strings. It is
// what keeps the gate's memory flat on a 100 000-entry log.

import { randomSlotMix, slotOf } from "./_digest_slot.ts";

const DIGEST_BYTES = 32;
// Linear probing stays short up to here (a miss usually fails on the slot's first byte). The
// slot count need not be a power of two (a key's 32-bit mix is scaled onto the count), so a
// table sized for its keys takes 1.25 slots per key: 1 000 000 keys in 46 MB instead of the
// 77 MB of 2^21 slots.
const MAX_LOAD = 0.8;

// Lowercase hex digit values by char code; -1 elsewhere (uppercase is not canonical here).
const HEX_VALUE = new Int8Array(128).fill(-1);
for (let i = 0; i < 16; i++) HEX_VALUE["0123456789abcdef".charCodeAt(i)] = i;

/** Writes the 32 digest bytes of `sha256:<hex>` into `out`; false when malformed. */
export function digestInto(hash: string, out: Uint8Array, at = 0): boolean {
  if (hash.length !== 71 || !hash.startsWith("sha256:")) return false;
  return hexDigestInto(hash, 7, out, at);
}

/**
 * Writes the 32 bytes that the 64 lowercase hex digits at `from` in `text` spell into `out` at
 * `at`; false when any of them is not one (`out` then holds garbage). For digests inside a
 * longer text (a signature member's name), without cutting a string out of it.
 */
export function hexDigestInto(text: string, from: number, out: Uint8Array, at = 0): boolean {
  if (from < 0 || text.length < from + 2 * DIGEST_BYTES) return false;
  let bad = 0; // negative once a non-digit is seen
  let codes = 0; // ≥ 128 once a non-ASCII char is seen (it masks onto a digit below)
  for (let i = 0; i < DIGEST_BYTES; i++) {
    const a = text.charCodeAt(from + 2 * i);
    const b = text.charCodeAt(from + 1 + 2 * i);
    const hi = HEX_VALUE[a & 127];
    const lo = HEX_VALUE[b & 127];
    bad |= hi | lo;
    codes |= a | b;
    out[at + i] = (hi << 4) | lo;
  }
  return bad >= 0 && codes < 128;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** `sha256:<hex>` of 32 digest bytes at `at`. */
export function digestText(bytes: Uint8Array, at = 0): string {
  let out = "sha256:";
  for (let i = 0; i < DIGEST_BYTES; i++) out += HEX[bytes[at + i]];
  return out;
}

/**
 * A map from `sha256:` + 64 lowercase hex to an int32 value (≥ 0). Keys that are not in that
 * form are refused by {@linkcode DigestTable.set} and never found by `get`.
 *
 * @example
 * ```ts ignore
 * const t = new DigestTable();
 * t.set(entryHash, 7);
 * t.get(entryHash); // 7
 * ```
 */
export class DigestTable {
  #keys: Uint8Array;
  #values: Int32Array;
  #used: Uint8Array;
  #size = 0;
  #scratch = new Uint8Array(DIGEST_BYTES);
  readonly #mix = randomSlotMix();

  /** `capacity`: keys that fit before the table first grows (a hint; it grows past it). */
  constructor(capacity = 1024) {
    const keys = Number.isFinite(capacity) ? Math.max(0, capacity) : 0;
    const n = Math.max(16, Math.ceil(keys / MAX_LOAD));
    this.#keys = new Uint8Array(n * DIGEST_BYTES);
    this.#values = new Int32Array(n);
    this.#used = new Uint8Array(n);
  }

  /** Number of keys. */
  get size(): number {
    return this.#size;
  }

  #decode(hash: string): Uint8Array | undefined {
    return digestInto(hash, this.#scratch) ? this.#scratch : undefined;
  }

  /** The slot of the 32-byte key at `from` in `key`: where it is, or the free one it would take. */
  #slot(key: Uint8Array, from = 0): number {
    const n = this.#used.length;
    let i = slotOf(this.#mix, key, from, n);
    for (;;) {
      if (this.#used[i] === 0) return i;
      const at = i * DIGEST_BYTES;
      let same = true;
      for (let b = 0; b < DIGEST_BYTES; b++) {
        if (this.#keys[at + b] !== key[from + b]) {
          same = false;
          break;
        }
      }
      if (same) return i;
      i = i + 1 === n ? 0 : i + 1;
    }
  }

  #grow(): void {
    const oldKeys = this.#keys;
    const oldValues = this.#values;
    const oldUsed = this.#used;
    const n = oldUsed.length * 2;
    this.#keys = new Uint8Array(n * DIGEST_BYTES);
    this.#values = new Int32Array(n);
    this.#used = new Uint8Array(n);
    for (let i = 0; i < oldUsed.length; i++) {
      if (oldUsed[i] === 0) continue;
      const key = oldKeys.subarray(i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
      const slot = this.#slot(key);
      this.#keys.set(key, slot * DIGEST_BYTES);
      this.#values[slot] = oldValues[i];
      this.#used[slot] = 1;
    }
  }

  /** The value of `hash`, or undefined. */
  get(hash: string): number | undefined {
    const key = this.#decode(hash);
    if (key === undefined) return undefined;
    const slot = this.#slot(key);
    return this.#used[slot] === 1 ? this.#values[slot] : undefined;
  }

  /** True when `hash` is a key. */
  has(hash: string): boolean {
    return this.get(hash) !== undefined;
  }

  /** True when the 32 digest bytes at `at` of `digests` are a key (no string needed). */
  hasDigest(digests: Uint8Array, at = 0): boolean {
    return this.#used[this.#slot(digests, at)] === 1;
  }

  /** The value of the 32 digest bytes at `at` of `digests`, or undefined. */
  getDigest(digests: Uint8Array, at = 0): number | undefined {
    const slot = this.#slot(digests, at);
    return this.#used[slot] === 1 ? this.#values[slot] : undefined;
  }

  /** Sets the 32 digest bytes at `at` of `digests` to `value`. */
  setDigest(digests: Uint8Array, at: number, value: number): void {
    this.#put(digests, at, value, true);
  }

  /**
   * Sets the 32 digest bytes at `at` of `digests` to `value` unless they are a key already;
   * true when they were not (one probe for `has` then `set`).
   */
  addDigest(digests: Uint8Array, at: number, value: number): boolean {
    return this.#put(digests, at, value, false);
  }

  #put(key: Uint8Array, from: number, value: number, replace: boolean): boolean {
    if (this.#size + 1 > this.#used.length * MAX_LOAD) this.#grow();
    const slot = this.#slot(key, from);
    const added = this.#used[slot] === 0;
    if (added) {
      // Byte by byte: a subarray to copy from would be an object per key added.
      const to = slot * DIGEST_BYTES;
      for (let b = 0; b < DIGEST_BYTES; b++) this.#keys[to + b] = key[from + b];
      this.#used[slot] = 1;
      this.#size++;
    }
    if (added || replace) this.#values[slot] = value;
    return added;
  }

  /**
   * Every key with its value, in table order (not insertion order): the key's 32 bytes are at
   * `at` in `digests`, valid until the next {@linkcode DigestTable.set}.
   */
  *entries(): Generator<{ digests: Uint8Array; at: number; value: number }> {
    for (let i = 0; i < this.#used.length; i++) {
      if (this.#used[i] === 1) {
        yield { digests: this.#keys, at: i * DIGEST_BYTES, value: this.#values[i] };
      }
    }
  }

  /** Sets `hash` to `value`; returns false (and stores nothing) for a malformed key. */
  set(hash: string, value: number): boolean {
    const key = this.#decode(hash);
    if (key === undefined) return false;
    this.#put(key, 0, value, true);
    return true;
  }
}
