// The error an audit log operation fails with.

import { BernsteinError, type BernsteinErrorOptions, type FamilyCode } from "../errors/mod.ts";

/** An audit log operation failed: bad event input, unsafe segment, refused claim. */
export class AuditError extends BernsteinError {
  constructor(code: FamilyCode<"audit">, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}
