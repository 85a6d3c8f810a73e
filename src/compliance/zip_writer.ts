// Reproducible ZIP bytes (FORMATS.md §5): members in sorted order, one DEFLATE level, every
// mtime 1980-01-01 00:00 local time (fflate reads the local-time fields, so the bytes do not
// depend on the builder's time zone), no extra fields, no comments, no folder entries.
import { type Zippable, zipSync } from "fflate";

/** The DEFLATE level of every pack member. */
export const PACK_DEFLATE_LEVEL = 6;

const MTIME = new Date(1980, 0, 1, 0, 0, 0);

function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Zips `members` (name → bytes) reproducibly: same members, same bytes. Names are written
 * flat (`signatures/…` as one name), which creates no folder entries.
 *
 * @example
 * ```ts
 * const zip = zipMembers(new Map([["README.md", bytes]]));
 * ```
 */
export function zipMembers(members: ReadonlyMap<string, Uint8Array>): Uint8Array {
  // Object keys keep insertion order except integer-like keys; a member name always holds a
  // `.` or `/`, so none is integer-like and sorted insertion is the archive order.
  const tree: Zippable = {};
  for (const name of [...members.keys()].sort(byCodeUnit)) {
    if (/^\d+$/.test(name)) throw new Error(`member name ${name} would be reordered`);
    tree[name] = [members.get(name) as Uint8Array, { level: PACK_DEFLATE_LEVEL, mtime: MTIME }];
  }
  return zipSync(tree, { level: PACK_DEFLATE_LEVEL, mtime: MTIME });
}
