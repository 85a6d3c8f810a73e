// Configuration errors and problems, each naming the file, line and column it comes from.

import { BernsteinError, type BernsteinErrorOptions, type Warning } from "../errors/mod.ts";

/** A configuration problem that stops the command (bad type, unreadable file, bad overlay). */
export class ConfigError extends BernsteinError {
  constructor(code: string, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, { exitCode: 2, ...options });
  }
}

/** One problem found while loading configuration. */
export interface ConfigProblem extends Warning {
  /** Errors make the configuration unusable; warnings do not. */
  severity: "error" | "warning";
}
