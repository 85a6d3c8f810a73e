// The error a ledger operation fails with.

import { BernsteinError, type BernsteinErrorOptions, type ErrorCode } from "../errors/mod.ts";

/** The work ledger or a scorecard is missing, broken or cannot be written. */
export class LedgerError extends BernsteinError {
  constructor(code: ErrorCode, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}
