// Errors of JSON that cannot be parsed and values that cannot be encoded canonically.

import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** Bytes that are not valid (strict) JSON or not valid UTF-8. */
export class JsonParseError extends BernsteinError {
  /** Offset in the decoded text where the problem is. */
  readonly offset: number;

  constructor(message: string, offset: number, options: BernsteinErrorOptions = {}) {
    super("json.parse", message, options);
    this.offset = offset;
  }
}

/** A value that has no canonical form (NaN, Infinity, lone surrogate, unsupported type). */
export class CanonicalEncodeError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("json.not_canonicalisable", message, options);
  }
}
