// The error a content-addressed store operation fails with.

import { BernsteinError, type BernsteinErrorOptions, type FamilyCode } from "../errors/mod.ts";

/**
 * A CAS operation failed. Codes: `cas.invalid_key`, `cas.not_found`, `cas.not_regular`
 * (symlink or special file), `cas.integrity` (bytes do not hash to their key),
 * `cas.too_large`, `cas.meta_invalid`.
 */
export class CasError extends BernsteinError {
  constructor(code: FamilyCode<"cas">, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}

/** Codes of a store whose bytes are damaged or gone (as opposed to a bad request). */
const DAMAGE_CODES: ReadonlySet<string> = new Set([
  "cas.integrity",
  "cas.not_found",
  "cas.not_regular",
  "cas.meta_invalid",
]);

/**
 * True when `error` says a stored blob is damaged or missing: an infrastructure failure that
 * `bernstein cas repair` may mend, never the fault of the task that needed the blob.
 *
 * @example
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * strictEqual(isCasDamage(new CasError("cas.integrity", "changed")), true);
 * strictEqual(isCasDamage(new CasError("cas.too_large", "big")), false);
 * ```
 */
export function isCasDamage(error: unknown): boolean {
  return error instanceof CasError && DAMAGE_CODES.has(error.code);
}
