// Reproducible ZIP bytes (FORMATS.md §5), written member by member as they are made: members
// in sorted order, one fixed DEFLATE level, every mtime 1980-01-01 00:00, no extra fields, no
// comments, no folder entries. A member is handed over whole (small members) or compressed
// piece by piece first (`MemberCompressor`: the log and the CSV of a large window), so the
// writer never holds the archive, only the member in hand and one directory record per member.
//
// The bytes are exactly fflate's `zipSync` for members of at most {@linkcode ONE_SHOT_BYTES}
// (each is deflated in one call with the same options); a larger member is deflated in fixed
// 64 KiB pushes of a streaming deflater, so its bytes depend only on its content, never on
// how it was read. Signature members are stored: 180 bytes of base64url shrink by ~10% at best,
// while inflating 100 000 tiny DEFLATE streams would dominate the verifier's time.
import { Deflate, deflateSync } from "fflate";
import { Crc32, sha256Hex, sha256HexPure, sha256Stream } from "../crypto/mod.ts";
import {
  ZIP64_END_LEN,
  ZIP64_END_SIG,
  ZIP64_LOCATOR_LEN,
  ZIP64_LOCATOR_SIG,
  ZIP_CENTRAL_LEN,
  ZIP_CENTRAL_SIG,
  ZIP_END_LEN,
  ZIP_END_SIG,
  ZIP_FLAG_UTF8,
  ZIP_LOCAL_LEN,
  ZIP_LOCAL_SIG,
  ZIP_METHOD_DEFLATE,
  ZIP_METHOD_STORED,
} from "../pack_format/mod.ts";

/** The DEFLATE level of every pack member except signatures (stored). */
export const PACK_DEFLATE_LEVEL = 6;

/** Members up to this size are deflated in one call (fflate `zipSync` bytes). */
export const ONE_SHOT_BYTES = 1024 * 1024;

/** Larger members are fed to the streaming deflater in pieces of exactly this size. */
const PUSH_BYTES = 64 * 1024;

/** The level a member is written with: 0 (stored) for `signatures/…`, else the fixed level. */
export function memberLevel(name: string): 0 | typeof PACK_DEFLATE_LEVEL {
  return name.startsWith("signatures/") ? 0 : PACK_DEFLATE_LEVEL;
}

/** Where the archive's bytes go, in order (a file, or a buffer in tests). */
export interface ZipSink {
  /** Appends bytes (the writer does not reuse them after the call returns). */
  write(bytes: Uint8Array): void;
}

/** A member's bytes, compressed or stored, with what its headers and the manifest need. */
export interface PreparedMember {
  /** 0 stored, 8 deflated. */
  method: typeof ZIP_METHOD_STORED | typeof ZIP_METHOD_DEFLATE;
  /** The data as written, in pieces. */
  data: Uint8Array[];
  /** Bytes of `data`. */
  compressedSize: number;
  /** Uncompressed size. */
  size: number;
  /** CRC-32 of the uncompressed bytes. */
  crc32: number;
  /** SHA-256 of the uncompressed bytes, hex. */
  sha256: string;
}

/**
 * Compresses one member fed in pieces of any size: the first {@linkcode ONE_SHOT_BYTES} are
 * kept as they are; a member that ends by then is deflated in one call, a longer one is
 * streamed through the deflater in fixed pieces. Computes the CRC-32 and SHA-256 on the way.
 *
 * @example
 * ```ts ignore
 * const c = new MemberCompressor(PACK_DEFLATE_LEVEL);
 * for (const line of lines) c.write(line);
 * writer.addPrepared("lineage-log.jsonl", c.finish());
 * ```
 */
/** node:zlib's native CRC-32, once {@linkcode loadNativeCrc32} has loaded it. */
let nativeCrc32: ((data: Uint8Array, value?: number) => number) | undefined;

/**
 * Loads node:zlib's native CRC-32 for the writers and compressors made after it: a large pack
 * checksums ~100 MB (~0.02 s natively, ~0.3 s in pure JS). It is not imported up front because
 * evaluating node:zlib costs every bernstein command 15-65 ms and most never write an archive;
 * the checksum is the same either way.
 *
 * @example
 * ```ts ignore
 * await loadNativeCrc32();
 * const writer = new ZipStreamWriter(sink);
 * ```
 */
export async function loadNativeCrc32(): Promise<void> {
  nativeCrc32 ??= (await import("node:zlib")).crc32;
}

