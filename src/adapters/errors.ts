// The error an adapter fails with.

import { BernsteinError, type BernsteinErrorOptions, type FamilyCode } from "../errors/mod.ts";

/**
 * An adapter cannot be used as asked: unknown name (`adapter.unknown`), not installed
 * (`adapter.unavailable`), an option it cannot honour (`adapter.endpoint_unsupported`,
 * `adapter.bad_settings`), or a prompt it cannot carry (`adapter.prompt_too_long`).
 */
export class AdapterError extends BernsteinError {
  constructor(code: FamilyCode<"adapter">, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, options);
  }
}
