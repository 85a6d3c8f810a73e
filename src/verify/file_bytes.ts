// A file opened read-only as RandomAccessBytes: the verifier reads the ZIP's directory and
// members where they are, so memory stays bounded and nothing is extracted.
import type { RandomAccessBytes } from "./zip_reader.ts";

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
  return {
    size,
    read(offset: number, length: number): Uint8Array {
      const want = Math.max(0, Math.min(length, size - offset));
      const out = new Uint8Array(want);
      file.seekSync(offset, Deno.SeekMode.Start);
      let got = 0;
      while (got < want) {
        const n = file.readSync(out.subarray(got));
        if (n === null || n === 0) break;
        got += n;
      }
      return got === want ? out : out.subarray(0, got);
    },
    close() {
      file.close();
    },
  };
}
