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
  type ExitCodeValue,
  formatErrorLine,
  formatWarningLine,
  KeyMissingError,
  UsageError,
  type Warning,
} from "./bernstein_error.ts";
export { ERROR_FAMILIES, type ErrorCode, type ErrorFamily, isErrorCode } from "./codes.ts";
export { isStorageFailure, STORAGE_FAILURE_CODES } from "./storage.ts";
export { closestMatch, type ClosestMatchOptions, editDistance } from "./suggest.ts";
