// Relative paths that cannot climb out of their root, and resolution inside a root that
// refuses symlinks pointing outside it.

import { isAbsolute, join, relative, resolve, sep } from "node:path";
import { PathEscapeError } from "./errors.ts";

/**
 * Checks a relative POSIX path from outside (plan file, agent, archive): non-empty, not
 * absolute, no `..` or empty segments, no backslashes or NUL. Returns it unchanged.
 */
export function checkRelativePath(path: string, what = "path"): string {
  if (path === "") throw new PathEscapeError(`${what} is empty`);
  if (path.includes("\0")) throw new PathEscapeError(`${what} contains a NUL byte`);
  if (path.includes("\\")) throw new PathEscapeError(`${what} '${path}' contains a backslash`);
  if (path.startsWith("/") || /^[A-Za-z]:/.test(path)) {
    throw new PathEscapeError(`${what} '${path}' is absolute`);
  }
  for (const segment of path.split("/")) {
    if (segment === "..") throw new PathEscapeError(`${what} '${path}' has a '..' segment`);
  }
  return path;
}

function isInside(root: string, target: string): boolean {
  const rel = relative(root, target);
  return rel === "" || (!rel.startsWith("..") && !isAbsolute(rel) && !rel.startsWith(sep));
}

/**
 * Resolves `path` (relative to `root`, or absolute) and proves the result stays under `root`
 * after following symlinks. Works for paths that do not exist yet: the deepest existing
 * ancestor is resolved and the rest appended.
 */
export async function resolveInside(root: string, path: string): Promise<string> {
  const realRoot = await Deno.realPath(root);
  const lexical = resolve(realRoot, path);
  if (!isInside(realRoot, lexical)) {
    throw new PathEscapeError(`'${path}' is outside ${root}`);
  }
  let existing = lexical;
  const rest: string[] = [];
  for (;;) {
    try {
      existing = await Deno.realPath(existing);
      break;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
      const parent = resolve(existing, "..");
      rest.unshift(relative(parent, existing));
      if (parent === existing) break;
      existing = parent;
    }
  }
  const full = rest.length === 0 ? existing : join(existing, ...rest);
  if (!isInside(realRoot, full)) {
    throw new PathEscapeError(`'${path}' leaves ${root} through a symlink`);
  }
  return full;
}
