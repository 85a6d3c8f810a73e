// Task ids: `t-` and a ULID drawn from the injected clock and randomness, strictly increasing
// from one generator so creation order is never ambiguous.

import type { Clock, Random } from "../io/mod.ts";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"; // Crockford base32, lower case

function base32(value: bigint, length: number): string {
  let out = "";
  let v = value;
  for (let i = 0; i < length; i++) {
    out = ALPHABET[Number(v & 31n)] + out;
    v >>= 5n;
  }
  return out;
}

function decode(text: string): bigint {
  let v = 0n;
  for (const ch of text) v = (v << 5n) | BigInt(ALPHABET.indexOf(ch));
  return v;
}

/**
 * Makes task ids `t-` + a ULID (48-bit ms time, 80 random bits, lower-case Crockford base32).
 * Ids sort by creation time; within one millisecond the random part counts up, so ids from
 * one generator are strictly increasing and creation order is never ambiguous.
 */
export class TaskIdGenerator {
  readonly #clock: Clock;
  readonly #random: Random;
  #lastMs = -1;
  #lastRandom = 0n;

  constructor(clock: Clock, random: Random) {
    this.#clock = clock;
    this.#random = random;
  }

  /**
   * Continues after an existing id (called for every task recovered on open), so ids made
   * after a restart in the same millisecond still sort after it.
   */
  observe(id: string): void {
    const m = /^t-([0-9a-hjkmnp-tv-z]{10})([0-9a-hjkmnp-tv-z]{16})$/.exec(id);
    if (m === null) return;
    const ms = Number(decode(m[1]));
    const rand = decode(m[2]);
    if (ms > this.#lastMs || (ms === this.#lastMs && rand > this.#lastRandom)) {
      this.#lastMs = ms;
      this.#lastRandom = rand;
    }
  }

  /** The next id. */
  next(): string {
    const ms = Math.max(0, Math.floor(this.#clock.nowMs()));
    let rand: bigint;
    if (ms <= this.#lastMs) {
      // Same (or earlier: clock stepped back) millisecond: keep the time, count up.
      rand = (this.#lastRandom + 1n) & ((1n << 80n) - 1n);
    } else {
      rand = 0n;
      for (const b of this.#random.bytes(10)) rand = (rand << 8n) | BigInt(b);
      this.#lastMs = ms;
    }
    this.#lastRandom = rand;
    return `t-${base32(BigInt(this.#lastMs), 10)}${base32(rand, 16)}`;
  }
}
