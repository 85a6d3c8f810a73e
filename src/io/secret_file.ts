// Reading secret files (keys, tokens) under one policy: the path itself must be a regular file
// (a symlink is refused, never followed), readable by its owner only (no group or other bits),
// and the file opened must be the one checked. Each refusal has its own stable code.

import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";

/** Why a secret file was refused. */
export type SecretFileErrorCode =
  | "secret.symlink"
  | "secret.not_file"
  | "secret.permissions"
  | "secret.replaced";

/** A secret file exists but may not be used. `path` names it. */
export class SecretFileError extends BernsteinError {
  /** The refused file. */
  readonly path: string;

  constructor(
    code: SecretFileErrorCode,
    path: string,
    message: string,
    options: BernsteinErrorOptions = {},
  ) {
    super(code, message, options);
    this.path = path;
  }
}

/** The two file-system calls {@linkcode readSecretFile} makes: the check, then the open. */
export interface SecretFileSystem {
  /** Information about the path itself (a symlink is not followed). */
  lstat(path: string): Promise<Deno.FileInfo>;
  /** Opens the path for reading. */
  open(path: string, options: { read: true }): Promise<Deno.FsFile>;
}

/** Options of {@linkcode readSecretFile}. */
export interface ReadSecretFileOptions {
  /** What the file holds, for messages ("audit key", "operator token"); default "secret file". */
  what?: string;
  /**
   * The file system (default: Deno's). Tests pass one that swaps the file between the check
   * and the open, the race `secret.replaced` guards against.
   */
  fs?: SecretFileSystem;
}

const DENO_FS: SecretFileSystem = {
  lstat: (path) => Deno.lstat(path),
  open: (path, options) => Deno.open(path, options),
};

/**
 * Reads a secret file's bytes, or undefined when it does not exist. Refused (a
 * {@linkcode SecretFileError}): a symlink (`secret.symlink`), anything but a regular file
 * (`secret.not_file`), a file readable or writable by group or others (`secret.permissions`),
 * a file swapped between the check and the read (`secret.replaced`).
 *
 * @example
 * ```ts
 * import { equal, rejects } from "node:assert/strict";
 * import { join } from "node:path";
 * const dir = await Deno.makeTempDir();
 * const path = join(dir, "token");
 * await Deno.writeTextFile(path, "s3cret", { mode: 0o600 });
 * equal(new TextDecoder().decode(await readSecretFile(path)), "s3cret");
 * equal(await readSecretFile(join(dir, "missing")), undefined);
 * await Deno.chmod(path, 0o644);
 * await rejects(readSecretFile(path), (e: SecretFileError) => e.code === "secret.permissions");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function readSecretFile(
  path: string,
  options: ReadSecretFileOptions = {},
): Promise<Uint8Array | undefined> {
  const what = options.what ?? "secret file";
  const fs = options.fs ?? DENO_FS;
  let info: Deno.FileInfo;
  try {
    info = await fs.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  checkSecretInfo(path, what, info);
  const file = await fs.open(path, { read: true });
  try {
    // The checks were made on the path; make sure the open file is that same file (a symlink
    // or another file renamed over it in between is refused, not read).
    const opened = await file.stat();
    checkSecretInfo(path, what, opened);
    if (
      info.ino !== null && opened.ino !== null &&
      (info.ino !== opened.ino || info.dev !== opened.dev)
    ) {
      throw new SecretFileError(
        "secret.replaced",
        path,
        `${what} ${path} was replaced while it was being read; refusing to use it`,
      );
    }
    return await readAll(file, opened.size);
  } finally {
    file.close();
  }
}

function checkSecretInfo(path: string, what: string, info: Deno.FileInfo): void {
  if (info.isSymlink) {
    throw new SecretFileError(
      "secret.symlink",
      path,
      `${what} ${path} is a symlink; refusing to follow it`,
      {
        hint: `replace it with the file itself (mode 0600)`,
      },
    );
  }
  if (!info.isFile) {
    throw new SecretFileError("secret.not_file", path, `${what} ${path} is not a regular file`);
  }
  if (info.mode !== null && (info.mode & 0o077) !== 0) {
    throw new SecretFileError(
      "secret.permissions",
      path,
      `${what} ${path} is readable by group or others (mode ${
        (info.mode & 0o777).toString(8)
      }); refusing to use it`,
      { hint: `chmod 600 ${path}` },
    );
  }
}

async function readAll(file: Deno.FsFile, sizeHint: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const buffer = new Uint8Array(Math.max(sizeHint, 64) + 1);
  while (true) {
    const n = await file.read(buffer);
    if (n === null) break;
    chunks.push(buffer.slice(0, n));
    total += n;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
