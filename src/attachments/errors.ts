// Attachment errors: refused files, capability and spawn-path mismatches, unreadable or
// unattested content, worktree access outside the allowed folders.

import { BernsteinError, type BernsteinErrorOptions, ExitCode } from "../errors/mod.ts";
import { ATTACH_INVALID_ALIASES } from "../plan/mod.ts";

/** An attachment refused at the door (one code for every reason; the field path comes first). */
export class AttachmentError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("attach.invalid", message, { exitCode: 2, aliases: ATTACH_INVALID_ALIASES, ...options });
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

/**
 * Several attachments refused at once (the gate lists every problem, not only the first): the
 * code of the problems when they share one, else `attach.invalid`; one line per problem.
 */
export class AttachmentProblemsError extends BernsteinError {
  /** Each problem, in declaration order. */
  readonly problems: readonly BernsteinError[];

  constructor(problems: readonly BernsteinError[]) {
    const codes = new Set(problems.map((p) => p.code));
    const lines = problems.map((p) =>
      `  [${p.code}] ${p.location ? `${p.location}: ` : ""}${p.message}`
    );
    super(
      codes.size === 1 ? problems[0].code : "attach.invalid",
      `${problems.length} attachment problems; nothing was started:\n${lines.join("\n")}`,
      {
        exitCode: ExitCode.usage,
        ...(codes.size === 1 && problems[0].aliases ? { aliases: problems[0].aliases } : {}),
      },
    );
    this.problems = problems;
  }
}

/** Throws nothing for no problem, the problem itself for one, all of them together for more. */
export function throwProblems(problems: readonly BernsteinError[]): void {
  if (problems.length === 0) return;
  if (problems.length === 1) throw problems[0];
  throw new AttachmentProblemsError(problems);
}
