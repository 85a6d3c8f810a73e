// A ZIP writer that does what it is told, including what no honest zipper does: duplicate
// names, zip-slip names, encryption flags, lying sizes and CRCs. It builds the hostile
// archives of the conformance suite and the ZIP reader's tests. Never used to build packs.
import { deflateSync } from "fflate";

/** One member, with every field that an attacker controls. */
export interface RawZipMember {
  /** The name as written (a string is UTF-8 encoded). */
  name: string | Uint8Array;
  /** The uncompressed bytes. */
  data: Uint8Array;
  /** 0 stored, 8 deflate (default 8), or any other number. */
  method?: number;
  /** General-purpose flags (default 0x0800, UTF-8 names). */
  flags?: number;
  /** Uncompressed size to declare (default the real one). */
  declaredSize?: number;
  /** CRC-32 to declare (default the real one). */
  crc?: number;
  /** Bytes to store as the member's data (default: `data`, deflated for method 8). */
  payload?: Uint8Array;
}

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32 of `data`. */
export function crc32(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of data) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

class Writer {
  parts: Uint8Array[] = [];
  length = 0;

  bytes(b: Uint8Array): void {
    this.parts.push(b);
    this.length += b.length;
  }

  u16(v: number): void {
    this.bytes(new Uint8Array([v & 0xff, (v >>> 8) & 0xff]));
  }

  u32(v: number): void {
    this.bytes(new Uint8Array([v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff]));
  }

  out(): Uint8Array {
    const o = new Uint8Array(this.length);
    let at = 0;
    for (const p of this.parts) {
      o.set(p, at);
      at += p.length;
    }
    return o;
  }
}

// 1980-01-01 00:00 in DOS date/time fields.
const DOS_TIME = 0;
const DOS_DATE = (0 << 9) | (1 << 5) | 1;

/**
 * Writes `members` as a ZIP, in the given order, exactly as described.
 *
 * @example
 * ```ts ignore
 * const zip = rawZip([{ name: "../evil", data: bytes }]);
 * ```
 */
export function rawZip(members: readonly RawZipMember[]): Uint8Array {
  const w = new Writer();
  const central = new Writer();
  for (const m of members) {
    const name = typeof m.name === "string" ? new TextEncoder().encode(m.name) : m.name;
    const method = m.method ?? 8;
    const payload = m.payload ?? (method === 8 ? deflateSync(m.data) : m.data);
    const flags = m.flags ?? 0x0800;
    const crc = m.crc ?? crc32(m.data);
    const size = m.declaredSize ?? m.data.length;
    const offset = w.length;
    w.u32(0x04034b50);
    w.u16(20);
    w.u16(flags);
    w.u16(method);
    w.u16(DOS_TIME);
    w.u16(DOS_DATE);
    w.u32(crc);
    w.u32(payload.length);
    w.u32(size);
    w.u16(name.length);
    w.u16(0);
    w.bytes(name);
    w.bytes(payload);
    central.u32(0x02014b50);
    central.u16(20);
    central.u16(20);
    central.u16(flags);
    central.u16(method);
    central.u16(DOS_TIME);
    central.u16(DOS_DATE);
    central.u32(crc);
    central.u32(payload.length);
    central.u32(size);
    central.u16(name.length);
    central.u16(0);
    central.u16(0);
    central.u16(0);
    central.u16(0);
    central.u32(0);
    central.u32(offset);
    central.bytes(name);
  }
  const cdOffset = w.length;
  const cd = central.out();
  w.bytes(cd);
  w.u32(0x06054b50);
  w.u16(0);
  w.u16(0);
  w.u16(members.length);
  w.u16(members.length);
  w.u32(cd.length);
  w.u32(cdOffset);
  w.u16(0);
  return w.out();
}

/** The members of an honest ZIP (stored bytes of each name), in archive order. */
export function zipEntries(
  members: ReadonlyMap<string, Uint8Array>,
): RawZipMember[] {
  return [...members.keys()].sort().map((name) => ({
    name,
    data: members.get(name) as Uint8Array,
  }));
}
