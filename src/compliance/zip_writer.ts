// Reproducible ZIP bytes (FORMATS.md §5): members in sorted order, one fixed DEFLATE level,
// every mtime 1980-01-01 00:00 local time (fflate reads the local-time fields, so the bytes do
// not depend on the builder's time zone), no extra fields, no comments, no folder entries.
// Signature members are stored: 180 bytes of base64url shrink by ~10% at best, while
// inflating 100 000 tiny DEFLATE streams would dominate the verifier's time.
import { type Zippable, zipSync } from "fflate";

/** The DEFLATE level of every pack member except signatures (stored). */
export const PACK_DEFLATE_LEVEL = 6;

/** The level a member is written with: 0 (stored) for `signatures/…`, else the fixed level. */
export function memberLevel(name: string): 0 | typeof PACK_DEFLATE_LEVEL {
  return name.startsWith("signatures/") ? 0 : PACK_DEFLATE_LEVEL;
}

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
    tree[name] = [members.get(name) as Uint8Array, { level: memberLevel(name), mtime: MTIME }];
  }
  const zip = zipSync(tree, { level: PACK_DEFLATE_LEVEL, mtime: MTIME });
  return members.size > 0xffff ? withZip64End(zip, members.size) : zip;
}

/**
 * A ZIP's end records for more than 65 535 members: fflate writes the count in the 16-bit
 * fields of the end record only, so a ZIP64 end record and locator (APPNOTE 4.3.14-15) carry
 * the real count and the end record says 0xFFFF, as unzip and Python's zipfile expect.
 * Sizes and offsets stay 32-bit: a pack is below 4 GiB.
 */
function withZip64End(zip: Uint8Array, count: number): Uint8Array {
  const eocd = zip.length - 22;
  const old = new DataView(zip.buffer, zip.byteOffset + eocd, 22);
  const cdSize = old.getUint32(12, true);
  const cdOffset = old.getUint32(16, true);
  const out = new Uint8Array(eocd + 56 + 20 + 22);
  out.set(zip.subarray(0, eocd));
  const v = new DataView(out.buffer);
  let at = eocd;
  v.setUint32(at, 0x06064b50, true);
  v.setBigUint64(at + 4, 44n, true);
  v.setUint16(at + 12, 45, true);
  v.setUint16(at + 14, 45, true);
  v.setUint32(at + 16, 0, true);
  v.setUint32(at + 20, 0, true);
  v.setBigUint64(at + 24, BigInt(count), true);
  v.setBigUint64(at + 32, BigInt(count), true);
  v.setBigUint64(at + 40, BigInt(cdSize), true);
  v.setBigUint64(at + 48, BigInt(cdOffset), true);
  at += 56;
  v.setUint32(at, 0x07064b50, true);
  v.setUint32(at + 4, 0, true);
  v.setBigUint64(at + 8, BigInt(eocd), true);
  v.setUint32(at + 16, 1, true);
  at += 20;
  v.setUint32(at, 0x06054b50, true);
  v.setUint16(at + 8, 0xffff, true);
  v.setUint16(at + 10, 0xffff, true);
  v.setUint32(at + 12, cdSize, true);
  v.setUint32(at + 16, cdOffset, true);
  return out;
}