/** Uses `crc32` (node:zlib's, imported by a module that runs only to build a pack) from now on. */
export function useNativeCrc32(crc32: (data: Uint8Array, value?: number) => number): void {
  nativeCrc32 = crc32;
}

/** A CRC-32 fed piece by piece: node:zlib's when it is loaded, else the pure-JS one. */
class RunningCrc32 {
  #native = nativeCrc32;
  #value = 0;
  #pure = this.#native === undefined ? new Crc32() : undefined;

  update(bytes: Uint8Array): void {
    if (this.#pure !== undefined) this.#pure.update(bytes);
    else if (this.#native !== undefined) this.#value = this.#native(bytes, this.#value);
  }

  value(): number {
    return this.#pure !== undefined ? this.#pure.value() : this.#value >>> 0;
  }
}

function crc32Of(bytes: Uint8Array): number {
  if (nativeCrc32 !== undefined) return nativeCrc32(bytes, 0) >>> 0;
  const crc = new Crc32();
  crc.update(bytes);
  return crc.value();
}

export class MemberCompressor {
  #level: 0 | 6;
  #crc = new RunningCrc32();
  #size = 0;
  #sha = sha256Stream();
  #head = new Uint8Array(0); // allocated on the first write
  #headUsed = 0;
  #held: Uint8Array[] = []; // full pieces kept while the member may still be one-shot
  #deflate: Deflate | undefined;
  #out: Uint8Array[] = [];
  #outSize = 0;
  #finished = false;

  constructor(level: 0 | typeof PACK_DEFLATE_LEVEL) {
    this.#level = level;
  }

  /** Feeds the next bytes (copied; the caller may reuse its buffer). */
  write(bytes: Uint8Array): void {
    if (this.#finished) throw new Error("zip: member written after finish");
    if (bytes.length === 0) return;
    this.#crc.update(bytes);
    this.#size += bytes.length;
    this.#sha.update(bytes);
    if (this.#head.length === 0) this.#head = new Uint8Array(PUSH_BYTES);
    let at = 0;
    while (at < bytes.length) {
      const n = Math.min(bytes.length - at, PUSH_BYTES - this.#headUsed);
      this.#head.set(bytes.subarray(at, at + n), this.#headUsed);
      this.#headUsed += n;
      at += n;
      if (this.#headUsed === PUSH_BYTES) {
        this.#piece(this.#head);
        this.#headUsed = 0;
      }
    }
  }

  /** One full piece: stored as is, kept while the member may be one-shot, or deflated. */
  #piece(piece: Uint8Array): void {
    if (this.#level === 0) {
      this.#emit(piece.slice());
    } else if (this.#deflate !== undefined) {
      this.#deflate.push(piece, false);
    } else {
      this.#held.push(piece.slice());
      // Past the one-shot size: what was kept goes to the streaming deflater, in order.
      if (this.#held.length * PUSH_BYTES > ONE_SHOT_BYTES) this.#stream();
    }
  }

  #stream(): void {
    const deflate = new Deflate({ level: this.#level }, (chunk) => this.#emit(chunk));
    for (const h of this.#held) deflate.push(h, false);
    this.#held = [];
    this.#deflate = deflate;
  }

  #emit(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.#out.push(chunk);
    this.#outSize += chunk.length;
  }

  /** Ends the member. */
  finish(): PreparedMember {
    if (this.#finished) throw new Error("zip: member finished twice");
    this.#finished = true;
    const tail = this.#head.subarray(0, this.#headUsed);
    if (this.#level === 0) {
      this.#emit(tail.slice());
    } else {
      const kept = this.#held.length * PUSH_BYTES + tail.length;
      if (this.#deflate === undefined && kept > ONE_SHOT_BYTES) this.#stream();
      if (this.#deflate !== undefined) {
        this.#deflate.push(tail, true);
      } else {
        // At most ONE_SHOT_BYTES in all: one call, as fflate's zipSync deflates a member.
        const whole = new Uint8Array(kept);
        this.#held.forEach((h, i) => whole.set(h, i * PUSH_BYTES));
        whole.set(tail, this.#held.length * PUSH_BYTES);
        this.#held = [];
        this.#emit(deflateSync(whole, { level: this.#level }));
      }
    }
    this.#head = new Uint8Array(0);
    return {
      method: this.#level === 0 ? ZIP_METHOD_STORED : ZIP_METHOD_DEFLATE,
      data: this.#out,
      compressedSize: this.#outSize,
      size: this.#size,
      crc32: this.#crc.value(),
      sha256: this.#sha.hexDigest(),
    };
  }
}

/**
 * A whole member prepared in one call (stored or deflated per {@linkcode memberLevel}): the
 * same bytes as feeding it to a {@linkcode MemberCompressor}, without its buffers (a pack has
 * a signature member per entry).
 */
export function prepareMember(name: string, bytes: Uint8Array): PreparedMember {
  const level = memberLevel(name);
  if (level !== 0 && bytes.length > ONE_SHOT_BYTES) {
    const c = new MemberCompressor(level);
    c.write(bytes);
    return c.finish();
  }
  const data = level === 0 ? bytes : deflateSync(bytes, { level });
  return {
    method: level === 0 ? ZIP_METHOD_STORED : ZIP_METHOD_DEFLATE,
    data: data.length === 0 ? [] : [data],
    compressedSize: data.length,
    size: bytes.length,
    crc32: crc32Of(bytes),
    // Pure JS for small members: a native hash object per signature would wait for a major GC.
    sha256: bytes.length <= 4096 ? sha256HexPure(bytes) : sha256Hex(bytes),
  };
}

// 1980-01-01 00:00:00 in the DOS date/time fields, as fflate writes `new Date(1980, 0, 1)`.
const DOS_TIME = (1 << 21) | (1 << 16);
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

function compareCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// A directory record's fields, one column each in `DirectoryRecords`.
const NAME_BUFFER = 0;
const NAME_AT = 1;
const NAME_LENGTH = 2;
const FLAGS = 3;
const METHOD = 4;
const CRC32 = 5;
const COMPRESSED_SIZE = 6;
const SIZE = 7;
const OFFSET = 8;
const RECORD_FIELDS = 9;

/**
 * The central directory's records, kept until the archive ends: numbers in one array and the
 * names in a few buffers (a pack has a member per entry: no object or buffer per member; a
 * run's names stay in the run's own buffer).
 */
class DirectoryRecords {
  #fields = new Uint32Array(RECORD_FIELDS * 64);
  #buffers: Uint8Array[] = [new Uint8Array(4096)];
  #namesEnd = 0; // in the last buffer, which single names are copied into
  count = 0;

  /** Adds a record, its name copied; returns its index. */
  add(
    name: Uint8Array,
    flags: number,
    member: Omit<ZipDataMember, "data">,
    offset: number,
  ): number {
    let last = this.#buffers.length - 1;
    if (this.#namesEnd + name.length > this.#buffers[last].length) {
      this.#buffers.push(new Uint8Array(Math.max(64 * 1024, name.length)));
      this.#namesEnd = 0;
      last++;
    }
    this.#buffers[last].set(name, this.#namesEnd);
    const r = this.#fill(last, this.#namesEnd, name.length, flags, member, offset);
    this.#namesEnd += name.length;
    return r;
  }

  /**
   * Adds the records of a run whose names are in `names` (kept, not copied; the caller does
   * not change them): returns a function that adds the record of the run's member `k`.
   */
  run(
    names: Uint8Array,
    nameBytes: number,
  ): (k: number, member: Omit<ZipDataMember, "data">, offset: number) => number {
    const buffer = this.#buffers.length;
    this.#buffers.push(names);
    // Names copied after the run go to a new buffer, after it in the list.
    this.#buffers.push(new Uint8Array(4096));
    this.#namesEnd = 0;
    return (k, member, offset) => this.#fill(buffer, k * nameBytes, nameBytes, 0, member, offset);
  }

  #fill(
    buffer: number,
    nameAt: number,
    nameLength: number,
    flags: number,
    member: Omit<ZipDataMember, "data">,
    offset: number,
  ): number {
    const r = this.count++;
    if ((r + 1) * RECORD_FIELDS > this.#fields.length) {
      const grown = new Uint32Array(this.#fields.length * 2);
      grown.set(this.#fields);
      this.#fields = grown;
    }
    const f = this.#fields;
    const at = r * RECORD_FIELDS;
    f[at + NAME_BUFFER] = buffer;
    f[at + NAME_AT] = nameAt;
    f[at + NAME_LENGTH] = nameLength;
    f[at + FLAGS] = flags;
    f[at + METHOD] = member.method;
    f[at + CRC32] = member.crc32;
    f[at + COMPRESSED_SIZE] = member.compressedSize;
    f[at + SIZE] = member.size;
    f[at + OFFSET] = offset;
    return r;
  }

  /** Bytes of record `r`'s header (local or central). */
  headerLength(r: number, central: boolean): number {
    return (central ? ZIP_CENTRAL_LEN : ZIP_LOCAL_LEN) +
      this.#fields[r * RECORD_FIELDS + NAME_LENGTH];
  }

  /**
   * Writes record `r`'s local (30 bytes + name) or central (46 bytes + name) header into `out`
   * at `to`, as fflate writes them; returns where it ends.
   */
  header(r: number, central: boolean, out: Uint8Array, view: DataView, to: number): number {
    const f = this.#fields;
    const rec = r * RECORD_FIELDS;
    let at = to;
    view.setUint32(at, central ? ZIP_CENTRAL_SIG : ZIP_LOCAL_SIG, true);
    at += 4;
    if (central) {
      view.setUint16(at, 20, true); // made by: version 2.0, MS-DOS
      at += 2;
    }
    view.setUint16(at, 20, true); // needed to extract: 2.0
    view.setUint16(at + 2, f[rec + FLAGS], true);
    view.setUint16(at + 4, f[rec + METHOD], true);
    view.setUint32(at + 6, DOS_TIME, true);
    view.setUint32(at + 10, f[rec + CRC32], true);
    view.setUint32(at + 14, f[rec + COMPRESSED_SIZE], true);
    view.setUint32(at + 18, f[rec + SIZE], true);
    view.setUint16(at + 22, f[rec + NAME_LENGTH], true);
    view.setUint16(at + 24, 0, true); // no extra field
    at += 26;
    if (central) {
      // Comment length, disk, internal and external attributes: all zero; then the offset.
      out.fill(0, at, at + 10);
      view.setUint32(at + 10, f[rec + OFFSET], true);
      at += 14;
    }
    const nameAt = f[rec + NAME_AT];
    const names = this.#buffers[f[rec + NAME_BUFFER]];
    out.set(names.subarray(nameAt, nameAt + f[rec + NAME_LENGTH]), at);
    return at + f[rec + NAME_LENGTH];
  }
}

/** What the headers need of a member. */
type ZipDataMember = Omit<PreparedMember, "sha256">;

/** Pieces in which headers and small members are handed to the sink. */
const CHUNK_BYTES = 64 * 1024;

/**
 * Writes a ZIP to a sink member by member, in the order members are added (which must be
 * sorted by name: the writer refuses anything else), then the central directory and the end
 * records (a ZIP64 end record and locator past 65 535 members; sizes and offsets stay
 * 32-bit, so an archive must stay below 4 GiB).
 *
 * @example
 * ```ts ignore
 * const w = new ZipStreamWriter(sink);
 * w.add("README.md", readme);
 * w.addPrepared("lineage-log.jsonl", compressor.finish());
 * const bytes = w.finish();
 * ```
 */
export class ZipStreamWriter {
  #sink: ZipSink;
  #records = new DirectoryRecords();
  #offset = 0;
  #last: string | undefined;
  #finished = false;

  constructor(sink: ZipSink) {
    this.#sink = sink;
  }

  /** Bytes written so far. */
  get offset(): number {
    return this.#offset;
  }

  /** Adds a whole member. */
  add(name: string, bytes: Uint8Array): void {
    if (memberLevel(name) !== 0) {
      this.addPrepared(name, prepareMember(name, bytes));
      return;
    }
    // Stored (a signature): its CRC-32 is all the headers need; no digest is made for it here.
    this.#addData(name, storedMember(bytes));
  }

  /** Adds a member whose bytes were prepared (compressed) already. */
  addPrepared(name: string, member: PreparedMember): void {
    this.#addData(name, member);
  }

  /**
   * Adds stored members in one run (a pack's signature members), the same bytes as adding
   * each: member `k`'s name is `names[k * nameBytes …]` (ASCII, under `signatures/`, rising),
   * its bytes `data(k)`. Headers and members go to the sink in pieces of ~64 KiB.
   */
  addStoredRun(names: Uint8Array, nameBytes: number, data: (k: number) => Uint8Array): void {
    this.#open();
    const count = nameBytes === 0 ? 0 : names.length / nameBytes;
    if (!Number.isInteger(count)) throw new Error("zip: a run's names are not whole");
    if (count === 0) return;
    const first = textDecoder.decode(names.subarray(0, nameBytes));
    const last = textDecoder.decode(names.subarray(names.length - nameBytes));
    // Every name between two names under `signatures/` is under it too: all are stored.
    if (memberLevel(first) !== 0 || memberLevel(last) !== 0) {
      throw new Error(`zip: member ${first} is not a stored member`);
    }
    this.#inOrder(first);
    for (let k = 0; k < names.length; k++) {
      if (names[k] >= 0x80) throw new Error(`zip: a run's member name is not ASCII`);
    }
    const addRecord = this.#records.run(names, nameBytes);
    // One record's numbers, reused: the directory copies them.
    const stored: Omit<ZipDataMember, "data"> = {
      method: ZIP_METHOD_STORED,
      crc32: 0,
      compressedSize: 0,
      size: 0,
    };
    let chunk = new Uint8Array(CHUNK_BYTES);
    let view = new DataView(chunk.buffer);
    let used = 0;
    const flush = () => {
      if (used > 0) this.#sink.write(chunk.subarray(0, used));
      chunk = new Uint8Array(CHUNK_BYTES);
      view = new DataView(chunk.buffer);
      used = 0;
    };
    for (let k = 0; k < count; k++) {
      const name = names.subarray(k * nameBytes, (k + 1) * nameBytes);
      if (k > 0 && compareBytes(names.subarray((k - 1) * nameBytes, k * nameBytes), name) >= 0) {
        throw new Error(`zip: member ${textDecoder.decode(name)} is not in name order`);
      }
      const bytes = data(k);
      stored.crc32 = crc32Of(bytes);
      stored.compressedSize = stored.size = bytes.length;
      this.#checkSize(name.length, stored);
      const r = addRecord(k, stored, this.#offset);
      const head = this.#records.headerLength(r, false);
      if (used + head > CHUNK_BYTES) flush();
      used = this.#records.header(r, false, chunk, view, used);
      if (used + bytes.length > CHUNK_BYTES) {
        flush();
        if (bytes.length > CHUNK_BYTES) {
          this.#sink.write(bytes);
        } else {
          chunk.set(bytes);
          used = bytes.length;
        }
      } else {
        chunk.set(bytes, used);
        used += bytes.length;
      }
      this.#offset += head + bytes.length;
    }
    flush();
    this.#last = last;
  }

  #open(): void {
    if (this.#finished) throw new Error("zip: member added after finish");
  }

  #inOrder(name: string): void {
    if (this.#last !== undefined && compareCodeUnits(this.#last, name) >= 0) {
      throw new Error(`zip: member ${name} is not after ${this.#last} in name order`);
    }
  }

  /** Refuses a member that would take the archive past 4 GiB. */
  #checkSize(nameLength: number, member: Omit<ZipDataMember, "data">): void {
    const total = this.#offset + ZIP_LOCAL_LEN + nameLength + member.compressedSize;
    if (total > 0xffffffff || member.size > 0xffffffff) {
      throw new Error("zip: archive past 4 GiB (ZIP64 sizes are not written)");
    }
  }

  #addData(name: string, member: ZipDataMember): void {
    this.#open();
    this.#inOrder(name);
    if (member.method !== (memberLevel(name) === 0 ? ZIP_METHOD_STORED : ZIP_METHOD_DEFLATE)) {
      throw new Error(`zip: member ${name} prepared with the wrong method`);
    }
    this.#last = name;
    const encoded = textEncoder.encode(name);
    if (encoded.length > 0xffff) throw new Error(`zip: member name too long: ${name}`);
    this.#checkSize(encoded.length, member);
    const flags = encoded.length !== name.length ? ZIP_FLAG_UTF8 : 0;
    const r = this.#records.add(encoded, flags, member, this.#offset);
    const head = new Uint8Array(this.#records.headerLength(r, false));
    this.#records.header(r, false, head, new DataView(head.buffer), 0);
    this.#put(head);
    for (const piece of member.data) this.#put(piece);
  }

  #put(bytes: Uint8Array): void {
    this.#sink.write(bytes);
    this.#offset += bytes.length;
  }

  /** Writes the central directory and the end records; returns the archive's size. */
  finish(): number {
    if (this.#finished) throw new Error("zip: finished twice");
    this.#finished = true;
    const cdOffset = this.#offset;
    // The directory in pieces of ~64 KiB, not one buffer for millions of records.
    const records = this.#records;
    let chunk = new Uint8Array(CHUNK_BYTES);
    let view = new DataView(chunk.buffer);
    let used = 0;
    for (let r = 0; r < records.count; r++) {
      const head = records.headerLength(r, true);
      if (used + head > chunk.length) {
        this.#put(chunk.subarray(0, used));
        chunk = new Uint8Array(Math.max(CHUNK_BYTES, head));
        view = new DataView(chunk.buffer);
        used = 0;
      }
      used = records.header(r, true, chunk, view, used);
    }
    if (used > 0) this.#put(chunk.subarray(0, used));
    const cdSize = this.#offset - cdOffset;
    const count = records.count;
    this.#records = new DirectoryRecords();
    if (cdOffset + cdSize > 0xffffffff) {
      throw new Error("zip: archive past 4 GiB (ZIP64 sizes are not written)");
    }
    if (count > 0xffff) this.#put(zip64End(count, cdSize, cdOffset, this.#offset));
    this.#put(endRecord(count > 0xffff ? 0xffff : count, cdSize, cdOffset));
    return this.#offset;
  }
}

/** A stored member's headers: its size and CRC-32 (no digest made). */
function storedMember(bytes: Uint8Array): ZipDataMember {
  return {
    method: ZIP_METHOD_STORED,
    data: bytes.length === 0 ? [] : [bytes],
    compressedSize: bytes.length,
    size: bytes.length,
    crc32: crc32Of(bytes),
  };
}

/** Byte order of two names (ASCII: the order of their code units). */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

function concat(parts: Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** The ZIP64 end record and its locator (APPNOTE 4.3.14-15) for more than 65 535 members. */
function zip64End(count: number, cdSize: number, cdOffset: number, at: number): Uint8Array {
  const out = new Uint8Array(ZIP64_END_LEN + ZIP64_LOCATOR_LEN);
  const v = new DataView(out.buffer);
  v.setUint32(0, ZIP64_END_SIG, true);
  v.setBigUint64(4, BigInt(ZIP64_END_LEN - 12), true); // size of the rest of the record
  v.setUint16(12, 45, true);
  v.setUint16(14, 45, true);
  v.setBigUint64(24, BigInt(count), true);
  v.setBigUint64(32, BigInt(count), true);
  v.setBigUint64(40, BigInt(cdSize), true);
  v.setBigUint64(48, BigInt(cdOffset), true);
  v.setUint32(ZIP64_END_LEN, ZIP64_LOCATOR_SIG, true);
  v.setBigUint64(ZIP64_END_LEN + 8, BigInt(at), true);
  v.setUint32(ZIP64_END_LEN + 16, 1, true);
  return out;
}

function endRecord(count: number, cdSize: number, cdOffset: number): Uint8Array {
  const out = new Uint8Array(ZIP_END_LEN);
  const v = new DataView(out.buffer);
  v.setUint32(0, ZIP_END_SIG, true);
  v.setUint16(8, count, true);
  v.setUint16(10, count, true);
  v.setUint32(12, cdSize, true);
  v.setUint32(16, cdOffset, true);
  return out;
}

/** A sink that keeps everything in memory (small archives, tests). */
export class MemorySink implements ZipSink {
  #parts: Uint8Array[] = [];
  #size = 0;

  /** Appends a copy. */
  write(bytes: Uint8Array): void {
    this.#parts.push(bytes.slice());
    this.#size += bytes.length;
  }

  /** Everything written, as one buffer. */
  bytes(): Uint8Array {
    return concat(this.#parts, this.#size);
  }
}

/**
 * Zips `members` (name → bytes) reproducibly in memory: same members, same bytes (the same
 * as writing them with {@linkcode ZipStreamWriter}).
 *
 * @example
 * ```ts ignore
 * const zip = zipMembers(new Map([["README.md", bytes]]));
 * ```
 */
export function zipMembers(members: ReadonlyMap<string, Uint8Array>): Uint8Array {
  const sink = new MemorySink();
  const writer = new ZipStreamWriter(sink);
  for (const name of [...members.keys()].sort(compareCodeUnits)) {
    writer.add(name, members.get(name) as Uint8Array);
  }
  writer.finish();
  return sink.bytes();
}
