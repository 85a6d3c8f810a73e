// Finding and reading a declared attachment's file: the path policy (inside the project after
// following symlinks, not bernstein's own state, not denied by config) and a bounded read.
import { isAbsolute, relative, resolve, sep } from "node:path";
import { readUpTo } from "../io/mod.ts";
import { compileGlob } from "../plan/mod.ts";
import { AttachmentError } from "./errors.ts";
import { formatSize, MAX_SOURCE_BYTES } from "./limits.ts";

/**
 * Files never attached unless `attachments.deny` says otherwise: secret-looking files, so a
 * careless `--attach` cannot put a key into a prompt.
 */
export const DEFAULT_DENY: readonly string[] = [
  "**/.env",
  "**/.env.*",
  "**/*.pem",
  "**/*.key",
  "**/id_rsa*",
  "**/id_ecdsa*",
  "**/id_ed25519*",
  "**/.npmrc",
  "**/.netrc",
];

/**
 * bernstein's own state (keys, audit, CAS) and git internals (of nested repositories too):
 * never attached, whatever the config.
 */
const ALWAYS_DENIED: readonly string[] = [".sdd", ".sdd/**", "**/.git", "**/.git/**"];

/** Where a declared path leads (`folder`: a directory, attached as its listing). */
export type SourceDecision =
  | { status: "ok"; real: string; rel: string; size: number; folder?: true }
  | { status: "denied"; reason: string }
  | { status: "unreadable"; reason: string };

/** Options of {@linkcode locateSource}. */
export interface LocateOptions {
  /** Project root. */
  root: string;
  /** Folder a relative declared path is relative to (cwd for `--attach`, root for plans). */
  base: string;
  /** `attachments.deny` globs (default {@linkcode DEFAULT_DENY}). */
  deny?: readonly string[];
}

function inside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel) && !rel.startsWith(sep));
}

function posix(rel: string): string {
  return rel.split(sep).join("/");
}

function describeFsError(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file";
  if (error instanceof Deno.errors.PermissionDenied || error instanceof Deno.errors.NotCapable) {
    return "permission denied";
  }
  return (error as Error).message;
}

/** Why the path policy withholds a repo-relative path, or undefined when it does not. */
export function deniedBy(rel: string, deny: readonly string[]): string | undefined {
  for (const pattern of ALWAYS_DENIED) {
    if (compileGlob(pattern).test(rel)) {
      return "bernstein state and git internals are never attached";
    }
  }
  for (const pattern of deny) {
    if (compileGlob(pattern).test(rel)) return `denied by config (attachments.deny: '${pattern}')`;
  }
  return undefined;
}

/**
 * Decides whether a declared path may be attached: `unreadable` (missing, not a regular file,
 * permission denied), `denied` (outside the project, leaves it through a symlink, bernstein
 * state, matched by `attachments.deny`) or `ok` with the real path and the repo-relative one.
 */
export async function locateSource(
  declared: string,
  options: LocateOptions,
): Promise<SourceDecision> {
  const lexical = resolve(options.base, declared);
  let real: string;
  let info: Deno.FileInfo;
  try {
    real = await Deno.realPath(lexical);
    info = await Deno.stat(real);
  } catch (error) {
    return { status: "unreadable", reason: describeFsError(error) };
  }
  if (!info.isFile && !info.isDirectory) {
    return { status: "unreadable", reason: "not a regular file or folder" };
  }
  const root = resolve(options.root);
  const realRoot = await Deno.realPath(root);
  if (!inside(realRoot, real)) {
    const lexicallyInside = inside(root, lexical) || inside(realRoot, lexical);
    return {
      status: "denied",
      reason: lexicallyInside ? "it leaves the project through a symlink" : "outside the project",
    };
  }
  const rel = posix(relative(realRoot, real));
  const deny = options.deny ?? DEFAULT_DENY;
  // The name as declared is checked too: a link named `notes.txt` is judged by its target,
  // a `.env` reached through a linked folder by its own name.
  const asDeclared = inside(root, lexical) ? posix(relative(root, lexical)) : rel;
  const denied = deniedBy(rel, deny) ?? deniedBy(asDeclared, deny);
  if (denied !== undefined) return { status: "denied", reason: denied };
  return {
    status: "ok",
    real,
    rel,
    size: info.size,
    ...(info.isDirectory ? { folder: true } : {}),
  };
}

/**
 * Checks that a file exists and can be opened for reading, or a folder listed (the `--attach`
 * parse-time check).
 */
export async function checkReadable(path: string): Promise<string | undefined> {
  try {
    const info = await Deno.stat(path);
    if (info.isDirectory) {
      for await (const _ of Deno.readDir(path)) break;
      return undefined;
    }
    if (!info.isFile) return "not a regular file or folder";
    const file = await Deno.open(path, { read: true });
    file.close();
    return undefined;
  } catch (error) {
    return describeFsError(error);
  }
}

/** Reads a located file whole, refusing files over {@linkcode MAX_SOURCE_BYTES}. */
export async function readSource(real: string, field: string): Promise<Uint8Array> {
  const file = await Deno.open(real, { read: true });
  try {
    const info = await file.stat();
    if (!info.isFile) {
      throw new AttachmentError(`${real} is not a regular file`, { location: field });
    }
    if (info.size > MAX_SOURCE_BYTES) {
      throw new AttachmentError(
        `file is ${formatSize(info.size)}; the largest file that can be attached is ${
          formatSize(MAX_SOURCE_BYTES)
        } (attach a line range of a text file instead)`,
        { location: field },
      );
    }
    return await readUpTo(file, info.size);
  } finally {
    file.close();
  }
}
