// Segment files of the audit log: `YYYY-MM-DD.jsonl`, one per UTC day, chained in name order,
// preceded by segments archived as `archive/<YYYY-MM-DD>.jsonl.gz` (the gzip of a segment's
// exact bytes, as the Python implementation's retention writes them; FORMATS.md §2). The chain
// runs through the archives first, so a log whose older days were archived still verifies.
import { join } from "node:path";
import { formatAuditTimestamp } from "./record.ts";

const SEGMENT_NAME = /^\d{4}-\d{2}-\d{2}\.jsonl$/;
const ARCHIVE_NAME = /\.jsonl\.gz$/;
const DATED_ARCHIVE = /^\d{4}-\d{2}-\d{2}\./;

/** The folder of archived segments, relative to the audit folder. */
export const ARCHIVE_DIR = "archive";

/** True when `name` is a segment file name (`YYYY-MM-DD.jsonl`). */
export function isSegmentName(name: string): boolean {
  return SEGMENT_NAME.test(name);
}

/** The segment an append at `ns` (nanoseconds since the epoch) goes to: its UTC date. */
export function segmentNameFor(ns: bigint): string {
  return `${formatAuditTimestamp(ns).slice(0, 10)}.jsonl`;
}

/** One directory entry that looks like a segment. */
export interface SegmentEntry {
  /** File name (`2026-01-01.jsonl`, or `archive/2026-01-01.jsonl.gz`). */
  name: string;
  /** Absolute path. */
  path: string;
  /** A regular file (not a symlink, folder or device). */
  regular: boolean;
  /** An archived (gzip) segment: read whole, never appended to. */
  archived: boolean;
}

function byName(a: SegmentEntry, b: SegmentEntry): number {
  // Names are fixed-width ASCII, so code-unit order is date order.
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Archives by their date, undated (hand-renamed) ones after every dated one. */
function byArchiveOrder(a: SegmentEntry, b: SegmentEntry): number {
  const da = DATED_ARCHIVE.test(a.name.slice(ARCHIVE_DIR.length + 1)) ? 0 : 1;
  const db = DATED_ARCHIVE.test(b.name.slice(ARCHIVE_DIR.length + 1)) ? 0 : 1;
  return da - db || byName(a, b);
}

function entryOf(dir: string, entry: Deno.DirEntry, archived: boolean): SegmentEntry {
  return {
    name: archived ? `${ARCHIVE_DIR}/${entry.name}` : entry.name,
    path: archived ? join(dir, ARCHIVE_DIR, entry.name) : join(dir, entry.name),
    regular: entry.isFile && !entry.isSymlink,
    archived,
  };
}

function readDirSyncOrEmpty(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)];
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return [];
    }
    throw error;
  }
}

function ordered(dir: string, live: Deno.DirEntry[], archived: Deno.DirEntry[]): SegmentEntry[] {
  const a = archived.filter((e) => ARCHIVE_NAME.test(e.name)).map((e) => entryOf(dir, e, true));
  const l = live.filter((e) => isSegmentName(e.name)).map((e) => entryOf(dir, e, false));
  return [...a.sort(byArchiveOrder), ...l.sort(byName)];
}

/**
 * Synchronous {@linkcode listSegments}, for the writer's hot path where an async directory
 * read costs several times more than the read itself.
 */
export function listSegmentsSync(dir: string): SegmentEntry[] {
  return ordered(dir, readDirSyncOrEmpty(dir), readDirSyncOrEmpty(join(dir, ARCHIVE_DIR)));
}

async function readDirOrEmpty(dir: string): Promise<Deno.DirEntry[]> {
  const out: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) out.push(entry);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return [];
    }
    throw error;
  }
  return out;
}

/** Lists the segments of `dir` in chain order (archives first); an absent folder has none. */
export async function listSegments(dir: string): Promise<SegmentEntry[]> {
  return ordered(dir, await readDirOrEmpty(dir), await readDirOrEmpty(join(dir, ARCHIVE_DIR)));
}

/** A segment opened for reading: a file, or an archive decompressed in memory. */
export interface SegmentReader {
  /** Moves to `offset` from the start. */
  seek(offset: number, whence: Deno.SeekMode): Promise<number>;
  /** Reads into `p`; null at the end. */
  read(p: Uint8Array): Promise<number | null>;
  /** Size (of the decompressed bytes for an archive) and inode. */
  stat(): Promise<{ size: number; ino: number | null }>;
  /** Releases it. */
  close(): void;
}

/** Opens a segment for reading; an archive is decompressed whole (its bytes as written). */
export async function openSegment(segment: SegmentEntry): Promise<SegmentReader> {
  const file = await Deno.open(segment.path, { read: true });
  if (!segment.archived) return file;
  let bytes: Uint8Array;
  let ino: number | null;
  try {
    ino = (await file.stat()).ino;
    const stream = file.readable.pipeThrough(new DecompressionStream("gzip"));
    bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  } catch (error) {
    try {
      file.close();
    } catch {
      // The stream closed it.
    }
    throw new Error(`unreadable archived segment: ${(error as Error).message}`);
  }
  let pos = 0;
  return {
    seek(offset) {
      pos = offset;
      return Promise.resolve(pos);
    },
    read(p) {
      if (pos >= bytes.length) return Promise.resolve(null);
      const n = Math.min(p.length, bytes.length - pos);
      p.set(bytes.subarray(pos, pos + n));
      pos += n;
      return Promise.resolve(n);
    },
    stat: () => Promise.resolve({ size: bytes.length, ino }),
    close() {},
  };
}
