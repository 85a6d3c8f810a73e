// Checks a log against its checkpoints (FORMATS.md §8): the RFC 9162 root of the log's first
// `size` lines must be each checkpoint's root. One streaming pass over the line digests (a
// frontier, logarithmic memory) does every checkpoint; only when one fails is the committed
// leaf record (`checkpoint-leaves.bin`) consulted, to name the first differing leaf and say
// what happened there (deleted, inserted, reordered, rewritten, truncated). Pure.
import { toHex } from "../canonical/mod.ts";
import {
  type CheckpointLog,
  readCheckpointLines,
  type SignedCheckpoint,
  verifyCheckpointSignature,
} from "./checkpoint.ts";
import { MERKLE_HASH_BYTES, MerkleFrontier, merkleLeafHash } from "./merkle.ts";

/** A checkpoint to check, with where it came from. */
export interface CheckpointUnderTest {
  /** The checkpoint (its signature is checked by the caller). */
  checkpoint: SignedCheckpoint;
  /** Where it is, for messages (`checkpoints.jsonl:3`, `auditor-copy.json`). */
  where: string;
  /** How to name it (`checkpoint #3`). */
  label: string;
}

/** The SHA-256 digests of a log's lines, in order. */
export interface LogLeaves {
  /** The digests back to back (32 bytes each). */
  digests: Uint8Array;
  /** Lines. */
  count: number;
  /** Lines whose digest is unknown (longer than the reader keeps), ascending. */
  unknown?: readonly number[];
}

/** The leaf record the writer kept: the digests it committed to. */
export type CommittedLeaves =
  | { name: string; digests: Uint8Array; count: number }
  | { name: string; problem: string };

/** Options for {@linkcode checkLogAgainstCheckpoints}. */
export interface CheckpointCheckOptions {
  /** The log's name in messages (`log.jsonl`). */
  logName: string;
  /** Where the line of a leaf index is, for messages (`log.jsonl:58`). */
  where: (index: number) => string;
  /** The committed leaf record, when there is one. */
  committed?: CommittedLeaves;
}

/** What a failed check found. */
export interface CheckpointFinding {
  /** `checkpoint mismatch` or `log truncated`. */
  kind: "checkpoint mismatch" | "log truncated";
  /** One human line, starting with where the checkpoint is. */
  message: string;
  /** The checkpoint concerned (the first that failed, for the summary line the last). */
  where: string;
}

/** The outcome of checking a log against its checkpoints. */
export interface CheckpointCheckResult {
  /** Problems (empty when every checkpoint matches). */
  findings: CheckpointFinding[];
  /** Checkpoints that match the log. */
  matched: number;
}

function digestAt(buf: Uint8Array, i: number): Uint8Array {
  return buf.subarray(i * MERKLE_HASH_BYTES, (i + 1) * MERKLE_HASH_BYTES);
}

function sameDigest(a: Uint8Array, ai: number, b: Uint8Array, bi: number): boolean {
  const x = ai * MERKLE_HASH_BYTES;
  const y = bi * MERKLE_HASH_BYTES;
  for (let k = 0; k < MERKLE_HASH_BYTES; k++) if (a[x + k] !== b[y + k]) return false;
  return true;
}

function indexOfDigest(buf: Uint8Array, count: number, d: Uint8Array): number {
  for (let i = 0; i < count; i++) if (sameDigest(buf, i, d, 0)) return i;
  return -1;
}

function short(hex: string): string {
  return `${hex.slice(0, 16)}…`;
}

/** Roots of a digest list at ascending sizes, computed incrementally. */
class Roots {
  readonly #frontier = new MerkleFrontier();
  readonly #leaf = new Uint8Array(MERKLE_HASH_BYTES);
  constructor(readonly digests: Uint8Array, readonly count: number) {}

