// Streams the lines of a file (split on 0x0A only) with their byte offsets, so verification
// and scans never hold a whole segment in memory.

import { concatBytes } from "../canonical/mod.ts";

/** One line of a segment. */
export interface RawLine {
  /** The line's bytes without `\n`; undefined when longer than `maxLineBytes`. */
  bytes: Uint8Array | undefined;
  /** Length in bytes without `\n`. */
  length: number;
  /** Offset of the line's first byte in the file. */
  offset: number;
  /** Ends with `\n` (false only for the file's last line). */
  terminated: boolean;
  /** 1-based line number. */
  number: number;
}

/** Options of {@linkcode readLines}. */
export interface ReadLinesOptions {
  /** Byte offset to start at (must be a line start). Default 0. */
  start?: number;
  /** Line number of the line at `start`. Default 1. */
  firstLine?: number;
  /** Read size. Default 1 MiB. */
  chunkSize?: number;
  /** Longer lines are reported without bytes. Default 16 MiB. */
  maxLineBytes?: number;
}

/** What {@linkcode readLines} reads from: a file, or an archived segment in memory. */
export interface LineSource {
  /** Moves to `offset` from the start. */
  seek(offset: number, whence: Deno.SeekMode): Promise<number>;
  /** Reads into `p`; null at the end. */
  read(p: Uint8Array): Promise<number | null>;
}

/** Yields every line of `file` from `options.start` to its current end. */
export async function* readLines(
  file: LineSource,
  options: ReadLinesOptions = {},
): AsyncGenerator<RawLine> {
  const chunkSize = options.chunkSize ?? 1 << 20;
  const maxLine = options.maxLineBytes ?? 16 << 20;
  let offset = options.start ?? 0;
  let number = options.firstLine ?? 1;
  await file.seek(offset, Deno.SeekMode.Start);
  let parts: Uint8Array[] = [];
  let partLength = 0;
  let tooLong = false;
  for (;;) {
    const chunk = new Uint8Array(chunkSize);
    const n = await file.read(chunk);
    if (n === null) break;
    const data = chunk.subarray(0, n);
    let from = 0;
    for (;;) {
      const nl = data.indexOf(0x0a, from);
      const piece = data.subarray(from, nl < 0 ? data.length : nl);
      if (!tooLong) {
        if (partLength + piece.length > maxLine) {
          tooLong = true;
          parts = [];
        } else if (piece.length > 0) {
          parts.push(piece);
        }
      }
      partLength += piece.length;
      if (nl < 0) break;
      yield {
        bytes: tooLong ? undefined : concatBytes(parts, partLength),
        length: partLength,
        offset,
        terminated: true,
        number,
      };
      offset += partLength + 1;
      number++;
      parts = [];
      partLength = 0;
      tooLong = false;
      from = nl + 1;
    }
  }
  if (partLength > 0) {
    yield {
      bytes: tooLong ? undefined : concatBytes(parts, partLength),
      length: partLength,
      offset,
      terminated: false,
      number,
    };
  }
}
