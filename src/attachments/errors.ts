import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** An attachment refused at the door (one code for every reason; the field path comes first). */
export class AttachmentError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("attach.invalid", message, { exitCode: 2, ...options });
  }
}
