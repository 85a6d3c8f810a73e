// The error a checkpoint write or check fails with.

import { BernsteinError, type BernsteinErrorOptions, type FamilyCode } from "../errors/mod.ts";

/**
 * A checkpoint that cannot be written honestly: the checkpoint files are damaged, signed by
 * another key, or the log no longer holds what the last checkpoint committed to.
 */
export class CheckpointError extends BernsteinError {
  constructor(
    code: FamilyCode<"checkpoint">,
    message: string,
    options: BernsteinErrorOptions = {},
  ) {
    super(code, message, options);
  }
}
