// Full verification of the audit chain: every segment in name order, streamed line by line,
// with one issue per problem at segment:line and sealed tears reported separately.
import {
  checkLogAgainstCheckpoints,
  type CheckpointFileProblem,
  type CheckpointUnderTest,
  sha256,
  sha256Hex,
} from "../crypto/mod.ts";
import type { AuditCheckpointInput } from "./checkpoint.ts";
import type { AuditKey } from "./key.ts";
import {
  type AuditChainKeys,
  auditChainKeys,
  type AuditIssueCode,
  type AuditRecord,
  checkRecordLine,
  GENESIS_HMAC,
  TORN_RECORD_EVENT,
} from "./record.ts";
import { listSegments, openSegment, type SegmentEntry, type SegmentReader } from "./segments.ts";
import { type RawLine, readLines } from "./_line_reader.ts";
import { readWitnessSync, witnessedLoss } from "./_witness.ts";

/** One problem found by {@linkcode verifyAuditLog}. */
export interface AuditIssue {
  /** Segment file name. */
  segment: string;
  /** 1-based line, or null for a problem with the whole segment. */
  line: number | null;
  /** Stable code. */
  code: AuditIssueCode;
  /** Human text; contains the contract's words (`HMAC mismatch`, …). */
  message: string;
}

/** A torn region that the writer sealed with a matching `chain.torn_record` event. */
export interface AuditSealedTear {
  /** Segment holding the torn bytes and the seal. */
  segment: string;
  /** First torn line, or null when only a terminator was missing. */
  first_line: number | null;
  /** Last torn line, or null when only a terminator was missing. */
  last_line: number | null;
  /** Where the torn bytes start. */
  region_offset: number;
  /** `byte_offset` of the seal: segment size when it was sealed. */
  byte_offset: number;
  /** Number of torn bytes. */
  torn_bytes: number;
  /** `tear_class` of the seal, when it has one. */
  tear_class: string | null;
  /** Line of the sealing record. */
  sealed_by_line: number;
  /**
   * Acknowledged bytes cut off before the seal (the tip witness said the segment was longer),
   * or null when the seal does not say (written before the witness existed, or no loss seen).
   */
  bytes_lost: number | null;
  /** The chain tip the last append had acknowledged, when the seal says. */
  acknowledged_tip: string | null;
}

/** Acknowledged bytes cut off the log and not sealed yet (the next append seals them). */
export interface AuditTruncation {
  /** The segment the tip witness names. */
  segment: string;
  /** Its size when the last append acknowledged it. */
  acknowledged_size: number;
  /** Its size now (0: the file is gone). */
  size: number;
  /** Bytes cut off. */
  bytes_lost: number;
  /** The acknowledged tip (its record is no longer in the log). */
  acknowledged_tip: string;
}

/** Bytes at the end of the newest segment that are not yet sealed (the next append seals them). */
export interface AuditTornTail {
  /** Segment file name. */
  segment: string;
  /** Offset where the non-verifying bytes start. */
  byte_offset: number;
  /** Their length (0 when only the final `\n` is missing). */
  bytes: number;
}

/** Per-segment figures. */
export interface AuditSegmentSummary {
  /** File name. */
  name: string;
  /** Lines read. */
  lines: number;
  /** Size in bytes. */
  bytes: number;
  /** Records that verified. */
  records: number;
}

/** Result of {@linkcode verifyAuditLog}. */
export interface AuditVerifyReport {
  /** No issue at all (sealed tears are not issues). */
  ok: boolean;
  /** Segments in chain order. */
  segments: AuditSegmentSummary[];
  /** Records that verified. */
  records: number;
  /** Of those, legacy records (no `scheme`). */
  legacy_records: number;
  /** HMAC of the last record read (genesis when none). */
  tip: string;
  /** Issues, at most `maxIssues` of them. */
  issues: AuditIssue[];
  /** All issues, including those not kept. */
  issue_count: number;
  /** Sealed tears. */
  tears: AuditSealedTear[];
  /** Unsealed torn tail of the newest segment, if any. */
  torn_tail: AuditTornTail | null;
  /** Acknowledged bytes cut off and not sealed yet, if the tip witness shows any. */
  truncated: AuditTruncation | null;
  /** The checkpoint check (FORMATS.md §8), or null when not asked for. */
  checkpoint: AuditCheckpointReport | null;
}

