// The tip witness `.sdd/audit/.tip`: after each durable append the writer notes which segment
// it wrote, how long that segment then was and the chain tip. A log that is later shorter than
// its witness lost acknowledged bytes (a tail cut at a record boundary leaves no torn bytes to
// see): the next append seals the loss with the count, and `audit verify` shows it before and
// after. The witness is evidence of loss, not protection: whoever can write the log can write
// it too. It is written without fsync after the segment's fsync, so a crash can leave it older
// (shorter) than the log, never longer.
import { join } from "node:path";
import { ARCHIVE_DIR, type SegmentEntry } from "./segments.ts";

/** File name of the witness inside the audit folder. */
export const WITNESS_FILE = ".tip";

/** What the last durable append left. */
export interface TipWitness {
  /** Segment it wrote last. */
  segment: string;
  /** That segment's size after the append. */
  size: number;
  /** HMAC of the last record it wrote. */
  tip: string;
}

/** Acknowledged bytes that are no longer in the log. */
export interface WitnessedLoss {
  /** The segment the witness names. */
  segment: string;
  /** Its size when the last append acknowledged it. */
  expected_size: number;
  /** Its size now (0 when the file is gone). */
  size: number;
  /** `expected_size - size`. */
  bytes_lost: number;
  /** The acknowledged chain tip. */
  acknowledged_tip: string;
  /** The segment file itself is gone. */
  segment_gone: boolean;
}

/** Reads the witness; undefined when there is none or it does not parse (a torn write). */
export function readWitnessSync(dir: string): TipWitness | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(join(dir, WITNESS_FILE));
  } catch {
    return undefined;
  }
  try {
    const v = JSON.parse(text);
    if (
      typeof v === "object" && v !== null && typeof v.segment === "string" &&
      Number.isSafeInteger(v.size) && v.size >= 0 && typeof v.tip === "string"
    ) {
      return { segment: v.segment, size: v.size, tip: v.tip };
    }
  } catch {
    // A torn witness write: no evidence either way.
  }
  return undefined;
}

/** The witness is rewritten in place at this fixed width (JSON padded with spaces, `\n`). */
const WITNESS_BYTES = 256;

const encoder = new TextEncoder();

/**
 * Writes the witness in place (no fsync; a failure leaves an older witness, never a wrong
 * loss). Never truncates: on ext4 a file truncated to zero and written again is flushed on
 * close (auto_da_alloc), which cost as much as the append's own fsync (4 ms against 60 µs).
 * The fixed width leaves no bytes of a longer earlier witness behind.
 */
export function writeWitnessSync(dir: string, witness: TipWitness): void {
  const text = JSON.stringify(witness);
  const bytes = encoder.encode(text.padEnd(WITNESS_BYTES - 1, " ") + "\n");
  try {
    const file = Deno.openSync(join(dir, WITNESS_FILE), {
      write: true,
      create: true,
      // Only a witness longer than the fixed width (none is) needs the old bytes cut.
      truncate: bytes.length > WITNESS_BYTES,
      mode: 0o600,
    });
    try {
      for (let at = 0; at < bytes.length;) at += file.writeSync(bytes.subarray(at));
    } finally {
      file.close();
    }
  } catch {
    // The append itself is durable; a stale witness only means a loss could go unnoticed.
  }
}

/**
 * Compares the witness with the segments as they are now: a loss when the witnessed segment
 * (still the newest, or gone with nothing newer) is shorter than acknowledged. An archived
 * segment is not a loss; a newer segment than the witnessed one means someone appended
 * without a witness, and nothing is claimed.
 */
export function witnessedLoss(
  witness: TipWitness | undefined,
  segments: readonly SegmentEntry[],
): WitnessedLoss | undefined {
  if (witness === undefined || witness.size === 0) return undefined;
  const live = segments.filter((s) => !s.name.startsWith(`${ARCHIVE_DIR}/`));
  if (segments.some((s) => s.name === `${ARCHIVE_DIR}/${witness.segment}.gz`)) return undefined;
  const newest = live.at(-1);
  const loss = (size: number, gone: boolean): WitnessedLoss | undefined =>
    size >= witness.size ? undefined : {
      segment: witness.segment,
      expected_size: witness.size,
      size,
      bytes_lost: witness.size - size,
      acknowledged_tip: witness.tip,
      segment_gone: gone,
    };
  if (newest?.name === witness.segment) {
    if (!newest.regular) return undefined;
    let size: number;
    try {
      size = Deno.statSync(newest.path).size;
    } catch {
      return undefined;
    }
    return loss(size, false);
  }
  if (live.some((s) => s.name >= witness.segment)) return undefined;
  return loss(0, true);
}
