// Finds the project around a folder (the nearest ancestor holding `.git`) and its paths (work
// tree root, git directory, `.sdd`), and answers whether a path lies inside a folder.

import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { sddOf } from "../io/mod.ts";

/** Where a project's files are. */
export interface ProjectPaths {
  /** The work tree root (nearest ancestor with `.git`, else the start directory). */
  root: string;
  /** The git directory, when the project is a git repository. */
  gitDir?: string;
  /** `<root>/.sdd`. */
  sdd: string;
}

async function statOrUndefined(path: string): Promise<Deno.FileInfo | undefined> {
  try {
    return await Deno.stat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return undefined;
    }
    throw error;
  }
}

/** Finds the project around `cwd`: the nearest ancestor holding `.git` (a folder or a file). */
export async function findProject(cwd: string): Promise<ProjectPaths> {
  let dir = resolve(cwd);
  for (;;) {
    const dotGit = join(dir, ".git");
    const info = await statOrUndefined(dotGit);
    if (info?.isDirectory) return { root: dir, gitDir: dotGit, sdd: sddOf(dir) };
    if (info?.isFile) {
      // A linked worktree or submodule: `.git` is a file `gitdir: <path>`.
      const text = await Deno.readTextFile(dotGit);
      const match = /^gitdir:\s*(.+?)\s*$/m.exec(text);
      const gitDir = match ? resolve(dir, match[1]) : undefined;
      return { root: dir, gitDir, sdd: sddOf(dir) };
    }
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  const root = resolve(cwd);
  return { root, sdd: sddOf(root) };
}

/** True when `path` is `dir` or inside it (lexically). */
export function isWithin(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel));
}