/** What the audit verification found about checkpoints. */
export interface AuditCheckpointReport {
  /** Lines in `checkpoints.jsonl` (0 when there is none). */
  checkpoints: number;
  /** Checkpoint signatures that verified with the operator key. */
  verified_signatures: number;
  /** Checkpoints (own and external) that match the log. */
  matched: number;
  /** External checkpoints checked. */
  external: number;
  /** The latest checkpoint of the file. */
  latest: { where: string; size: number; root: string; ts: string } | null;
  /** Lines after the latest checkpoint: not yet checkpointed. */
  not_checkpointed: number;
}

/** Options of {@linkcode verifyAuditLog}. */
export interface VerifyAuditOptions {
  /** Issues kept in the report (all are counted). Default 1000. */
  maxIssues?: number;
  /** Read size. Default 1 MiB. */
  chunkSize?: number;
  /** Check the log against its checkpoints (`readAuditCheckpoints`) and these external ones. */
  checkpoints?: AuditCheckpointInput & {
    external?: CheckpointUnderTest[];
    externalProblems?: CheckpointFileProblem[];
  };
}

const CHECKPOINT_CODES = {
  "checkpoint mismatch": "audit.checkpoint_mismatch",
  "log truncated": "audit.log_truncated",
  "invalid checkpoint": "audit.invalid_checkpoint",
  "checkpoint signature invalid": "audit.checkpoint_signature_invalid",
  "checkpoint signature unverifiable": "audit.checkpoint_signature_unverifiable",
} as const;

/** The digests of the audit log's lines (the leaves of its checkpoint tree) with their places. */
class AuditLeaves {
  #buf = new Uint8Array(32 * 4096);
  #count = 0;
  #unknown: number[] = [];
  #segments: { name: string; first: number; firstLine: number }[] = [];

