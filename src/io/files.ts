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
}

/** Writes `path` only if it does not exist yet; returns false when it already existed. */
export async function writeFileIfAbsent(
  path: string,
  data: Uint8Array | string,
  options: WriteOptions = {},
): Promise<boolean> {
  const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path, { write: true, createNew: true, mode: options.mode ?? 0o644 });
  } catch (error) {
    if (error instanceof Deno.errors.AlreadyExists) return false;
    throw error;
  }
  try {
    await writeAll(file, bytes);
    await file.sync();
  } finally {
    file.close();
  }
  return true;
}

/** Writes every byte (a single `write` may be partial). */
export async function writeAll(file: Deno.FsFile, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await file.write(bytes.subarray(written));
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
    // Closing the descriptor releases the lock even if unlock fails.
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
