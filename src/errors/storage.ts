// Storage failures: the disk is full, the quota is used up, or the file system (the project's
// `.sdd`) became read-only. They are infrastructure failures, never bugs: a run stops on the
// first one and stays resumable, and no command reports them as `error[internal]`.

/** OS error codes of a storage failure (Deno sets `code` on its errors). */
export const STORAGE_FAILURE_CODES: readonly string[] = ["ENOSPC", "EROFS", "EDQUOT"];

/** The OS error numbers of the same (Linux), as Deno's messages carry them: `(os error 28)`. */
const OS_ERRNO = /\(os error (28|30|122)\)/;

/**
 * True when `error` (or any error in its `cause` chain) is a storage failure: ENOSPC, EROFS or
 * EDQUOT.
 *
 * @example
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 * import { isStorageFailure } from "./storage.ts";
 *
 * const diskFull = new Error("write failed", { cause: new Error("No space left (os error 28)") });
 * strictEqual(isStorageFailure(diskFull), true);
 * strictEqual(isStorageFailure(new Error("permission denied")), false);
 * ```
 */
export function isStorageFailure(error: unknown): boolean {
  for (let e = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && STORAGE_FAILURE_CODES.includes(code)) return true;
    if (e instanceof Error && OS_ERRNO.test(e.message)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
