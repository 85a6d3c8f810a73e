// Memorable run ids (`brave-otter-3fa9c2`) derived from the run's seed, so they are reproducible.

import { toHex } from "../canonical/mod.ts";
import { sha256 } from "../crypto/mod.ts";
import { ADJECTIVES, NOUNS } from "./_words.ts";

/** The shape of a generated run id: `adjective-noun-` and 6 hex digits. */
export const GENERATED_RUN_ID = /^[a-z]+-[a-z]+-[0-9a-f]{6}$/;

/**
 * A memorable run id from the run's seed (`brave-otter-3fa9c2`). Pure: the same seed always
 * gives the same id. The seed is hashed, so any bytes or text will do (e.g. random bytes
 * drawn once from the injected `Random` and recorded with the run).
 *
 * @example
 * ```ts
 * runIdFromSeed("seed-1"); // always the same adjective-noun-hex id
 * ```
 */
export function runIdFromSeed(seed: Uint8Array | string): string {
  const bytes = typeof seed === "string" ? new TextEncoder().encode(seed) : seed;
  const h = sha256(bytes);
  return `${ADJECTIVES[h[0] % ADJECTIVES.length]}-${NOUNS[h[1] % NOUNS.length]}-${
    toHex(h.subarray(2, 5))
  }`;
}