  add(segment: string, line: RawLine): void {
    const last = this.#segments.at(-1);
    if (last === undefined || last.name !== segment) {
      this.#segments.push({ name: segment, first: this.#count, firstLine: line.number });
    }
    if (this.#buf.length < (this.#count + 1) * 32) {
      const grown = new Uint8Array(this.#buf.length * 2);
      grown.set(this.#buf);
      this.#buf = grown;
    }
    if (line.bytes === undefined) this.#unknown.push(this.#count);
    else this.#buf.set(sha256(line.bytes), this.#count * 32);
    this.#count++;
  }

  get count(): number {
    return this.#count;
  }

  where(index: number): string {
    let seg = this.#segments[0];
    for (const s of this.#segments) if (s.first <= index) seg = s;
    return seg === undefined ? `leaf ${index}` : `${seg.name}:${seg.firstLine + index - seg.first}`;
  }

  leaves() {
    return {
      digests: this.#buf.subarray(0, this.#count * 32),
      count: this.#count,
      unknown: this.#unknown,
    };
  }
}

interface PendingLine {
  line: RawLine;
  bytes: Uint8Array | undefined;
  issues: AuditIssue[];
}

const MAX_REGION_BYTES = 16 << 20;

class Walk {
  readonly report: AuditVerifyReport = {
    ok: true,
    segments: [],
    records: 0,
    legacy_records: 0,
    tip: GENESIS_HMAC,
    issues: [],
    issue_count: 0,
    tears: [],
    torn_tail: null,
    truncated: null,
    checkpoint: null,
  };
  /** Stored hmac of the last line that had one (verified or not): what the next record names. */
  tip = GENESIS_HMAC;
  /** HMAC of the last record whose HMAC verified: what a seal names. */
  lastValid = GENESIS_HMAC;
  pending: PendingLine[] = [];
  pendingBytes = 0;
  overflow = false;

  constructor(readonly keys: AuditChainKeys, readonly maxIssues: number) {}

  issue(issue: AuditIssue): void {
    this.report.issue_count++;
    this.report.ok = false;
    if (this.report.issues.length < this.maxIssues) this.report.issues.push(issue);
  }

  addPending(line: RawLine, issues: AuditIssue[]): void {
    let bytes: Uint8Array | undefined;
    if (!this.overflow && line.bytes !== undefined) {
      this.pendingBytes += line.length + 1;
      if (this.pendingBytes > MAX_REGION_BYTES) this.overflow = true;
      else bytes = line.bytes.slice();
    }
    this.pending.push({ line, bytes, issues });
  }

  flushPending(): void {
    for (const p of this.pending) for (const i of p.issues) this.issue(i);
    this.resetPending();
  }

  resetPending(): void {
    this.pending = [];
    this.pendingBytes = 0;
    this.overflow = false;
  }

  /** Whether a verified seal at `sealLine` covers exactly the pending lines. */
  sealMatches(record: AuditRecord, sealLine: RawLine): string | undefined {
    const d = record.details;
    const offset = d.byte_offset;
    if (typeof offset !== "number" || !Number.isInteger(offset)) {
      return "details.byte_offset is not an integer";
    }
    if (typeof d.torn_bytes_sha256 !== "string") return "details.torn_bytes_sha256 is missing";
    if (offset !== sealLine.offset && offset !== sealLine.offset - 1) {
      return `details.byte_offset ${offset} does not end where the seal starts (${sealLine.offset})`;
    }
    if (this.overflow) return "the torn region is too large to check";
    const start = this.pending.length > 0 ? this.pending[0].line.offset : offset;
    if (offset < start) return `details.byte_offset ${offset} is before the torn bytes`;
    const region = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const p of this.pending) {
      if (p.bytes === undefined) return "the torn region holds an over-long line";
      region.set(p.bytes, at);
      at += p.bytes.length;
      if (p.line.terminated) region[at++] = 0x0a;
    }
    const digest = sha256Hex(region.subarray(0, offset - start));
    if (digest !== d.torn_bytes_sha256) {
      return "details.torn_bytes_sha256 does not match the torn bytes";
    }
    return undefined;
  }

  line(segment: SegmentEntry, line: RawLine, summary: AuditSegmentSummary): void {
    const at = { segment: segment.name, line: line.number };
    const newlineIssue: AuditIssue[] = line.terminated ? [] : [{
      ...at,
      code: "audit.missing_newline",
      message: "missing trailing newline",
    }];
    if (line.bytes === undefined) {
      this.addPending(line, [{
        ...at,
        code: "audit.line_too_long",
        message: `line of ${line.length} bytes is too long to be a record`,
      }, ...newlineIssue]);
      return;
    }
    const check = checkRecordLine(line.bytes, this.keys);
    if (check.kind === "bad") {
      this.addPending(line, [{ ...at, code: check.code, message: check.message }, ...newlineIssue]);
      // The next record names this line's hmac; following it reports the damage once.
      if (check.claimedHmac !== undefined) this.tip = check.claimedHmac;
      return;
    }
    const record = check.record;
    if (!check.hmacOk) {
      const issues: AuditIssue[] = [];
      if (record.prev_hmac !== this.tip) issues.push(this.prevIssue(at, this.tip, record));
      issues.push({
        ...at,
        code: "audit.hmac_mismatch",
        message: `HMAC mismatch (expected ${check.expectedHmac.slice(0, 16)}…, got ${
          record.hmac.slice(0, 16)
        }…)`,
      });
      this.addPending(line, [...issues, ...newlineIssue]);
      this.tip = record.hmac;
      return;
    }
    const { expectedPrev, issues } = this.seal(segment, record, line, at);
    this.flushPending();
    if (record.prev_hmac !== expectedPrev) issues.push(this.prevIssue(at, expectedPrev, record));
    if (!check.claimOk) issues.push(falseClaimIssue(at, record));
    issues.push(...newlineIssue);
    for (const i of issues) this.issue(i);
    if (issues.length === 0) {
      this.report.records++;
      summary.records++;
      if (check.legacy) this.report.legacy_records++;
    }
    this.tip = record.hmac;
    this.lastValid = record.hmac;
  }

  /**
   * A seal of this segment's torn tail, if `record` is one: when it matches the bytes it seals
   * they are a recorded tear (not damage) and the seal links to the last valid record.
   */
  seal(
    segment: SegmentEntry,
    record: AuditRecord,
    line: RawLine,
    at: { segment: string; line: number },
  ): { expectedPrev: string; issues: AuditIssue[] } {
    if (record.event_type !== TORN_RECORD_EVENT || record.details.segment !== segment.name) {
      return { expectedPrev: this.tip, issues: [] };
    }
    const mismatch = this.sealMatches(record, line);
    if (mismatch !== undefined) {
      return {
        expectedPrev: this.tip,
        issues: [{
          ...at,
          code: "audit.seal_mismatch",
          message: `chain.torn_record does not match the torn bytes before it: ${mismatch}`,
        }],
      };
    }
    this.report.tears.push(this.tear(segment, record, line));
    this.resetPending();
    return { expectedPrev: this.lastValid, issues: [] };
  }

  /** The tear a matching seal records: the pending (torn) lines and what the seal says of them. */
  tear(segment: SegmentEntry, record: AuditRecord, line: RawLine): AuditSealedTear {
    const first = this.pending[0]?.line;
    const last = this.pending.at(-1)?.line;
    const d = record.details;
    const offset = d.byte_offset as number;
    const regionOffset = first?.offset ?? offset;
    return {
      segment: segment.name,
      first_line: first?.number ?? null,
      last_line: last?.number ?? null,
      region_offset: regionOffset,
      byte_offset: offset,
      torn_bytes: offset - regionOffset,
      tear_class: typeof d.tear_class === "string" ? d.tear_class : null,
      sealed_by_line: line.number,
      bytes_lost: typeof d.bytes_lost === "number" ? d.bytes_lost : null,
      acknowledged_tip: typeof d.acknowledged_tip === "string" ? d.acknowledged_tip : null,
    };
  }

  prevIssue(at: { segment: string; line: number }, expected: string, record: AuditRecord) {
    return {
      ...at,
      code: "audit.prev_hmac_mismatch" as const,
      message: `prev_hmac mismatch (expected ${expected.slice(0, 16)}…, got ${
        record.prev_hmac.slice(0, 16)
      }…)`,
    };
  }
}

/** A record whose claimed predecessor digest is not its prev_hmac. */
function falseClaimIssue(at: { segment: string; line: number }, record: AuditRecord): AuditIssue {
  return {
    ...at,
    code: "audit.false_predecessor_claim",
    message: `false predecessor claim: details.prev_chain_digest ${
      String(record.details.prev_chain_digest).slice(0, 16)
    }… is not prev_hmac ${record.prev_hmac.slice(0, 16)}…`,
  };
}

/**
 * Verifies the whole audit log in `dir`: every segment in name order, streamed, each line
 * checked for byte binding, shape, HMAC, chain linkage and predecessor claims. Torn regions
 * that a matching `chain.torn_record` seals are reported as tears, not issues.
 *
 * @example
 * ```ts ignore
 * const report = await verifyAuditLog(".sdd/audit", await readAuditKey(path));
 * if (!report.ok) for (const i of report.issues) console.log(`${i.segment}:${i.line}: ${i.message}`);
 * ```
 */
export async function verifyAuditLog(
  dir: string,
  key: AuditKey,
  options: VerifyAuditOptions = {},
): Promise<AuditVerifyReport> {
  const walk = new Walk(auditChainKeys(key), options.maxIssues ?? 1000);
  const segments = await listSegments(dir);
  const leaves = options.checkpoints === undefined ? undefined : new AuditLeaves();
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i];
    const newest = i === segments.length - 1;
    const summary: AuditSegmentSummary = { name: segment.name, lines: 0, bytes: 0, records: 0 };
    walk.report.segments.push(summary);
    if (!segment.regular) {
      walk.issue({
        segment: segment.name,
        line: null,
        code: "audit.segment_unreadable",
        message: "not a regular file (symlink, folder or device); not read",
      });
      continue;
    }
    let file: SegmentReader;
    try {
      file = await openSegment(segment);
    } catch (error) {
      walk.issue({
        segment: segment.name,
        line: null,
        code: "audit.segment_unreadable",
        message: `cannot open: ${(error as Error).message}`,
      });
      continue;
    }
    try {
      let lastLine: RawLine | undefined;
      for await (const line of readLines(file, { chunkSize: options.chunkSize })) {
        summary.lines++;
        summary.bytes = line.offset + line.length + (line.terminated ? 1 : 0);
        walk.line(segment, line, summary);
        // Every line is a leaf but the open tail of the newest live segment (not a line yet;
        // older and archived segments can no longer grow).
        const open = newest && !segment.archived && !line.terminated;
        if (leaves !== undefined && !open) leaves.add(segment.name, line);
        lastLine = line;
      }
      if (
        newest && !segment.archived &&
        (walk.pending.length > 0 || (lastLine && !lastLine.terminated))
      ) {
        const start = walk.pending[0]?.line.offset ?? summary.bytes;
        walk.report.torn_tail = {
          segment: segment.name,
          byte_offset: start,
          bytes: summary.bytes - start,
        };
      }
      walk.flushPending();
    } finally {
      file.close();
    }
  }
  walk.report.tip = walk.tip;
  const lost = witnessedLoss(readWitnessSync(dir), segments);
  if (lost !== undefined) {
    walk.report.truncated = {
      segment: lost.segment,
      acknowledged_size: lost.expected_size,
      size: lost.size,
      bytes_lost: lost.bytes_lost,
      acknowledged_tip: lost.acknowledged_tip,
    };
  }
  if (leaves !== undefined && options.checkpoints !== undefined) {
    walk.report.checkpoint = checkCheckpoints(walk, leaves, options.checkpoints);
  }
  return walk.report;
}

