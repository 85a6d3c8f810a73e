// Configuration errors and problems, each naming the file, line and column it comes from.

import {
  BernsteinError,
  type BernsteinErrorOptions,
  type ErrorCode,
  type Warning,
} from "../errors/mod.ts";

/** A configuration problem that stops the command (bad type, unreadable file, bad overlay). */
export class ConfigError extends BernsteinError {
  constructor(code: ErrorCode, message: string, options: BernsteinErrorOptions = {}) {
    super(code, message, { exitCode: 2, ...options });
  }
}

/** One problem found while loading configuration. */
export interface ConfigProblem extends Warning {
  /** Errors make the configuration unusable; warnings do not. */
  severity: "error" | "warning";
}

const FILE_REFUSALS = {
  "config.too_large": "too_large",
  "config.not_utf8": "not_utf8",
  "config.yaml_syntax": "yaml_syntax",
  "config.not_a_mapping": "not_a_mapping",
} as const;

/**
 * A YAML file refused before its keys are read: too large, not UTF-8, not YAML, not a mapping.
 * Configuration, plan and backlog files share these checks (and {@linkcode fileProblemAs}).
 */
export interface FileProblem extends ConfigProblem {
  /** One of the four refusals, in the config family. */
  code: keyof typeof FILE_REFUSALS;
}

/**
 * The same refusal as a plan or backlog file reports it (`plan.yaml_syntax` …): the code names
 * the kind of file that was refused.
 *
 * @example
 * ```ts
 * import { equal } from "node:assert/strict";
 * const problem = { severity: "error", code: "config.too_large", message: "5 MiB" } as const;
 * equal(fileProblemAs(problem, "plan").code, "plan.too_large");
 * ```
 */
export function fileProblemAs(problem: FileProblem, family: "plan" | "backlog"): ConfigProblem {
  return { ...problem, code: `${family}.${FILE_REFUSALS[problem.code]}` };
}
