import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** A key, PEM block or signature that cannot be decoded. */
export class CryptoFormatError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("crypto.format", message, options);
  }
}