function checkCheckpoints(
  walk: Walk,
  leaves: AuditLeaves,
  input: NonNullable<VerifyAuditOptions["checkpoints"]>,
): AuditCheckpointReport {
  const file = "checkpoints.jsonl";
  const issue = (kind: keyof typeof CHECKPOINT_CODES, message: string, where = file) => {
    const colon = where.lastIndexOf(":");
    const segment = colon > 0 && /^\d+$/.test(where.slice(colon + 1))
      ? where.slice(0, colon)
      : where;
    const line = segment === where ? null : Number(where.slice(colon + 1));
    walk.issue({
      segment,
      line,
      code: CHECKPOINT_CODES[kind],
      message: message.startsWith(`${where}: `) ? message.slice(where.length + 2) : message,
    });
  };
  const review = input.review;
  for (const p of [...(review?.problems ?? []), ...(input.externalProblems ?? [])]) {
    const where = /^([^ ]+?): /.exec(p.message)?.[1] ?? file;
    issue(p.kind, p.message, where);
  }
  const all = [...(review?.usable ?? []), ...(input.external ?? [])];
  const log = leaves.leaves();
  const result = checkLogAgainstCheckpoints(log, all, {
    logName: "the audit log",
    where: (i) => leaves.where(i),
    committed: input.committed,
  });
  for (const f of result.findings) issue(f.kind, f.message, f.where);
  const latest = review?.latest;
  return {
    checkpoints: review?.lines ?? 0,
    verified_signatures: review?.verified ?? 0,
    matched: result.matched,
    external: input.external?.length ?? 0,
    latest: latest === undefined ? null : {
      where: latest.where,
      size: latest.checkpoint.size,
      root: latest.checkpoint.root,
      ts: latest.checkpoint.ts,
    },
    not_checkpointed: Math.max(0, log.count - (latest?.checkpoint.size ?? 0)),
  };
}
