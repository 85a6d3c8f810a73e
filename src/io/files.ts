// Durable file writes: atomic replace (temp file, fsync, rename, folder fsync), create-if-absent,
// durable appends, folder fsync, and a streaming atomic writer.

import { dirname, join } from "node:path";

/** Options for {@linkcode writeFileAtomic} and {@linkcode appendDurable}. */
export interface WriteOptions {
  /** File mode for a newly created file (e.g. 0o600 for secrets). */
  mode?: number;
}

let tmpCounter = 0;

/**
 * Replaces `path` with `data` so a crash leaves either the old or the new content: write a
 * temp file in the same folder, fsync it, rename it over the target.
 */
export async function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  options: WriteOptions = {},
): Promise<void> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const tmp = join(dirname(path), `.${Deno.pid}.${++tmpCounter}.tmp`);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: options.mode ?? 0o644 });
  try {
    await writeAll(file, bytes);
    await file.sync();
  } finally {
    file.close();
  }
  try {
    await Deno.rename(tmp, path);
  } catch (error) {
    await Deno.remove(tmp).catch(() => {});
    throw error;
  }
  // The rename is durable only once the folder's entry is on disk.
  await syncDirectory(dirname(path));
}

/**
 * Fsyncs a folder, so entries created, renamed or removed in it survive a crash (a file's own
 * fsync does not cover its name in the folder).
 */
export async function syncDirectory(dir: string): Promise<void> {
  // Windows cannot open a folder for fsync; NTFS journals its metadata itself.
  if (Deno.build.os === "windows") return;
  const handle = await Deno.open(dir, { read: true });
  try {
    await handle.sync();
  } finally {
    handle.close();
  }
}

/** A file written in pieces that appears at its path only once complete (see {@linkcode openAtomicFile}). */
export interface AtomicFileWriter {
  /** Appends bytes (buffered; copied, so the caller may reuse its buffer). */
  write(bytes: Uint8Array): void;
  /** Bytes written so far. */
  readonly size: number;
  /** Flushes, fsyncs and renames the file over the target. */
  commit(): Promise<void>;
  /** Removes the unfinished file; the target is left as it was. */
  abort(): Promise<void>;
}

/**
 * Starts writing `path` in pieces, crash-safe like {@linkcode writeFileAtomic}: the bytes go to
 * a temp file in the same folder (through a 1 MiB buffer, synchronous writes), which `commit`
 * fsyncs and renames over the target. For outputs too large to build in memory first.
 *
 * @example
 * ```ts ignore
 * const out = await openAtomicFile("pack.zip");
 * try {
 *   for (const piece of pieces) out.write(piece);
 *   await out.commit();
 * } catch (error) {
 *   await out.abort();
 *   throw error;
 * }
 * ```
 */
export async function openAtomicFile(
  path: string,
  options: WriteOptions = {},
): Promise<AtomicFileWriter> {
  const tmp = join(dirname(path), `.${Deno.pid}.${++tmpCounter}.tmp`);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: options.mode ?? 0o644 });
  const buffer = new Uint8Array(1024 * 1024);
  let used = 0;
  let size = 0;
  let closed = false;
  const writeOut = (bytes: Uint8Array) => {
    let written = 0;
    while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
  };
  const flush = () => {
    if (used > 0) writeOut(buffer.subarray(0, used));
    used = 0;
  };
  const close = () => {
    if (!closed) file.close();
    closed = true;
  };
  return {
    write(bytes) {
      if (closed) throw new Error(`${path}: written after commit or abort`);
      size += bytes.length;
      if (used + bytes.length > buffer.length) flush();
      if (bytes.length >= buffer.length) writeOut(bytes);
      else {
        buffer.set(bytes, used);
        used += bytes.length;
      }
    },
    get size() {
      return size;
    },
    async commit() {
      try {
        flush();
        await file.sync();
      } catch (error) {
        close();
        await Deno.remove(tmp).catch(() => {});
        throw error;
      }
      close();
      try {
        await Deno.rename(tmp, path);
      } catch (error) {
        await Deno.remove(tmp).catch(() => {});
        throw error;
      }
      await syncDirectory(dirname(path));
    },
    async abort() {
      close();
      await Deno.remove(tmp).catch(() => {});
    },
  };
}

/**
 * Writes `path` only if it does not exist yet; returns false when it already existed. The bytes
 * are written whole to a temp file in the same folder and linked into place, so a concurrent
 * reader never sees the file empty or half-written, and of two racing writers the first link
 * wins (the other gets false and the winner's content stays).
 */
export async function writeFileIfAbsent(
  path: string,
  data: Uint8Array | string,
  options: WriteOptions = {},
): Promise<boolean> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  const tmp = join(dirname(path), `.${Deno.pid}.${++tmpCounter}.tmp`);
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: options.mode ?? 0o644 });
  try {
    try {
      await writeAll(file, bytes);
      await file.sync();
    } finally {
      file.close();
    }
    await Deno.link(tmp, path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    throw error;
  } finally {
    await Deno.remove(tmp).catch(() => {});
  }
}

/** Writes every byte (a single `write` may be partial). */
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
}

/** Writes every byte now (a single `writeSync` may be partial): for writers that cannot await. */
export function writeAllSync(file: { writeSync(p: Uint8Array): number }, bytes: Uint8Array): void {
  let written = 0;
  while (written < bytes.length) written += file.writeSync(bytes.subarray(written));
}

/** Appends bytes to `path` (created with `mode` if missing) and fsyncs before returning. */
export async function appendDurable(
  path: string,
  data: Uint8Array,
  options: WriteOptions = {},
): Promise<void> {
  const file = await Deno.open(path, {
    append: true,
    create: true,
    mode: options.mode ?? 0o644,
  });
  try {
    await writeAll(file, data);
    await file.sync();
  } finally {
    file.close();
  }
}

/**
 * Runs `fn` while holding an exclusive advisory lock (flock) on `lockPath`, so appends from
 * several processes never interleave. The lock file is created if missing and never deleted.
 */
export async function withFileLock<T>(lockPath: string, fn: () => Promise<T>): Promise<T> {
  const file = await Deno.open(lockPath, { read: true, write: true, create: true, mode: 0o600 });
  try {
    await file.lock(true);
    return await fn();
  } finally {
    closeLockFile(file);
  }
}

/**
 * Releases the advisory lock (flock) held on `file`, then closes it. Closing alone does not
 * release it at once: the lock belongs to the open file description, and a child process being
 * started by any thread of this process at that instant shares the description (a fork copies
 * every descriptor, close-on-exec ones too) until it execs, so the lock outlived the close and a
 * reopen right after was refused. Unlocking releases it for every copy. Closing a file that
 * holds no lock is fine.
 */
export function closeLockFile(file: Deno.FsFile): void {
  try {
    file.unlockSync();
  } finally {
    file.close();
  }
}

/** True when a path exists (any kind, symlinks not followed). */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Reads up to `length` bytes from `file`'s current position: fewer only when the file ends
 * first (a file shrinking under the reader, or a range running past its end).
 */
export async function readUpTo(
  file: Deno.FsFile,
  length: number,
): Promise<Uint8Array<ArrayBuffer>> {
  const out = new Uint8Array(length);
  let got = 0;
  while (got < length) {
    const n = await file.read(out.subarray(got));
    if (n === null) break;
    got += n;
  }
  return out.subarray(0, got);
}

/** Reads a file, or returns undefined when it does not exist. */
export async function readFileIfExists(path: string): Promise<Uint8Array | undefined> {
  try {
    return await Deno.readFile(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
}
