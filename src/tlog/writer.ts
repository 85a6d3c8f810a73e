// Writes signed checkpoints of a line log (FORMATS.md §8) into its folder: the digests of the
// newly covered lines are appended to `checkpoint-leaves.bin`, then the signed checkpoint to
// `checkpoints.jsonl`, each fsynced. A checkpoint always extends the committed history (the
// last checkpoint's leaves), never whatever the log holds now: if the log no longer holds what
// was committed, the writer refuses instead of signing a rewritten history. The caller holds
// the log's append lock, so nothing is appended meanwhile.
import { join } from "node:path";
import { canonicalBytes, isJsonObject, parseJsonBytes, toHex } from "../canonical/mod.ts";
import {
  checkpointLineBytes,
  type CheckpointLog,
  type CheckpointSigner,
  MERKLE_HASH_BYTES,
  MerkleFrontier,
  merkleHashOfHex,
  merkleLeafHash,
  readCheckpointLines,
  sha256,
  signCheckpoint,
  type SignedCheckpoint,
  verifyCheckpointSignature,
} from "../crypto/mod.ts";
import { appendDurable, type Clock, readFileIfExists, writeFileAtomic } from "../io/mod.ts";
import { CheckpointError } from "./errors.ts";
import { type LogFile, type LogPosition, readLogLines } from "./log_files.ts";

/** The checkpoint files of a log folder, by name (FORMATS.md §8). */
export const CHECKPOINT_FILES = {
  /** The signed checkpoints, one `canon` line each. */
  checkpoints: "checkpoints.jsonl",
  /** The committed line digests, 32 bytes each, in log order. */
  leaves: "checkpoint-leaves.bin",
  /** Where the last checkpoint ended in the log (a hint; rebuilt when it does not hold). */
  state: "checkpoint-state.json",
} as const;

/** Options for {@linkcode writeCheckpoint}. */
export interface WriteCheckpointOptions {
  /** The folder holding the checkpoint files (`.sdd/lineage`, `.sdd/audit`). */
  dir: string;
  /** Which log. */
  log: CheckpointLog;
  /** The log's files in order. */
  files: readonly LogFile[];
  /** The operator signing key. */
  signer: CheckpointSigner;
  /** Source of `ts`. */
  clock: Clock;
}

/** What {@linkcode writeCheckpoint} did. */
export interface CheckpointWriteResult {
  /** The latest checkpoint after the call. */
  checkpoint: SignedCheckpoint;
  /** False when the log had not grown since the latest checkpoint (nothing was written). */
  created: boolean;
  /** Its 1-based line in checkpoints.jsonl. */
  line: number;
  /** Where the covered lines end in the log. */
  end: { file: string; offset: number };
}

/** The state hint: where the last checkpoint ended and its tree's subtree roots. */
interface StateHint {
  size: number;
  root: string;
  frontier: string[];
  file: string;
  offset: number;
  last_line_bytes: number;
}

function formatTs(ns: bigint): string {
  const micros = ns / 1000n;
  const seconds = micros / 1_000_000n;
  const frac = (micros % 1_000_000n).toString().padStart(6, "0");
  return `${new Date(Number(seconds) * 1000).toISOString().slice(0, 19)}.${frac}Z`;
}

async function readHint(path: string): Promise<StateHint | undefined> {
  const bytes = await readFileIfExists(path);
  if (bytes === undefined) return undefined;
  try {
    const v = parseJsonBytes(bytes);
    if (!isJsonObject(v)) return undefined;
    const frontier = v.frontier;
    if (
      v.v === 1 && typeof v.size === "number" && typeof v.root === "string" &&
      Array.isArray(frontier) && frontier.every((h): h is string => typeof h === "string") &&
      typeof v.file === "string" && typeof v.offset === "number" &&
      typeof v.last_line_bytes === "number"
    ) {
      return {
        size: v.size,
        root: v.root,
        frontier,
        file: v.file,
        offset: v.offset,
        last_line_bytes: v.last_line_bytes,
      };
    }
  } catch {
    // A damaged hint only costs a full read of the log.
  }
  return undefined;
}

