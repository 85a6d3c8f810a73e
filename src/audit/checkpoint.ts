// Signed checkpoints of the audit log (FORMATS.md §8): its lines across segments in chain
// order are the leaves of an RFC 9162 tree; `.sdd/audit/checkpoints.jsonl` holds the operator's
// signed checkpoints and `checkpoint-leaves.bin` the committed line digests. Writing takes the
// chain lock the writer appends under; reading for verification never writes.
import { join } from "node:path";
import {
  type CheckpointSigner,
  type CommittedLeaves,
  reviewCheckpointFile,
} from "../crypto/mod.ts";
import { type Clock, systemClock, withFileLock } from "../io/mod.ts";
import {
  CHECKPOINT_FILES,
  type CheckpointWriteResult,
  type LogFile,
  writeCheckpoint,
} from "../tlog/mod.ts";
import { listSegments } from "./segments.ts";

const LOCK_FILE = ".chain.lock";

/** The audit log's files in chain order: archived segments (gzip), then live segments. */
export async function auditLogFiles(dir: string): Promise<LogFile[]> {
  const segments = await listSegments(dir);
  return segments.filter((s) => s.regular).map((s) => ({
    name: s.name,
    path: s.path,
    gzip: s.archived,
    frozen: s.archived,
  }));
}

/**
 * Appends a signed checkpoint of the whole audit log in `dir`, under the lock appends take.
 * Nothing is written when the log has not grown since the latest checkpoint.
 *
 * @example
 * ```ts ignore
 * const r = await checkpointAuditLog(".sdd/audit", signer);
 * r.checkpoint.size; // lines covered
 * ```
 */
export async function checkpointAuditLog(
  dir: string,
  signer: CheckpointSigner,
  options: { clock?: Clock } = {},
): Promise<CheckpointWriteResult> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  return await withFileLock(join(dir, LOCK_FILE), async () =>
    writeCheckpoint({
      dir,
      log: "audit",
      files: await auditLogFiles(dir),
      signer,
      clock: options.clock ?? systemClock,
    }));
}

/** The audit log's checkpoints as a verification reads them. */
export interface AuditCheckpointInput {
  /** The reviewed checkpoints file; absent when there is none. */
  review?: ReturnType<typeof reviewCheckpointFile>;
  /** The committed leaf record. */
  committed: CommittedLeaves;
}

async function readIfRegular(path: string): Promise<Uint8Array | undefined | string> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  if (!info.isFile) return "is not a regular file (refused)";
  return await Deno.readFile(path);
}

/** Reads `dir`'s checkpoint files (read-only), checking signatures with `publicKey`. */
export async function readAuditCheckpoints(
  dir: string,
  publicKey: Uint8Array | undefined,
): Promise<AuditCheckpointInput> {
  const file = await readIfRegular(join(dir, CHECKPOINT_FILES.checkpoints));
  const leaves = await readIfRegular(join(dir, CHECKPOINT_FILES.leaves));
  const name = CHECKPOINT_FILES.leaves;
  return {
    review: typeof file === "string"
      ? {
        usable: [],
        lines: 0,
        verified: 0,
        problems: [{
          kind: "invalid checkpoint",
          message: `${CHECKPOINT_FILES.checkpoints}: invalid checkpoint: ${file}`,
        }],
      }
      : file === undefined
      ? undefined
      : reviewCheckpointFile(file, { name: CHECKPOINT_FILES.checkpoints, log: "audit", publicKey }),
    committed: leaves instanceof Uint8Array
      ? { name, digests: leaves, count: Math.floor(leaves.length / 32) }
      : { name, problem: leaves ?? "is missing" },
  };
}