  /** Hex root of the first `size` digests (ascending calls only), or undefined past the end. */
  at(size: number): string | undefined {
    if (size > this.count) return undefined;
    while (this.#frontier.size < size) {
      merkleLeafHash(this.digests, this.#frontier.size * MERKLE_HASH_BYTES, this.#leaf);
      this.#frontier.push(this.#leaf);
    }
    return toHex(this.#frontier.root());
  }
}

/**
 * Checks every checkpoint against the log's line digests. The first failing checkpoint (by
 * size) gets a full explanation; later ones that fail too are summed up in one more finding.
 *
 * @example
 * ```ts ignore
 * const r = checkLogAgainstCheckpoints({ digests, count }, checkpoints, {
 *   logName: "log.jsonl", where: (i) => `log.jsonl:${i + 1}`, committed });
 * for (const f of r.findings) console.log(f.message);
 * ```
 */
export function checkLogAgainstCheckpoints(
  log: LogLeaves,
  checkpoints: readonly CheckpointUnderTest[],
  options: CheckpointCheckOptions,
): CheckpointCheckResult {
  const sorted = [...checkpoints].sort((a, b) => a.checkpoint.size - b.checkpoint.size);
  const logRoots = new Roots(log.digests, log.count);
  const failed: { c: CheckpointUnderTest; logRoot?: string }[] = [];
  let matched = 0;
  const firstUnknown = log.unknown?.[0];
  for (const c of sorted) {
    const size = c.checkpoint.size;
    if (size > log.count) {
      failed.push({ c });
      continue;
    }
    if (firstUnknown !== undefined && firstUnknown < size) {
      failed.push({ c });
      continue;
    }
    const root = logRoots.at(size) as string;
    if (root === c.checkpoint.root) matched++;
    else failed.push({ c, logRoot: root });
  }
  if (failed.length === 0) return { findings: [], matched };
  const findings = [explain(log, failed[0], options)];
  if (failed.length > 1) {
    const last = failed[failed.length - 1].c;
    findings.push({
      kind: "checkpoint mismatch",
      where: last.where,
      message: `${last.where}: checkpoint mismatch: ${failed.length - 1} later checkpoint${
        failed.length === 2 ? "" : "s"
      } (up to ${last.label}, size ${last.checkpoint.size}) do${
        failed.length === 2 ? "es" : ""
      } not match ${options.logName} either`,
    });
  }
  return { findings, matched };
}

function explain(
  log: LogLeaves,
  failure: { c: CheckpointUnderTest; logRoot?: string },
  options: CheckpointCheckOptions,
): CheckpointFinding {
  const { c, logRoot } = failure;
  const { size, ts, root } = c.checkpoint;
  const head = `${c.label} (size ${size}, ${ts})`;
  const committed = options.committed;
  const usable = committed !== undefined && "digests" in committed ? committed : undefined;
  // The committed record counts only when it reproduces this checkpoint's signed root.
  const authentic = usable !== undefined &&
    new Roots(usable.digests, usable.count).at(size) === root;
  let diff: number | undefined;
  if (authentic) {
    const common = Math.min(log.count, size);
    for (let i = 0; i < common && diff === undefined; i++) {
      if (!sameDigest(log.digests, i, usable.digests, i)) diff = i;
    }
    if (diff === undefined && log.count < size) diff = log.count;
  }
  const firstUnknown = log.unknown?.[0];
  const shorter = size > log.count;
  if (shorter && (diff === undefined || diff >= log.count)) {
    return {
      kind: "log truncated",
      where: c.where,
      message:
        `${c.where}: log truncated: ${head} covers ${size} lines, ${options.logName} has ${log.count}`,
    };
  }
  let detail: string;
  if (firstUnknown !== undefined && firstUnknown < Math.min(size, log.count)) {
    detail = `${
      options.where(firstUnknown)
    } is longer than the reader keeps, so the root cannot be computed`;
  } else if (authentic && diff !== undefined) {
    detail = leafDetail(log, diff, usable as LeafRecord, options);
    if (shorter) detail += `; the log has ${log.count} lines, the checkpoint covers ${size}`;
  } else {
    const why = committed === undefined
      ? "there is no committed leaf record"
      : "problem" in committed
      ? `${committed.name} ${committed.problem}`
      : `${committed.name} does not reproduce this checkpoint either`;
    detail = `its first ${size} lines hash to root ${short(logRoot ?? "")}, the checkpoint says ${
      short(root)
    } (${why}, so the first differing leaf cannot be named)`;
  }
  return {
    kind: "checkpoint mismatch",
    where: c.where,
    message:
      `${c.where}: checkpoint mismatch: ${head} does not match ${options.logName}: ${detail}`,
  };
}

interface LeafRecord {
  digests: Uint8Array;
  count: number;
}

function leafDetail(
  log: LogLeaves,
  i: number,
  committed: LeafRecord,
  options: CheckpointCheckOptions,
): string {
  const at = `first differing leaf ${i} (${options.where(i)})`;
  const was = `sha256:${toHex(digestAt(committed.digests, i))}`;
  if (i >= log.count) return `${at}: the log ends there; the checkpoint committed ${was}`;
  const now = `sha256:${toHex(digestAt(log.digests, i))}`;
  const wasAt = indexOfDigest(log.digests, log.count, digestAt(committed.digests, i));
  const nowAt = indexOfDigest(committed.digests, committed.count, digestAt(log.digests, i));
  if (wasAt < 0 && nowAt < 0) {
    return `${at}: the checkpoint committed ${was}, the log has ${now} (line rewritten)`;
  }
  if (wasAt < 0) {
    return `${at}: the committed line ${was} is no longer in the log (deleted); the log has ${now} there`;
  }
  if (nowAt < 0) {
    return `${at}: ${now} was not in the committed log (inserted); the committed line ${was} is now at ${
      options.where(wasAt)
    }`;
  }
  return `${at}: the committed line ${was} is now at ${options.where(wasAt)} (reordered)`;
}

/** A problem with a checkpoints file itself. */
export interface CheckpointFileProblem {
  /** `invalid checkpoint`, `checkpoint signature invalid` or `checkpoint signature unverifiable`. */
  kind: "invalid checkpoint" | "checkpoint signature invalid" | "checkpoint signature unverifiable";
  /** One human line, starting with `<file>:<line>`. */
  message: string;
}

/** What {@linkcode reviewCheckpointFile} found. */
export interface CheckpointFileReview {
  /** Checkpoints to check against the log: well-formed, in order, signature not refuted. */
  usable: CheckpointUnderTest[];
  /** Problems with the file. */
  problems: CheckpointFileProblem[];
  /** The last well-formed checkpoint in the file. */
  latest?: CheckpointUnderTest;
  /** Lines in the file. */
  lines: number;
  /** Signatures that verified (0 when no key was given). */
  verified: number;
}

/** Options for {@linkcode reviewCheckpointFile}. */
export interface ReviewCheckpointFileOptions {
  /** The file's name in messages (`checkpoints.jsonl`). */
  name: string;
  /** The log its checkpoints must be of. */
  log: CheckpointLog;
  /** The operator's public key; absent: signatures are reported unverifiable. */
  publicKey?: Uint8Array;
}

/**
 * Reads a checkpoints file: every line a well-formed checkpoint of `options.log`, sizes and
 * times never going back, equal sizes with equal roots, each signed by the operator key. Lines
 * that break a rule are problems; a badly signed checkpoint is not used for the log check.
 */
export function reviewCheckpointFile(
  bytes: Uint8Array,
  options: ReviewCheckpointFileOptions,
): CheckpointFileReview {
  const { lines, torn } = readCheckpointLines(bytes);
  const review: CheckpointFileReview = {
    usable: [],
    problems: [],
    lines: lines.length,
    verified: 0,
  };
  const at = (line: number) => `${options.name}:${line}`;
  const problem = (kind: CheckpointFileProblem["kind"], line: number, text: string) =>
    review.problems.push({ kind, message: `${at(line)}: ${kind}: ${text}` });
  let previous: CheckpointUnderTest | undefined;
  let unverifiable = 0;
  for (const l of lines) {
    if (!l.parsed.ok) {
      problem("invalid checkpoint", l.line, l.parsed.problem);
      continue;
    }
    const c = l.parsed.checkpoint;
    const entry: CheckpointUnderTest = {
      checkpoint: c,
      where: at(l.line),
      label: `checkpoint #${l.line}`,
    };
    if (c.log !== options.log) {
      problem(
        "invalid checkpoint",
        l.line,
        `is a checkpoint of the ${c.log} log, not ${options.log}`,
      );
      continue;
    }
    review.latest = entry;
    if (options.publicKey === undefined) {
      unverifiable++;
    } else if (verifyCheckpointSignature(l.parsed, options.publicKey)) {
      review.verified++;
    } else {
      problem(
        "checkpoint signature invalid",
        l.line,
        `signature (kid ${
          JSON.stringify(l.parsed.jws.header.kid)
        }) does not verify with the operator key`,
      );
      continue;
    }
    if (previous !== undefined) {
      const p = previous.checkpoint;
      if (c.size < p.size) {
        problem(
          "invalid checkpoint",
          l.line,
          `size ${c.size} is smaller than the ${p.size} of ${previous.label}: the log's history shrank`,
        );
      } else if (c.size === p.size && c.root !== p.root) {
        problem(
          "invalid checkpoint",
          l.line,
          `size ${c.size} with another root than ${previous.label}: a fork of history`,
        );
      } else if (c.ts < p.ts) {
        problem(
          "invalid checkpoint",
          l.line,
          `ts ${c.ts} is before the ${p.ts} of ${previous.label}`,
        );
      }
    }
    previous = entry;
    review.usable.push(entry);
  }
  if (torn) {
    problem("invalid checkpoint", lines.length + 1, "missing trailing newline (torn last line)");
  }
  if (unverifiable > 0) {
    review.problems.push({
      kind: "checkpoint signature unverifiable",
      message:
        `${options.name}: checkpoint signature unverifiable: no operator public key to check ${unverifiable} checkpoint signature${
          unverifiable === 1 ? "" : "s"
        } with (pass the operator's public key)`,
    });
  }
  return review;
}
