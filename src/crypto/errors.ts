// Errors of malformed keys, PEM text and JWS objects.

import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** A key, PEM block or signature that cannot be decoded. */
export class CryptoFormatError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("crypto.format", message, options);
  }
}

/** A detached JWS that breaks the grammar or header rules of FORMATS.md §4. */
export class JwsFormatError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("crypto.jws_malformed", message, options);
  }
}
