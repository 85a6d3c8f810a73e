// Memorable run ids (`brave-otter-3fa9c2`) derived from the run's seed, so they are reproducible,
// and the short run tag that session names carry.

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

/**
 * The run's short tag, carried by its sessions' names: the 6 hex digits of a generated id; for
 * any other id (a hand-edited session file), the first 6 hex digits of its SHA-256, so the tag
 * is always 6 hex digits and never holds a separator.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * equal(runTag("brave-otter-3fa9c2"), "3fa9c2");
 * equal(runTag("my-run").length, 6);
 * ```
 */
export function runTag(runId: string): string {
  if (GENERATED_RUN_ID.test(runId)) return runId.slice(-6);
  return toHex(sha256(new TextEncoder().encode(runId))).slice(0, 6);
}
