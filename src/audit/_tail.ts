// The writer's view of the chain end: the tip to build on, and whether the newest segment ends
// in bytes that are not a valid record + `\n` (a torn tail that must be sealed first).
import { sha256Stream } from "../crypto/mod.ts";
import { readUpTo } from "../io/mod.ts";
import { AuditError } from "./errors.ts";
import { type AuditChainKeys, checkRecordLine, GENESIS_HMAC } from "./record.ts";
import { type LineSource, readLines } from "./_line_reader.ts";
import { openSegment, type SegmentEntry } from "./segments.ts";
import type { WitnessedLoss } from "./_witness.ts";

/** How the tail was torn. */
export type TearClass = "missing_terminator" | "partial_record" | "invalid_record";

/** A torn tail of the newest segment: bytes after its last valid record. */
export interface TornTail {
  /** Segment file name. */
  segment: string;
  /** End of the last valid record (after its `\n`), or where the missing `\n` goes. */
  regionStart: number;
  /** Segment size when examined; the torn bytes are `[regionStart, size)`. */
  size: number;
  /** The segment's last byte is `\n`. */
  terminated: boolean;
  /** Hex SHA-256 of the torn bytes. */
  sha256: string;
  /** How it was torn. */
  tearClass: TearClass;
}

/** The end of the chain as a writer needs it. */
export interface TailState {
  /** HMAC of the last valid record (genesis when there is none). */
  tip: string;
  /** The newest segment, when there is one. */
  newest?: { name: string; path: string; size: number; ino: number | null };
  /** Set when the newest segment must be sealed before appending. */
  torn?: TornTail;
  /** Set when the tip witness shows acknowledged bytes cut off (sealed too). */
  lost?: WitnessedLoss;
}

const TAIL_WINDOW = 64 * 1024;

function isValidRecordLine(line: Uint8Array, keys: AuditChainKeys): string | undefined {
  const check = checkRecordLine(line, keys);
  return check.kind === "record" && check.hmacOk ? check.record.hmac : undefined;
}

async function readAt(file: Deno.FsFile, offset: number, length: number): Promise<Uint8Array> {
  await file.seek(offset, Deno.SeekMode.Start);
  return await readUpTo(file, length);
}

/** The file's last line (without `\n`), reading backwards only as far as needed. */
async function readLastLine(
  file: Deno.FsFile,
  size: number,
): Promise<{ bytes: Uint8Array; offset: number; terminated: boolean }> {
  let window = Math.min(size, TAIL_WINDOW);
  for (;;) {
    const start = size - window;
    const data = await readAt(file, start, window);
    const terminated = data.length > 0 && data[data.length - 1] === 0x0a;
    const end = terminated ? data.length - 1 : data.length;
    const nl = data.lastIndexOf(0x0a, end - 1);
    if (nl >= 0 || start === 0) {
      const from = nl + 1;
      return { bytes: data.slice(from, end), offset: start + from, terminated };
    }
    window = Math.min(size, window * 2);
  }
}

/** HMAC and end offset of the last valid record of a segment, walking it from the start. */
async function lastValidRecord(
  file: LineSource,
  keys: AuditChainKeys,
): Promise<{ hmac: string; end: number } | undefined> {
  let found: { hmac: string; end: number } | undefined;
  for await (const line of readLines(file)) {
    if (!line.terminated || line.bytes === undefined) continue;
    const hmac = isValidRecordLine(line.bytes, keys);
    if (hmac !== undefined) found = { hmac, end: line.offset + line.length + 1 };
  }
  return found;
}

async function sha256Range(file: Deno.FsFile, start: number, end: number): Promise<string> {
  const hash = sha256Stream();
  let at = start;
  while (at < end) {
    const chunk = await readAt(file, at, Math.min(1 << 20, end - at));
    if (chunk.length === 0) break;
    hash.update(chunk);
    at += chunk.length;
  }
  return hash.hexDigest();
}

async function tipOfEarlierSegments(
  segments: readonly SegmentEntry[],
  keys: AuditChainKeys,
): Promise<string> {
  for (let i = segments.length - 1; i >= 0; i--) {
    if (!segments[i].regular) continue;
    const file = await openSegment(segments[i]);
    try {
      const found = await lastValidRecord(file, keys);
      if (found) return found.hmac;
    } finally {
      file.close();
    }
  }
  return GENESIS_HMAC;
}

/**
 * Reads the chain end from `segments` (in chain order). Normally only the newest segment's
 * last line is read; a torn tail costs one walk of that segment.
 */
export async function readTailState(
  segments: readonly SegmentEntry[],
  keys: AuditChainKeys,
): Promise<TailState> {
  if (segments.length === 0) return { tip: GENESIS_HMAC };
  const newestEntry = segments[segments.length - 1];
  if (!newestEntry.regular) {
    throw new AuditError(
      "audit.segment_not_regular",
      `${newestEntry.path} is not a regular file; refusing to append through it`,
    );
  }
  const earlier = segments.slice(0, -1);
  // Only archives left (every live day archived): the chain continues from the archive's tip
  // in a new live segment; an archive is never appended to or sealed.
  if (newestEntry.archived) return { tip: await tipOfEarlierSegments(segments, keys) };
  const file = await Deno.open(newestEntry.path, { read: true });
  try {
    const info = await file.stat();
    const size = info.size;
    const newest = { name: newestEntry.name, path: newestEntry.path, size, ino: info.ino };
    if (size === 0) return { tip: await tipOfEarlierSegments(earlier, keys), newest };
    const last = await readLastLine(file, size);
    const lastHmac = isValidRecordLine(last.bytes, keys);
    if (lastHmac !== undefined && last.terminated) return { tip: lastHmac, newest };
    if (lastHmac !== undefined) {
      return {
        tip: lastHmac,
        newest,
        torn: {
          segment: newestEntry.name,
          regionStart: size,
          size,
          terminated: false,
          sha256: await sha256Range(file, size, size),
          tearClass: "missing_terminator",
        },
      };
    }
    const found = await lastValidRecord(file, keys);
    const regionStart = found?.end ?? 0;
    return {
      tip: found?.hmac ?? await tipOfEarlierSegments(earlier, keys),
      newest,
      torn: {
        segment: newestEntry.name,
        regionStart,
        size,
        terminated: last.terminated,
        sha256: await sha256Range(file, regionStart, size),
        tearClass: last.terminated ? "invalid_record" : "partial_record",
      },
    };
  } finally {
    file.close();
  }
}
