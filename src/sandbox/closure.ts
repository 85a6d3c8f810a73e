// What an agent needs to see read-only to start at all, found on this machine: the system
// folders, the secret system files among them, the agent CLI's install tree (a node package's
// whole prefix, a script's interpreter), and bernstein itself (its binary, or a source
// checkout with Deno's module cache) for the `bernstein task …` shim and the sandbox init.
import { basename, dirname, isAbsolute, join, sep } from "node:path";
import type { SystemEntry } from "./linux.ts";

/** Top-level system folders shown read-only when they exist (symlinks are recreated). */
export const SYSTEM_ROOTS: readonly string[] = [
  "/usr",
  "/bin",
  "/sbin",
  "/lib",
  "/lib32",
  "/lib64",
  "/libx32",
  "/etc",
  "/opt",
  "/nix",
];

/** System paths hidden even though their folder is shown (password hashes, host keys). */
export const SYSTEM_SECRETS: readonly string[] = [
  "/etc/shadow",
  "/etc/shadow-",
  "/etc/gshadow",
  "/etc/gshadow-",
  "/etc/ssh",
  "/etc/ssl/private",
  "/etc/sudoers",
  "/etc/sudoers.d",
];

async function lstatOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.lstat(path);
  } catch {
    return undefined;
  }
}

/** The system entries of this machine. */
export async function systemEntries(
  roots: readonly string[] = SYSTEM_ROOTS,
): Promise<SystemEntry[]> {
  const out: SystemEntry[] = [];
  for (const path of roots) {
    const info = await lstatOrUndefined(path);
    if (info === undefined) continue;
    if (info.isSymlink) out.push({ path, kind: "symlink", target: await Deno.readLink(path) });
    else if (info.isDirectory) out.push({ path, kind: "dir" });
  }
  return out;
}

/** The secret system paths present here. */
export async function systemSecrets(
  paths: readonly string[] = SYSTEM_SECRETS,
): Promise<{ path: string; kind: "file" | "dir" }[]> {
  const out: { path: string; kind: "file" | "dir" }[] = [];
  for (const path of paths) {
    const info = await lstatOrUndefined(path);
    if (info === undefined || info.isSymlink) continue;
    out.push({ path, kind: info.isDirectory ? "dir" : "file" });
  }
  return out;
}

/** Whether a path is inside one of the system roots (already shown). */
export function inSystem(path: string, roots: readonly string[] = SYSTEM_ROOTS): boolean {
  return roots.some((r) => path === r || path.startsWith(r + sep));
}

/**
 * The install prefix of an executable inside a node package tree: the folder holding the first
 * `node_modules` of its path (`…/claude-2.1/node_modules/@x/y/bin/z` → `…/claude-2.1`).
 */
export function nodePrefix(realPath: string): string | undefined {
  const at = realPath.indexOf(`${sep}node_modules${sep}`);
  return at > 0 ? realPath.slice(0, at) : undefined;
}

/** The interpreter named by a `#!` line (`/usr/bin/env node` → `node`), if any. */
export function shebangInterpreter(firstBytes: Uint8Array): string | undefined {
  if (firstBytes[0] !== 0x23 || firstBytes[1] !== 0x21) return undefined;
  const line = new TextDecoder().decode(firstBytes).split("\n")[0].slice(2).trim();
  const words = line.split(/\s+/).filter((w) => w !== "");
  if (words.length === 0) return undefined;
  if (basename(words[0]) === "env") {
    return words.slice(1).find((w) => !w.startsWith("-") && !w.includes("="));
  }
  return words[0];
}

/** Finds `name` on a PATH value. */
export async function whichOnPath(name: string, pathValue: string): Promise<string | undefined> {
  if (isAbsolute(name)) return name;
  for (const dir of pathValue.split(":")) {
    if (dir === "") continue;
    const candidate = join(dir, name);
    const info = await Deno.stat(candidate).catch(() => undefined);
    if (info?.isFile) return candidate;
  }
  return undefined;
}

async function realOrUndefined(path: string): Promise<string | undefined> {
  try {
    return await Deno.realPath(path);
  } catch {
    return undefined;
  }
}

async function firstBytes(path: string): Promise<Uint8Array> {
  const file = await Deno.open(path, { read: true });
  try {
    const buf = new Uint8Array(256);
    const n = await file.read(buf);
    return buf.subarray(0, n ?? 0);
  } finally {
    file.close();
  }
}

/** Options of {@linkcode executableClosure}. */
export interface ClosureOptions {
  /** PATH the agent gets (to find `#!/usr/bin/env` interpreters). */
  path: string;
  /** The operator's HOME: never shown whole, nor any folder above it. */
  home?: string;
}

function acceptable(dir: string, home: string | undefined): boolean {
  if (dir === "/" || inSystem(dir)) return false;
  return home === undefined || !(home === dir || home.startsWith(dir + sep));
}

/**
 * Folders to show read-only so `executable` can run: the folder it is named in (so the name
 * resolves), the node package prefix of its real file (or its folder), and the same for a
 * script's interpreter. System folders are left out (already shown); so is anything that is
 * the operator's HOME or above it.
 */
export async function executableClosure(
  executable: string,
  options: ClosureOptions,
): Promise<string[]> {
  const out = new Set<string>();
  const add = (dir: string | undefined) => {
    if (dir !== undefined && acceptable(dir, options.home)) out.add(dir);
  };
  const resolved = await whichOnPath(executable, options.path);
  if (resolved === undefined) return [];
  add(dirname(resolved));
  const real = await realOrUndefined(resolved);
  if (real === undefined) return [...out];
  add(nodePrefix(real) ?? dirname(real));
  const interpreter = shebangInterpreter(await firstBytes(real).catch(() => new Uint8Array()));
  if (interpreter !== undefined && basename(interpreter) !== basename(real)) {
    const found = await whichOnPath(interpreter, options.path);
    const realInterpreter = found === undefined ? undefined : await realOrUndefined(found);
    if (realInterpreter !== undefined) {
      const bin = dirname(realInterpreter);
      // `<prefix>/bin/node` lives with `<prefix>/lib`: show the prefix.
      add(nodePrefix(realInterpreter) ?? (basename(bin) === "bin" ? dirname(bin) : bin));
    }
  }
  return [...out];
}
