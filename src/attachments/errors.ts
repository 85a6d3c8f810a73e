import { BernsteinError, type BernsteinErrorOptions, ExitCode } from "../errors/mod.ts";

/** An attachment refused at the door (one code for every reason; the field path comes first). */
export class AttachmentError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("attach.invalid", message, { exitCode: 2, ...options });
  }
}

/**
 * An image for an adapter that cannot take images (or not this type or size): the run is
 * refused before any worktree or process exists; the message names the adapters that can.
 */
export class AttachmentCapabilityError extends BernsteinError {
  constructor(message: string, options: Omit<BernsteinErrorOptions, "exitCode"> = {}) {
    super("attach.adapter_not_multimodal", message, { ...options, exitCode: ExitCode.usage });
  }
}

/** Attachments of a spawn that could not be read: the spawn is aborted, naming every path. */
export class AttachmentUnreadableError extends BernsteinError {
  constructor(message: string, options: Omit<BernsteinErrorOptions, "exitCode"> = {}) {
    super("attach.unreadable", message, { ...options, exitCode: ExitCode.failed });
  }
}

/** A run with attachments on a spawn path other than the direct subprocess. */
export class AttachmentSpawnPathError extends BernsteinError {
  constructor(message: string, options: Omit<BernsteinErrorOptions, "exitCode"> = {}) {
    super("attach.spawn_path", message, { ...options, exitCode: ExitCode.usage });
  }
}

/** The bytes were attested for another worktree than the one asking for them. */
export class WorktreeAccessDenied extends BernsteinError {
  constructor(message: string, options: Omit<BernsteinErrorOptions, "exitCode"> = {}) {
    super("attach.worktree_access_denied", message, { ...options, exitCode: ExitCode.failed });
  }
}

/** The audit chain holding the `multimodal.attach` events does not verify. */
export class AttachmentChainUnverified extends BernsteinError {
  constructor(message: string, options: Omit<BernsteinErrorOptions, "exitCode"> = {}) {
    super("attach.chain_unverified", message, {
      hint: "'bernstein audit verify' shows why",
      ...options,
      exitCode: ExitCode.failed,
    });
  }
}

/** No authenticated `multimodal.attach` event attests the digest (or the worker's turn). */
export class AttachmentNotAttested extends BernsteinError {
  constructor(message: string, options: Omit<BernsteinErrorOptions, "exitCode"> = {}) {
    super("attach.not_attested", message, { ...options, exitCode: ExitCode.failed });
  }
}
