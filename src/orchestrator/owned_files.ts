// Owned-file entries of plan steps (paths, folders, globs): whether two of them may name the
// same file, so the scheduler keeps such steps apart.

const GLOB_CHARS = /[*?[]/;

function globToRegExp(glob: string): RegExp {
  let re = "^";
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === "*") {
      if (glob[i + 1] === "*") {
        // `**/` matches zero or more folders; a trailing `**` matches everything below.
        re += glob[i + 2] === "/" ? "(?:.*/)?" : ".*";
        i += glob[i + 2] === "/" ? 2 : 1;
      } else {
        re += "[^/]*";
      }
    } else if (c === "?") {
      re += "[^/]";
    } else if (c === "[") {
      const end = glob.indexOf("]", i + 1);
      if (end < 0) re += "\\[";
      else {
        re += glob.slice(i, end + 1).replace(/\\/g, "\\\\");
        i = end;
      }
    } else {
      re += c.replace(/[.+^${}()|\\/]/g, "\\$&");
    }
  }
  return new RegExp(re + "$");
}

/** True when a repo-relative path matches a glob (`*`, `**`, `?`, `[…]`). */
export function matchesGlob(path: string, glob: string): boolean {
  return globToRegExp(glob).test(path);
}

function staticPrefix(pattern: string): string {
  const cut = pattern.search(GLOB_CHARS);
  return cut < 0 ? pattern : pattern.slice(0, cut);
}

/**
 * True when two owned-file entries (paths, folders ending in `/`, or globs) may name the same
 * file. Conservative: two globs overlap when either static prefix contains the other.
 */
export function ownedEntriesOverlap(a: string, b: string): boolean {
  const aGlob = GLOB_CHARS.test(a);
  const bGlob = GLOB_CHARS.test(b);
  if (!aGlob && !bGlob) {
    if (a === b) return true;
    const aDir = a.endsWith("/") ? a : `${a}/`;
    const bDir = b.endsWith("/") ? b : `${b}/`;
    return b.startsWith(aDir) || a.startsWith(bDir);
  }
  if (aGlob && !bGlob) {
    return matchesGlob(b.replace(/\/$/, ""), a) ||
      staticPrefix(a).startsWith(b.endsWith("/") ? b : `${b}/`);
  }
  if (!aGlob && bGlob) return ownedEntriesOverlap(b, a);
  const pa = staticPrefix(a);
  const pb = staticPrefix(b);
  return pa.startsWith(pb) || pb.startsWith(pa);
}

/** True when any entry of `a` overlaps any entry of `b`. */
export function ownedFilesOverlap(a: readonly string[], b: readonly string[]): boolean {
  return a.some((x) => b.some((y) => ownedEntriesOverlap(x, y)));
}
