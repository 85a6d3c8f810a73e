// Segment files of the audit log: `YYYY-MM-DD.jsonl`, one per UTC day, chained in name order.
import { join } from "node:path";
import { formatAuditTimestamp } from "./record.ts";

const SEGMENT_NAME = /^\d{4}-\d{2}-\d{2}\.jsonl$/;

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
  /** File name (`2026-01-01.jsonl`). */
  name: string;
  /** Absolute path. */
  path: string;
  /** A regular file (not a symlink, folder or device). */
  regular: boolean;
}

function bySegmentName(a: SegmentEntry, b: SegmentEntry): number {
  // Names are fixed-width ASCII, so code-unit order is date order.
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

function entryOf(dir: string, entry: Deno.DirEntry): SegmentEntry {
  return {
    name: entry.name,
    path: join(dir, entry.name),
    regular: entry.isFile && !entry.isSymlink,
  };
}

/**
 * Synchronous {@linkcode listSegments}, for the writer's hot path where an async directory
 * read costs several times more than the read itself.
 */
export function listSegmentsSync(dir: string): SegmentEntry[] {
  const out: SegmentEntry[] = [];
  try {
    for (const entry of Deno.readDirSync(dir)) {
      if (isSegmentName(entry.name)) out.push(entryOf(dir, entry));
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return out.sort(bySegmentName);
}

/** Lists the segments of `dir` in chain order; an absent folder has none. */
export async function listSegments(dir: string): Promise<SegmentEntry[]> {
  const out: SegmentEntry[] = [];
  try {
    for await (const entry of Deno.readDir(dir)) {
      if (isSegmentName(entry.name)) out.push(entryOf(dir, entry));
    }
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  return out.sort(bySegmentName);
}
