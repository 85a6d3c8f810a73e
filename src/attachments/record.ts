// The run's attachment record (`.sdd/runs/<run-id>/attachments.json`): the run-wide attachments
// (their bytes are in CAS), every spawn's blocks, and the per-attachment report rows. It only
// says where to look: bytes come from CAS and a resumed spawn's blocks from the authenticated
// audit events (see resolver.ts).
import { z } from "zod";
import { canonicalize, parseJsonBytes } from "../canonical/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { readFileIfExists, runDir, runFile, writeFileAtomic } from "../io/mod.ts";
import type { AttachmentKind } from "./screen.ts";

/**
 * What became of one declared attachment: attached whole, `partial` (cut, with the reason),
 * `unchanged` (a later spawn of the task re-sent the bytes an earlier one was attested), or
 * `not_attached` (withheld, with the reason).
 */
export type AttachmentOutcome = "attached" | "partial" | "unchanged" | "not_attached";

/** One line of the run's attachment report (and of `bernstein run --json`). */
export interface AttachmentRow {
  /** The task it went to (null: a run-wide attachment refused before any task). */
  task_id: string | null;
  /** Field path of the declaration (`run.attach[0]`, `stages[0].steps[1].attachments[0]`). */
  field: string;
  /** Path as declared. */
  path: string;
  /** `image`, `document` or `text`; null when not read. */
  kind: AttachmentKind | null;
  /** Sniffed MIME type; null when not read. */
  mime: string | null;
  /** Hex SHA-256 of the attached bytes; null when not attached. */
  sha256: string | null;
  /** Size of the attached bytes; null when not attached. */
  size: number | null;
  /** What happened. */
  outcome: AttachmentOutcome;
  /** Why it is partial or not attached, or a note (attached once for two declarations). */
  reason: string | null;
}

/** A run-wide (`--attach`) attachment as frozen when the run started. */
export interface RunWideEntry {
  /** `run.attach[i]`. */
  field: string;
  /** As declared. */
  path: string;
  /** Real path of the file (de-duplication with step declarations). */
  real: string | null;
  /** Line range key (`40-80`, or "" for the whole file). */
  range: string;
  /** Label of a text block (repo-relative path). */
  label: string | null;
  /** Sniffed kind. */
  kind: AttachmentKind | null;
  /** MIME type. */
  mime: string | null;
  /** Digest of the bytes in CAS. */
  sha256: string | null;
  /** Size of those bytes. */
  size: number | null;
  /** First line of a text excerpt. */
  first_line: number | null;
  /** Outcome. */
  outcome: AttachmentOutcome;
  /** Reason. */
  reason: string | null;
}

/** One spawn's blocks. */
export interface SpawnEntry {
  /** Task. */
  task_id: string;
  /** Worker (session) id. */
  session: string;
  /** Resolved worktree path. */
  worktree: string;
  /** Its `worktree_id`. */
  worktree_id: string;
  /** Turn. */
  turn_seq: number;
  /** Digest of every block, in prompt order. */
  blocks: string[];
}

/** The whole record. */
export interface RunAttachmentRecord {
  /** Format version. */
  v: 1;
  /** Run id. */
  run_id: string;
  /** Run-wide attachments. */
  run_wide: RunWideEntry[];
  /** Spawns with attachments, oldest first. */
  spawns: SpawnEntry[];
  /** Report rows (one per task and declaration; a task's latest spawn wins). */
  rows: AttachmentRow[];
}

const Digest = z.string().regex(/^[0-9a-f]{64}$/);
const Outcome = z.enum(["attached", "partial", "unchanged", "not_attached"]);
const Kind = z.enum(["image", "document", "text"]).nullable();

const RecordSchema = z.object({
  v: z.literal(1),
  run_id: z.string().min(1),
  run_wide: z.array(
    z.object({
      field: z.string(),
      path: z.string(),
      real: z.string().nullable(),
      range: z.string(),
      label: z.string().nullable(),
      kind: Kind,
      mime: z.string().nullable(),
      sha256: Digest.nullable(),
      size: z.number().int().nonnegative().nullable(),
      first_line: z.number().int().positive().nullable(),
      outcome: Outcome,
      reason: z.string().nullable(),
    }).strict(),
  ),
  spawns: z.array(
    z.object({
      task_id: z.string().min(1),
      session: z.string().min(1),
      worktree: z.string().min(1),
      worktree_id: z.string().regex(/^[0-9a-f]{16}$/),
      turn_seq: z.number().int().nonnegative(),
      blocks: z.array(Digest),
    }).strict(),
  ),
  rows: z.array(
    z.object({
      task_id: z.string().nullable(),
      field: z.string(),
      path: z.string(),
      kind: Kind,
      mime: z.string().nullable(),
      sha256: Digest.nullable(),
      size: z.number().int().nonnegative().nullable(),
      outcome: Outcome,
      reason: z.string().nullable(),
    }).strict(),
  ),
}).strict();

/** Path of a run's attachment record. */
export function recordPath(sdd: string, runId: string): string {
  return runFile(sdd, runId, "attachments");
}

/** An empty record. */
export function emptyRecord(runId: string): RunAttachmentRecord {
  return { v: 1, run_id: runId, run_wide: [], spawns: [], rows: [] };
}

/** Reads a run's record; undefined when the run has none. */
export async function loadRecord(
  sdd: string,
  runId: string,
): Promise<RunAttachmentRecord | undefined> {
  const path = recordPath(sdd, runId);
  const bytes = await readFileIfExists(path);
  if (bytes === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = parseJsonBytes(bytes);
  } catch (error) {
    throw new BernsteinError("attach.record_invalid", `${path}: ${(error as Error).message}`);
  }
  // Integers come back as numbers or bigints from the BigInt-safe parser; these are small.
  const plain = JSON.parse(
    JSON.stringify(parsed, (_k, v) => typeof v === "bigint" ? Number(v) : v),
  );
  const result = RecordSchema.safeParse(plain);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new BernsteinError(
      "attach.record_invalid",
      `${path}: ${issue.path.join(".") || "(root)"}: ${issue.message}`,
    );
  }
  if (result.data.run_id !== runId) {
    throw new BernsteinError(
      "attach.record_invalid",
      `${path} belongs to run ${result.data.run_id}`,
    );
  }
  return result.data as RunAttachmentRecord;
}

/** Writes a run's record (atomically). */
export async function saveRecord(sdd: string, record: RunAttachmentRecord): Promise<void> {
  const path = recordPath(sdd, record.run_id);
  await Deno.mkdir(runDir(sdd, record.run_id), { recursive: true });
  await writeFileAtomic(path, canonicalize(record, "canon") + "\n");
}
