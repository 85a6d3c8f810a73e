// The base error type: a stable code from a known family, the exit code table, and the one-line
// renderers of errors and warnings.

import type { ErrorCode } from "./codes.ts";

/** Exit codes shared by every command (DESIGN.md, CLI conventions). */
export const ExitCode = {
  /** Success. */
  ok: 0,
  /** The check or operation failed. */
  failed: 1,
  /** Usage error: bad flag, argument or input file. */
  usage: 2,
  /** A required key is missing (e.g. the audit key for verification). */
  keyMissing: 3,
} as const;

/** One of the process exit codes in {@linkcode ExitCode}. */
export type ExitCodeValue = typeof ExitCode[keyof typeof ExitCode];

/** Options shared by every {@linkcode BernsteinError}. */
export interface BernsteinErrorOptions {
  /** Where in the user's input the problem is: `file:line:col` or a field path. */
  location?: string;
  /** A short suggestion shown after the message (`did you mean …`). */
  hint?: string;
  /** Exit code the CLI uses when this error ends a command. */
  exitCode?: ExitCodeValue;
  /** The error that caused this one. */
  cause?: unknown;
  /** Other names of `code` (another design's name for the same error), for scripts. */
  aliases?: readonly string[];
}

/**
 * Base class of every error bernstein raises on purpose.
 *
 * `code` is stable (scripts and docs match on it); `message` is for humans.
 *
 * @example
 * ```ts
 * import { strictEqual } from "node:assert/strict";
 *
 * const error = new BernsteinError("config.unknown_key", "unknown key 'max_agnets'", {
 *   location: "bernstein.yaml:3:1",
 *   hint: "did you mean 'max_agents'?",
 * });
 * strictEqual(error.code, "config.unknown_key");
 * ```
 */
export class BernsteinError extends Error {
  /** Stable, dotted error code such as `config.invalid_type`. */
  readonly code: ErrorCode;
  /** Location in the user's input, when the error is about input. */
  readonly location?: string;
  /** Short suggestion for the user. */
  readonly hint?: string;
  /** Exit code for the CLI. */
  readonly exitCode: ExitCodeValue;
  /** Other names of `code` (the task server answers them beside it). */
  readonly aliases?: readonly string[];

  constructor(code: ErrorCode, message: string, options: BernsteinErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.location = options.location;
    this.hint = options.hint;
    this.exitCode = options.exitCode ?? ExitCode.failed;
    if (options.aliases !== undefined) this.aliases = options.aliases;
  }
}

/** A bad flag, argument or input file: exit code 2. */
export class UsageError extends BernsteinError {
  constructor(
    code: ErrorCode,
    message: string,
    options: Omit<BernsteinErrorOptions, "exitCode"> = {},
  ) {
    super(code, message, { ...options, exitCode: ExitCode.usage });
  }
}

/** A required key (audit key, operator key) is missing: exit code 3. */
export class KeyMissingError extends BernsteinError {
  constructor(
    code: ErrorCode,
    message: string,
    options: Omit<BernsteinErrorOptions, "exitCode"> = {},
  ) {
    super(code, message, { ...options, exitCode: ExitCode.keyMissing });
  }
}

/** Renders an error as the one line the CLI prints: `error[code]: location: message (hint)`. */
export function formatErrorLine(error: BernsteinError): string {
  const where = error.location ? `${error.location}: ` : "";
  const hint = error.hint ? ` (${error.hint})` : "";
  return `error[${error.code}]: ${where}${error.message}${hint}`;
}

/** Renders a warning line: `warning[code]: location: message (hint)`. */
export function formatWarningLine(warning: Warning): string {
  const where = warning.location ? `${warning.location}: ` : "";
  const hint = warning.hint ? ` (${warning.hint})` : "";
  return `warning[${warning.code}]: ${where}${warning.message}${hint}`;
}

/** A non-fatal problem reported to the user. */
export interface Warning {
  /** Stable warning code. */
  code: ErrorCode;
  /** Human text. */
  message: string;
  /** Location in the input, when known. */
  location?: string;
  /** Short suggestion. */
  hint?: string;
}
