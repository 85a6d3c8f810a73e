// Streaming JSONL framing: split a byte stream on 0x0A only (FORMATS.md §1) without holding the
// whole file, so a 100 000-entry log is checked in constant memory.

import { concatBytes } from "../canonical/mod.ts";

/** One line of a stream. */
export interface StreamedLine {
  /** 1-based line number. */
  line: number;
  /** Byte offset of the line's first byte. */
  offset: number;
  /** The line without its `\n` (at most `maxLineBytes` bytes when `tooLong`). */
  bytes: Uint8Array;
  /** False for a final fragment that has no `\n` (a torn or stripped tail). */
  terminated: boolean;
  /** The line was longer than `maxLineBytes`; `bytes` holds only its start. */
  tooLong: boolean;
}

/** Options for {@linkcode streamLines}. */
export interface StreamLinesOptions {
  /** Longest line kept whole (default 1 MiB); longer ones are reported, not buffered. */
  maxLineBytes?: number;
}

/** Bytes to read as lines: one buffer, or chunks from a file or archive member. */
export type ByteSource = Uint8Array | Iterable<Uint8Array> | AsyncIterable<Uint8Array>;

const DEFAULT_MAX_LINE = 1024 * 1024;

/**
 * Yields the lines of `source`, split on `0x0A` only (`\r` stays in the line). A last fragment
 * without `\n` is yielded with `terminated: false`.
 *
 * @example
 * ```ts
 * for await (const l of streamLines(file.readable)) check(l.line, l.bytes);
 * ```
 */
export async function* streamLines(
  source: ByteSource,
  options: StreamLinesOptions = {},
): AsyncGenerator<StreamedLine> {
  const max = options.maxLineBytes ?? DEFAULT_MAX_LINE;
  const chunks: Iterable<Uint8Array> | AsyncIterable<Uint8Array> = source instanceof Uint8Array
    ? [source]
    : source;
  let lineNo = 0;
  let offset = 0; // offset of the current line's first byte
  let carry: Uint8Array[] = [];
  let carryLen = 0;
  let rawLen = 0; // bytes of the current line seen so far, kept or not
  let tooLong = false;
  for await (const chunk of chunks) {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      rawLen += piece.length;
      if (!tooLong) {
        if (carryLen + piece.length > max) {
          const room = max - carryLen;
          if (room > 0) carry.push(piece.slice(0, room));
          carryLen = max;
          tooLong = true;
        } else if (piece.length > 0) {
          // Views into the chunk stay valid only while it is not reused: copy when carried.
          carry.push(nl < 0 ? piece.slice() : piece);
          carryLen += piece.length;
        }
      }
      if (nl < 0) break;
      lineNo++;
      yield {
        line: lineNo,
        offset,
        bytes: concatBytes(carry, carryLen),
        terminated: true,
        tooLong,
      };
      offset += rawLen + 1;
      rawLen = 0;
      carry = [];
      carryLen = 0;
      tooLong = false;
      start = nl + 1;
    }
  }
  if (rawLen > 0) {
    lineNo++;
    yield { line: lineNo, offset, bytes: concatBytes(carry, carryLen), terminated: false, tooLong };
  }
}
