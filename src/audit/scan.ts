// Authenticated incremental scan: yields only records whose HMAC verified and that link to the
// previous yielded record, and remembers where it stopped so the next scan reads only new bytes.
import { sha256Hex } from "../crypto/mod.ts";
import { readUpTo } from "../io/mod.ts";
import type { AuditKey } from "./key.ts";
import {
  type AuditChainKeys,
  auditChainKeys,
  type AuditRecord,
  checkRecordLine,
  GENESIS_HMAC,
} from "./record.ts";
import { listSegments, openSegment, type SegmentEntry } from "./segments.ts";
import { type RawLine, readLines } from "./_line_reader.ts";

/** Identity of a segment the cursor has moved past; any change forces a full rescan. */
export interface AuditSegmentMark {
  /** File name. */
  name: string;
  /** Size in bytes. */
  size: number;
  /** Inode, when the platform has one. */
  ino: number | null;
  /** Modification time in ms, when known. */
  mtime_ms: number | null;
}

/** Where a scan stopped. Plain JSON, so callers may persist it. */
export interface AuditScanCursor {
  /** Cursor format version. */
  v: 1;
  /** Segments fully consumed, in chain order. */
  closed: AuditSegmentMark[];
  /** Segment being read, or null before the first one. */
  segment: string | null;
  /** Offset after the last consumed line of `segment`. */
  offset: number;
  /** Number of the next line of `segment`. */
  line: number;
  /** Length of the last consumed line of `segment` with its `\n` (0 when none). */
  last_line_length: number;
  /** SHA-256 of those bytes, to notice a rewritten or truncated segment. */
  last_line_sha256: string;
  /** HMAC of the last authenticated record (genesis before the first). */
  tip: string;
}

/** A record the scan authenticated, with where it is. */
export interface ScannedAuditRecord {
  /** The record. */
  record: AuditRecord;
  /** Segment file name. */
  segment: string;
  /** 1-based line. */
  line: number;
}

/** A line the scan did not return. */
export interface AuditScanSkip {
  /** Segment file name. */
  segment: string;
  /** 1-based line. */
  line: number;
  /** Why (`HMAC mismatch`, `prev_hmac mismatch`, …). */
  reason: string;
}

/** Result of {@linkcode scanAuditLog}. */
export interface AuditScanResult {
  /** New authenticated records in chain order (only matching `eventTypes` when given). */
  records: ScannedAuditRecord[];
  /** Pass this to the next scan. */
  cursor: AuditScanCursor;
  /**
   * The given cursor no longer matched the files (a segment changed, shrank, vanished or
   * appeared before it): the scan restarted and `records` are from the start of the log.
   */
  rescanned: boolean;
  /** Lines not returned, at most 100 of them. */
  skipped: AuditScanSkip[];
  /** All lines not returned. */
  skipped_count: number;
}

/** Options of {@linkcode scanAuditLog}. */
export interface ScanAuditOptions {
  /** Where the previous scan stopped; absent means from the start. */
  cursor?: AuditScanCursor;
  /** Return only records of these event types (all records are still authenticated). */
  eventTypes?: readonly string[];
  /** Read size. Default 1 MiB. */
  chunkSize?: number;
  /**
   * Receives each returned record instead of collecting it in `records` (which then stays
   * empty), so a scan of a long log holds no records in memory.
   */
  onRecord?: (record: ScannedAuditRecord) => void;
}

const MAX_SKIPS = 100;

function startCursor(): AuditScanCursor {
  return {
    v: 1,
    closed: [],
    segment: null,
    offset: 0,
    line: 1,
    last_line_length: 0,
    last_line_sha256: "",
    tip: GENESIS_HMAC,
  };
}

async function markOf(segment: SegmentEntry): Promise<AuditSegmentMark> {
  const info = await Deno.lstat(segment.path);
  return {
    name: segment.name,
    size: info.size,
    ino: info.ino,
    mtime_ms: info.mtime?.getTime() ?? null,
  };
}

async function readRange(path: string, offset: number, length: number): Promise<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    await file.seek(offset, Deno.SeekMode.Start);
    return await readUpTo(file, length);
  } finally {
    file.close();
  }
}

/** True when the files still hold exactly what `cursor` consumed. */
async function cursorStillValid(
  cursor: AuditScanCursor,
  segments: readonly SegmentEntry[],
): Promise<boolean> {
  if (cursor.v !== 1) return false;
  if (segments.length < cursor.closed.length) return false;
  for (let i = 0; i < cursor.closed.length; i++) {
    const mark = cursor.closed[i];
    if (segments[i].name !== mark.name) return false;
    const now = await markOf(segments[i]).catch(() => undefined);
    if (
      now === undefined || now.size !== mark.size || now.ino !== mark.ino ||
      now.mtime_ms !== mark.mtime_ms
    ) {
      return false;
    }
  }
  if (cursor.segment === null) return true;
  const current = segments[cursor.closed.length];
  if (current === undefined || current.name !== cursor.segment || !current.regular) return false;
  // An archive cannot be read from an offset cheaply; it never grows either: start again.
  if (current.archived) return false;
  const info = await Deno.lstat(current.path).catch(() => undefined);
  if (info === undefined || info.size < cursor.offset) return false;
  if (cursor.last_line_length === 0) return cursor.offset === 0;
  const tail = await readRange(
    current.path,
    cursor.offset - cursor.last_line_length,
    cursor.last_line_length,
  );
  return tail.length === cursor.last_line_length && sha256Hex(tail) === cursor.last_line_sha256;
}

