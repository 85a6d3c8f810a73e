// The error a compliance pack build fails with.

import { BernsteinError, type BernsteinErrorOptions, type FamilyCode } from "../errors/mod.ts";

/** A compliance pack that cannot be built as asked (bad window, unusable key, clashing names). */
export class CompliancePackError extends BernsteinError {
  constructor(
    code: FamilyCode<"compliance">,
    message: string,
    options: BernsteinErrorOptions = {},
  ) {
    super(code, message, options);
  }
}
