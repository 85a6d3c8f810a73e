import { AttachmentSpawnPathError } from "./errors.ts";

/**
 * How an agent process can be started. This codebase has only the direct subprocess
 * (`startAgent`: `Deno.Command` in a git worktree); the other kinds name paths that do not
 * exist yet, so that adding one cannot silently carry (or drop) attachments.
 */
export type SpawnPath =
  | "direct-subprocess"
  | "container"
  | "sandbox"
  | "runtime-bridge"
  | "in-process";

/** The one spawn path that carries attachments. */
export const DIRECT_SPAWN: SpawnPath = "direct-subprocess";

/**
 * The single isolation check: attachments travel only on the direct-subprocess spawn path;
 * any other path with attachments is refused up front.
 */
export function refuseNonDirectSpawn(path: string, attachmentCount: number): void {
  if (attachmentCount === 0 || path === DIRECT_SPAWN) return;
  throw new AttachmentSpawnPathError(
    `the run has ${attachmentCount} attachment(s), but agents would start through the '${path}' ` +
      `spawn path; only the '${DIRECT_SPAWN}' path carries attachments`,
    { hint: "run without attachments, or on the direct subprocess path" },
  );
}
