/**
 * Error types shared by every part of bernstein: a base class with a stable code, the exit
 * code table, one-line renderers and the "did you mean" helper.
 *
 * This folder imports nothing, so the verifier may use it.
 *
 * @module
 */
export {
  BernsteinError,
  type BernsteinErrorOptions,
  ExitCode,
  formatErrorLine,
  formatWarningLine,
  KeyMissingError,
  UsageError,
  type Warning,
} from "./bernstein_error.ts";
export {
  ERROR_CODES,
  ERROR_FAMILIES,
  type ErrorCode,
  type ErrorFamily,
  type FamilyCode,
  isErrorCode,
} from "./codes.ts";
export { isStorageFailure } from "./storage.ts";
export { closestMatch } from "./suggest.ts";
