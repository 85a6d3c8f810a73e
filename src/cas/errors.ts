// The error a content-addressed store operation fails with.

import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/**
 * A CAS operation failed. Codes: `cas.invalid_key`, `cas.not_found`, `cas.not_regular`
 * (symlink or special file), `cas.integrity` (bytes do not hash to their key),
 * `cas.too_large`, `cas.meta_invalid`.
 */
export class CasError extends BernsteinError {
  constructor(code: string, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}
