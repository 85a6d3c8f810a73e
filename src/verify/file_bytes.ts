// A file opened read-only as RandomAccessBytes: the verifier reads the ZIP's directory and
// members where they are, so memory stays bounded and nothing is extracted.
import type { RandomAccessBytes } from "./zip_reader.ts";

const WINDOW_BYTES = 4 * 1024 * 1024;

/** A read-only file handle for the ZIP reader; close it when done. */
export interface OpenedFileBytes extends RandomAccessBytes {
  /** Closes the file. */
  close(): void;
}

/** Why a file given to the verifier cannot be read. */
export class FileReadError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FileReadError";
  }
}

/**
 * Opens `path` read-only. Refuses anything that is not a regular file (folders, devices,
 * FIFOs), so a verifier pointed at `/dev/zero` reports instead of reading forever.
 */
export function openFileBytes(path: string): OpenedFileBytes {
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) throw new FileReadError(`${path}: no such file`);
    throw new FileReadError(`${path}: cannot open: ${(error as Error).message}`);
  }
  const info = file.statSync();
  if (!info.isFile) {
    file.close();
    throw new FileReadError(`${path}: not a regular file`);
  }
  const size = info.size;
  // Members are mostly read in archive order: one read-ahead window turns thousands of small
  // reads (signatures, cards) into a few large ones.
  let buffer = new Uint8Array(0);
  let window = new Uint8Array(0);
  let windowStart = 0;
  const readAt = (offset: number, out: Uint8Array): number => {
    file.seekSync(offset, Deno.SeekMode.Start);
    let got = 0;
    while (got < out.length) {
      const n = file.readSync(out.subarray(got));
      if (n === null || n === 0) break;
      got += n;
    }
    return got;
  };
  return {
    size,
    read(offset: number, length: number): Uint8Array {
      const want = Math.max(0, Math.min(length, size - offset));
      if (offset >= windowStart && offset + want <= windowStart + window.length) {
        return window.subarray(offset - windowStart, offset - windowStart + want);
      }
      if (want >= WINDOW_BYTES / 4) {
        const out = new Uint8Array(want);
        const got = readAt(offset, out);
        return got === want ? out : out.subarray(0, got);
      }
      // One window buffer, refilled in place: callers copy what they keep (see the interface).
      if (buffer.length === 0) buffer = new Uint8Array(Math.min(WINDOW_BYTES, size));
      const got = readAt(offset, buffer.subarray(0, Math.min(buffer.length, size - offset)));
      window = buffer.subarray(0, got);
      windowStart = offset;
      return window.subarray(0, Math.min(want, got));
    },
    close() {
      file.close();
    },
  };
}