class Scan {
  readonly records: ScannedAuditRecord[] = [];
  readonly skipped: AuditScanSkip[] = [];
  skippedCount = 0;

  constructor(
    readonly keys: AuditChainKeys,
    readonly cursor: AuditScanCursor,
    readonly types: ReadonlySet<string> | undefined,
    readonly onRecord: ((record: ScannedAuditRecord) => void) | undefined,
  ) {}

  skip(segment: string, line: number, reason: string): void {
    this.skippedCount++;
    if (this.skipped.length < MAX_SKIPS) this.skipped.push({ segment, line, reason });
  }

  consume(segment: string, line: RawLine): void {
    if (line.bytes === undefined) return this.skip(segment, line.number, "line too long");
    const check = checkRecordLine(line.bytes, this.keys);
    if (check.kind === "bad") return this.skip(segment, line.number, check.message);
    if (!check.hmacOk) return this.skip(segment, line.number, "HMAC mismatch");
    const record = check.record;
    if (record.prev_hmac !== this.cursor.tip) {
      return this.skip(
        segment,
        line.number,
        "prev_hmac mismatch: not linked to the last authenticated record",
      );
    }
    this.cursor.tip = record.hmac;
    if (!check.claimOk) return this.skip(segment, line.number, "false predecessor claim");
    if (this.types === undefined || this.types.has(record.event_type)) {
      const scanned = { record, segment, line: line.number };
      if (this.onRecord) this.onRecord(scanned);
      else this.records.push(scanned);
    }
  }
}

/**
 * Scans the audit log in `dir` from `options.cursor` (or the start) and returns the records
 * that authenticate in chain order: HMAC valid, `prev_hmac` equal to the previous returned
 * record's HMAC, no false predecessor claim. The cursor's work is O(new bytes) plus one stat
 * per segment; a segment that changed behind it forces a full rescan.
 *
 * @example
 * ```ts ignore
 * let cursor: AuditScanCursor | undefined;
 * const first = await scanAuditLog(dir, key, { cursor });
 * cursor = first.cursor; // the next scan reads only what was appended since
 * ```
 */
export async function scanAuditLog(
  dir: string,
  key: AuditKey,
  options: ScanAuditOptions = {},
): Promise<AuditScanResult> {
  const segments = await listSegments(dir);
  let rescanned = false;
  let cursor: AuditScanCursor = startCursor();
  if (options.cursor !== undefined) {
    if (await cursorStillValid(options.cursor, segments)) {
      cursor = structuredClone(options.cursor);
    } else {
      rescanned = true;
    }
  }
  const scan = new Scan(
    auditChainKeys(key),
    cursor,
    options.eventTypes ? new Set(options.eventTypes) : undefined,
    options.onRecord,
  );
  for (let i = cursor.closed.length; i < segments.length; i++) {
    const segment = segments[i];
    const newest = i === segments.length - 1;
    if (cursor.segment !== segment.name) {
      cursor.segment = segment.name;
      cursor.offset = 0;
      cursor.line = 1;
      cursor.last_line_length = 0;
      cursor.last_line_sha256 = "";
    }
    if (segment.regular) {
      const file = await openSegment(segment);
      try {
        const lines = readLines(file, {
          start: cursor.offset,
          firstLine: cursor.line,
          chunkSize: options.chunkSize,
        });
        let last: RawLine | undefined;
        for await (const line of lines) {
          // An unterminated last line of the newest segment may still be in flight.
          if (!line.terminated && newest) break;
          scan.consume(segment.name, line);
          last = line;
        }
        if (last !== undefined) {
          const length = last.length + (last.terminated ? 1 : 0);
          cursor.offset = last.offset + length;
          cursor.line = last.number + 1;
          cursor.last_line_length = length;
          // Hashed once per scan, not per line: only the last consumed line is remembered.
          cursor.last_line_sha256 = last.bytes === undefined
            ? ""
            : sha256Hex(last.terminated ? withNewline(last.bytes) : last.bytes);
        }
      } finally {
        file.close();
      }
    } else {
      scan.skip(segment.name, 0, "segment is not a regular file");
    }
    if (!newest) {
      cursor.closed.push(await markOf(segment));
      cursor.segment = null;
      cursor.offset = 0;
      cursor.line = 1;
      cursor.last_line_length = 0;
      cursor.last_line_sha256 = "";
    }
  }
  return {
    records: scan.records,
    cursor,
    rescanned,
    skipped: scan.skipped,
    skipped_count: scan.skippedCount,
  };
}

function withNewline(bytes: Uint8Array): Uint8Array {
  const out = new Uint8Array(bytes.length + 1);
  out.set(bytes);
  out[bytes.length] = 0x0a;
  return out;
}

/**
 * Keeps a scan cursor between calls: each {@linkcode AuditScanner.scan} returns only records
 * appended since the previous one (or everything again, with `rescanned`, after a change).
 */
export class AuditScanner {
  readonly #dir: string;
  readonly #key: AuditKey;
  readonly #types: readonly string[] | undefined;
  #cursor: AuditScanCursor | undefined;

  constructor(dir: string, key: AuditKey, options: { eventTypes?: readonly string[] } = {}) {
    this.#dir = dir;
    this.#key = key;
    this.#types = options.eventTypes;
  }

  /** The cursor after the last scan. */
  get cursor(): AuditScanCursor | undefined {
    return this.#cursor;
  }

  /** New authenticated records since the previous scan. */
  async scan(): Promise<AuditScanResult> {
    const result = await scanAuditLog(this.#dir, this.#key, {
      cursor: this.#cursor,
      eventTypes: this.#types,
    });
    this.#cursor = result.cursor;
    return result;
  }
}
