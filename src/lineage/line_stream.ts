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
 * Receives each line from a {@linkcode LineFramer}. `bytes` may be a view into the chunk
 * being framed: it is valid only during the call (copy it to keep it).
 */
export type LineSink = (line: StreamedLine) => void;

/**
 * Incremental framing: chunks in, lines out through a callback, with no per-line promise.
 * What {@linkcode streamLines} and the lineage gate's batching share.
 */
export class LineFramer {
  readonly #max: number;
  readonly #sink: LineSink;
  #lineNo = 0;
  #offset = 0; // offset of the current line's first byte
  #carry: Uint8Array[] = [];
  #carryLen = 0;
  #rawLen = 0; // bytes of the current line seen so far, kept or not
  #tooLong = false;

  constructor(sink: LineSink, options: StreamLinesOptions = {}) {
    this.#sink = sink;
    this.#max = options.maxLineBytes ?? DEFAULT_MAX_LINE;
  }

  /** Frames one more chunk. */
  push(chunk: Uint8Array): void {
    let start = 0;
    while (start < chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl < 0 ? chunk.length : nl;
      const piece = chunk.subarray(start, end);
      this.#rawLen += piece.length;
      if (!this.#tooLong) {
        if (this.#carryLen + piece.length > this.#max) {
          const room = this.#max - this.#carryLen;
          if (room > 0) this.#carry.push(piece.slice(0, room));
          this.#carryLen = this.#max;
          this.#tooLong = true;
        } else if (piece.length > 0) {
          // A line's start is copied when it continues in the next chunk: the caller may
          // reuse this chunk's buffer.
          this.#carry.push(nl < 0 ? piece.slice() : piece);
          this.#carryLen += piece.length;
        }
      }
      if (nl < 0) break;
      this.#emit(true);
      start = nl + 1;
    }
  }

  /** Ends the stream: a last fragment without `\n` is emitted with `terminated: false`. */
  end(): void {
    if (this.#rawLen > 0) this.#emit(false);
  }

  #emit(terminated: boolean): void {
    this.#lineNo++;
    this.#sink({
      line: this.#lineNo,
      offset: this.#offset,
      bytes: concatBytes(this.#carry, this.#carryLen),
      terminated,
      tooLong: this.#tooLong,
    });
    this.#offset += this.#rawLen + 1;
    this.#rawLen = 0;
    this.#carry = [];
    this.#carryLen = 0;
    this.#tooLong = false;
  }
}

/** The chunks of a byte source. */
export function chunksOf(source: ByteSource): Iterable<Uint8Array> | AsyncIterable<Uint8Array> {
  return source instanceof Uint8Array ? [source] : source;
}

/**
 * Yields the lines of `source`, split on `0x0A` only (`\r` stays in the line). A last fragment
 * without `\n` is yielded with `terminated: false`.
 *
 * @example
 * ```ts ignore
 * for await (const l of streamLines(file.readable)) check(l.line, l.bytes);
 * ```
 */
export async function* streamLines(
  source: ByteSource,
  options: StreamLinesOptions = {},
): AsyncGenerator<StreamedLine> {
  let ready: StreamedLine[] = [];
  const framer = new LineFramer((l) => ready.push(l), options);
  for await (const chunk of chunksOf(source)) {
    framer.push(chunk);
    // Lines that are views into this chunk are handed out before the next chunk is read.
    const out = ready;
    ready = [];
    for (const l of out) yield l;
  }
  framer.end();
  for (const l of ready) yield l;
}