async function readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    await file.seek(offset, Deno.SeekMode.Start);
    const out = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const n = await file.read(out.subarray(got));
      if (n === null) break;
      got += n;
    }
    return out.subarray(0, got);
  } finally {
    file.close();
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The latest checkpoint of the file, checked: well-formed, ours, signed by this key. */
function latestCheckpoint(
  bytes: Uint8Array | undefined,
  options: WriteCheckpointOptions,
  name: string,
): { checkpoint: SignedCheckpoint; line: number } | undefined {
  if (bytes === undefined || bytes.length === 0) return undefined;
  const { lines, torn } = readCheckpointLines(bytes);
  const refuse = (detail: string) => {
    throw new CheckpointError("checkpoint.file_invalid", `${name}: ${detail}`, {
      hint:
        "no new checkpoint is written over a damaged file; investigate it (the gate reports it)",
    });
  };
  if (torn) refuse(`line ${lines.length + 1} has no trailing newline (torn)`);
  for (const l of lines) if (!l.parsed.ok) refuse(`line ${l.line}: ${l.parsed.problem}`);
  const last = lines.at(-1);
  if (last === undefined || !last.parsed.ok) return undefined;
  if (last.parsed.checkpoint.log !== options.log) {
    refuse(`line ${last.line} is a checkpoint of the ${last.parsed.checkpoint.log} log`);
  }
  if (!verifyCheckpointSignature(last.parsed, options.signer.publicKey)) {
    throw new CheckpointError(
      "checkpoint.other_key",
      `${name}:${last.line} is not signed by this operator key (kid ${options.signer.kid}; it names kid ${last.parsed.jws.header.kid})`,
      { hint: "checkpoints of one log are signed by one operator key" },
    );
  }
  return { checkpoint: last.parsed.checkpoint, line: last.line };
}

/** Rebuilds the frontier of the committed leaves and checks it against the signed root. */
function committedFrontier(
  leaves: Uint8Array,
  latest: SignedCheckpoint,
  leavesName: string,
): MerkleFrontier {
  if (leaves.length < latest.size * MERKLE_HASH_BYTES) {
    throw new CheckpointError(
      "checkpoint.leaves_missing",
      `${leavesName} holds ${
        Math.floor(leaves.length / MERKLE_HASH_BYTES)
      } leaves, the latest checkpoint covers ${latest.size}`,
      {
        hint: "the committed leaf record is damaged; the gate shows whether the log still matches",
      },
    );
  }
  const f = new MerkleFrontier();
  const leaf = new Uint8Array(MERKLE_HASH_BYTES);
  for (let i = 0; i < latest.size; i++) {
    merkleLeafHash(leaves, i * MERKLE_HASH_BYTES, leaf);
    f.push(leaf);
  }
  if (toHex(f.root()) !== latest.root) {
    throw new CheckpointError(
      "checkpoint.leaves_mismatch",
      `${leavesName} does not reproduce the root of the latest checkpoint`,
      {
        hint: "the committed leaf record was changed; the gate shows whether the log still matches",
      },
    );
  }
  return f;
}

/**
 * Finds where the committed lines end in the log by reading it from the start, checking each
 * committed line's digest on the way: a log that no longer holds them is refused.
 */
async function findEnd(
  files: readonly LogFile[],
  leaves: Uint8Array,
  size: number,
  logName: string,
): Promise<LogPosition> {
  let i = 0;
  let position: LogPosition = { file: 0, offset: 0 };
  let mismatch: number | undefined;
  const stop = new Error("stop");
  try {
    await readLogLines(files, { file: 0, offset: 0 }, (l) => {
      if (i >= size) throw stop;
      const d = sha256(l.bytes);
      if (mismatch === undefined && !sameBytes(d, leaves.subarray(i * 32, i * 32 + 32))) {
        mismatch = i;
      }
      position = l.end;
      i++;
    });
  } catch (error) {
    if (error !== stop) throw error;
  }
  if (mismatch !== undefined || i < size) {
    throw new CheckpointError(
      "checkpoint.log_changed",
      `${logName} no longer holds what the latest checkpoint committed to (${
        mismatch === undefined
          ? `it has ${i} lines, the checkpoint covers ${size}`
          : `line ${mismatch + 1} differs`
      }); no checkpoint is signed over a changed history`,
      {
        hint:
          "run the gate ('bernstein lineage gate' / 'bernstein audit verify') to see what changed",
      },
    );
  }
  return position;
}

/** Where the hint says the committed lines end, if that still holds; undefined otherwise. */
async function hintedEnd(
  hint: StateHint | undefined,
  latest: SignedCheckpoint,
  files: readonly LogFile[],
  lastLeaf: Uint8Array | undefined,
): Promise<{ position: LogPosition; frontier: MerkleFrontier } | undefined> {
  if (hint === undefined || hint.size !== latest.size || hint.root !== latest.root) {
    return undefined;
  }
  const hashes = hint.frontier.map((h) => merkleHashOfHex(h));
  if (hashes.some((h) => h === undefined)) return undefined;
  const frontier = MerkleFrontier.fromHashes(hint.size, hashes as Uint8Array[]);
  if (frontier === undefined || toHex(frontier.root()) !== latest.root) return undefined;
  if (latest.size === 0) return { position: { file: 0, offset: 0 }, frontier };
  const index = files.findIndex((f) => f.name === hint.file);
  const file = files[index];
  if (file === undefined || file.gzip || lastLeaf === undefined) return undefined;
  const start = hint.offset - hint.last_line_bytes;
  if (start < 0) return undefined;
  let tail: Uint8Array;
  try {
    tail = await readRange(file.path, start, hint.last_line_bytes);
  } catch {
    return undefined;
  }
  if (tail.length !== hint.last_line_bytes) return undefined;
  const line = tail.at(-1) === 0x0a ? tail.subarray(0, tail.length - 1) : tail;
  if (!sameBytes(sha256(line), lastLeaf)) return undefined;
  return { position: { file: index, offset: hint.offset }, frontier };
}

/**
 * Appends a signed checkpoint covering every line of the log, unless the log has not grown
 * since the latest one. Throws {@linkcode CheckpointError} when the checkpoint files are
 * damaged, signed by another key, or the log no longer holds the committed lines.
 *
 * @example
 * ```ts ignore
 * await withFileLock(lockPath, () =>
 *   writeCheckpoint({ dir: ".sdd/lineage", log: "lineage", files, signer, clock }));
 * ```
 */
export async function writeCheckpoint(
  options: WriteCheckpointOptions,
): Promise<CheckpointWriteResult> {
  const { dir, files } = options;
  const paths: CheckpointPaths = {
    checkpoints: join(dir, CHECKPOINT_FILES.checkpoints),
    leaves: join(dir, CHECKPOINT_FILES.leaves),
    state: join(dir, CHECKPOINT_FILES.state),
  };
  const latest = latestCheckpoint(
    await readFileIfExists(paths.checkpoints),
    options,
    CHECKPOINT_FILES.checkpoints,
  );
  const { frontier, position } = await resumePoint(latest?.checkpoint, paths, options);
  const fresh: Uint8Array[] = [];
  let lastLineBytes = 0;
  const leaf = new Uint8Array(MERKLE_HASH_BYTES);
  const end = await readLogLines(files, position, (l) => {
    const d = sha256(l.bytes);
    fresh.push(d);
    merkleLeafHash(d, 0, leaf);
    frontier.push(leaf);
    lastLineBytes = l.end.offset - l.start;
  });
  if (latest !== undefined && fresh.length === 0) {
    return {
      checkpoint: latest.checkpoint,
      created: false,
      line: latest.line,
      end: { file: files[position.file]?.name ?? "", offset: position.offset },
    };
  }
  const size = latest?.checkpoint.size ?? 0;
  const endFile = files[end.file]?.name ?? "";
  const checkpoint = await commitCheckpoint(paths, options, {
    size,
    fresh,
    frontier,
    end: { file: endFile, offset: end.offset },
    lastLineBytes,
  });
  return {
    checkpoint,
    created: true,
    line: (latest?.line ?? 0) + 1,
    end: { file: endFile, offset: end.offset },
  };
}

/** The three checkpoint files of a log folder. */
interface CheckpointPaths {
  checkpoints: string;
  leaves: string;
  state: string;
}

/**
 * Where hashing resumes after the latest checkpoint: its Merkle frontier and the log position
 * of its last line — from the state file's hint when it still matches, else recomputed from
 * the committed leaves. Nothing checkpointed yet: an empty tree at the log's start.
 */
async function resumePoint(
  latest: SignedCheckpoint | undefined,
  paths: CheckpointPaths,
  options: WriteCheckpointOptions,
): Promise<{ frontier: MerkleFrontier; position: LogPosition }> {
  if (latest === undefined) {
    return { frontier: new MerkleFrontier(), position: { file: 0, offset: 0 } };
  }
  const { files } = options;
  const size = latest.size;
  const lastLeaf = size === 0 ? undefined : await readRange(paths.leaves, (size - 1) * 32, 32)
    .catch(() => undefined);
  const hinted = await hintedEnd(
    await readHint(paths.state),
    latest,
    files,
    lastLeaf?.length === 32 ? lastLeaf : undefined,
  );
  if (hinted !== undefined) return hinted;
  const leaves = (await readFileIfExists(paths.leaves)) ?? new Uint8Array(0);
  return {
    frontier: committedFrontier(leaves, latest, CHECKPOINT_FILES.leaves),
    position: await findEnd(files, leaves, size, files[0]?.name ?? options.log),
  };
}

/**
 * Commits the new lines: their leaf hashes appended (uncommitted leaves of a crash dropped
 * first), the signed checkpoint line appended, then the state file (the next run's hint).
 */
async function commitCheckpoint(
  paths: CheckpointPaths,
  options: WriteCheckpointOptions,
  added: {
    size: number;
    fresh: readonly Uint8Array[];
    frontier: MerkleFrontier;
    end: { file: string; offset: number };
    lastLineBytes: number;
  },
): Promise<SignedCheckpoint> {
  const { size, fresh, frontier, end } = added;
  await Deno.mkdir(options.dir, { recursive: true, mode: 0o700 });
  // Leaves past the latest checkpoint were never committed (a crash before its line): dropped.
  await truncateTo(paths.leaves, size * MERKLE_HASH_BYTES);
  const digests = new Uint8Array(fresh.length * MERKLE_HASH_BYTES);
  fresh.forEach((d, i) => digests.set(d, i * MERKLE_HASH_BYTES));
  await appendDurable(paths.leaves, digests, { mode: 0o644 });
  const checkpoint = signCheckpoint({
    log: options.log,
    root: toHex(frontier.root()),
    size: size + fresh.length,
    ts: formatTs(options.clock.nowNs()),
  }, options.signer);
  const line = checkpointLineBytes(checkpoint);
  const withNewline = new Uint8Array(line.length + 1);
  withNewline.set(line);
  withNewline[line.length] = 0x0a;
  await appendDurable(paths.checkpoints, withNewline, { mode: 0o644 });
  await writeFileAtomic(
    paths.state,
    canonicalBytes({
      v: 1,
      size: checkpoint.size,
      root: checkpoint.root,
      frontier: frontier.hashes().map(toHex),
      file: end.file,
      offset: end.offset,
      last_line_bytes: fresh.length > 0 ? added.lastLineBytes : 0,
    }, "canon"),
    { mode: 0o644 },
  );
  return checkpoint;
}

async function truncateTo(path: string, length: number): Promise<void> {
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  if (info.size > length) await Deno.truncate(path, length);
}
