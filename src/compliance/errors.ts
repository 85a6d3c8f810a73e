// The error a compliance pack build fails with.

import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** A compliance pack that cannot be built as asked (bad window, unusable key, clashing names). */
export class CompliancePackError extends BernsteinError {
  constructor(code: `compliance.${string}`, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}
