// The spawn paths attachments may travel on (direct subprocess, sandbox), and the refusal for
// any other.

import { AttachmentSpawnPathError } from "./errors.ts";

/**
 * How an agent process can be started: directly (`startAgent`: `Deno.Command` in a git
 * worktree), or in the sandbox, which wraps that same command line (bwrap or sandbox-exec
 * around it, the same stdin); the other kinds name paths that do not exist yet, so that adding
 * one cannot silently carry (or drop) attachments.
 */
export type SpawnPath =
  | "direct-subprocess"
  | "container"
  | "sandbox"
  | "runtime-bridge"
  | "in-process";

/** The direct spawn path. */
export const DIRECT_SPAWN: SpawnPath = "direct-subprocess";

/** Spawn paths with an attachment slot: they start the adapter's own command line and stdin. */
export const ATTACHMENT_SPAWN_PATHS: readonly SpawnPath[] = ["direct-subprocess", "sandbox"];

/**
 * The single isolation check: attachments travel only on spawn paths that carry the adapter's
 * own command line (direct subprocess, sandbox); any other path with attachments is refused.
 */
export function refuseNonDirectSpawn(path: string, attachmentCount: number): void {
  if (attachmentCount === 0 || (ATTACHMENT_SPAWN_PATHS as readonly string[]).includes(path)) {
    return;
  }
  throw new AttachmentSpawnPathError(
    `the run has ${attachmentCount} attachment(s), but agents would start through the '${path}' ` +
      `spawn path; only ${
        ATTACHMENT_SPAWN_PATHS.map((p) => `'${p}'`).join(" and ")
      } carry attachments`,
    { hint: "run without attachments, or on the direct subprocess or sandbox path" },
  );
}
