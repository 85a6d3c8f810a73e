// A line log as a list of files read in order: one file for the lineage log; the audit log's
// segments (archived gzip segments first). Lines split on 0x0A only; what counts as a line is
// what a checkpoint covers: every terminated line, and the unterminated last line of a file
// that can no longer grow (an older segment). The open tail of the newest file is not a line
// until the writer terminates it.

/** One file of a log. */
export interface LogFile {
  /** Its name in messages and positions (`log.jsonl`, `2026-01-01.jsonl`). */
  name: string;
  /** Where it is. */
  path: string;
  /** A gzip-compressed archive (read whole, from the start). */
  gzip?: boolean;
  /** Can no longer grow: an unterminated last line is a line too. */
  frozen?: boolean;
}

/** Where a reader is: a file of the list and a byte offset in it (after a line end). */
export interface LogPosition {
  /** Index into the file list. */
  file: number;
  /** Byte offset in that file (of its decompressed bytes for an archive). */
  offset: number;
}

/** One line read. */
export interface LogLine {
  /** The line without its `\n`. Valid only during the callback. */
  bytes: Uint8Array;
  /** Byte offset of its first byte in its file. */
  start: number;
  /** Where the next line starts. */
  end: LogPosition;
}

async function* chunksOf(file: LogFile, offset: number): AsyncGenerator<Uint8Array> {
  let handle: Deno.FsFile;
  try {
    handle = await Deno.open(file.path, { read: true });
  } catch (error) {
    // A log that was never written has no lines.
    if (error instanceof Deno.errors.NotFound) return;
    throw error;
  }
  if (file.gzip) {
    const stream = handle.readable.pipeThrough(new DecompressionStream("gzip"));
    let skip = offset;
    for await (const chunk of stream) {
      if (skip >= chunk.length) {
        skip -= chunk.length;
        continue;
      }
      yield chunk.subarray(skip);
      skip = 0;
    }
    return;
  }
  try {
    await handle.seek(offset, Deno.SeekMode.Start);
    const buf = new Uint8Array(1 << 20);
    for (;;) {
      const n = await handle.read(buf);
      if (n === null) break;
      yield buf.subarray(0, n);
    }
  } finally {
    try {
      handle.close();
    } catch {
      // already closed
    }
  }
}

/**
 * Calls `onLine` for every line from `from` to the end of the last file. Returns the position
 * after the last line (an open tail is left unread).
 */
export async function readLogLines(
  files: readonly LogFile[],
  from: LogPosition,
  onLine: (line: LogLine) => void,
): Promise<LogPosition> {
  let end: LogPosition = { ...from };
  for (let f = from.file; f < files.length; f++) {
    const file = files[f];
    let offset = f === from.file ? from.offset : 0;
    end = { file: f, offset };
    let carry: Uint8Array[] = [];
    let carryLen = 0;
    for await (const chunk of chunksOf(file, offset)) {
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(0x0a, start);
        if (nl < 0) {
          carry.push(chunk.slice(start));
          carryLen += chunk.length - start;
          break;
        }
        let bytes = chunk.subarray(start, nl);
        if (carryLen > 0) {
          carry.push(bytes);
          bytes = concat(carry, carryLen + bytes.length);
          carry = [];
          carryLen = 0;
        }
        const lineStart = offset;
        offset += bytes.length + 1;
        end = { file: f, offset };
        onLine({ bytes, start: lineStart, end });
        start = nl + 1;
      }
    }
    const frozen = file.frozen === true || f < files.length - 1;
    if (carryLen > 0 && frozen) {
      const lineStart = offset;
      offset += carryLen;
      end = { file: f, offset };
      onLine({ bytes: concat(carry, carryLen), start: lineStart, end });
    }
  }
  return end;
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
