// A defensive ZIP reader for archives nobody should trust: it reads the central directory,
// checks every member name, flag, size and data range BEFORE anything is inflated, and then
// inflates one member at a time in bounded steps, never past the member's declared size.
// Nothing is ever written to disk: members are handed out as bytes or chunk streams.
import { Inflate } from "fflate";
import { Crc32 } from "./_crc32.ts";

/** Bytes that can be read at any offset: a file opened read-only, or a buffer. */
export interface RandomAccessBytes {
  /** Total length in bytes. */
  readonly size: number;
  /** Exactly `length` bytes from `offset` (fewer only past the end). */
  read(offset: number, length: number): Uint8Array;
}

/** A buffer as {@linkcode RandomAccessBytes}. */
export function memoryBytes(bytes: Uint8Array): RandomAccessBytes {
  return {
    size: bytes.length,
    read: (offset, length) => bytes.subarray(offset, Math.min(bytes.length, offset + length)),
  };
}

/** Why an archive (or one member) is refused, in the words the verifier reports. */
export type ZipProblemKind =
  | "unreadable archive"
  | "unsupported zip feature"
  | "zip-slip member name"
  | "duplicate member"
  | "encrypted member"
  | "oversized member"
  | "archive too large"
  | "corrupt member";

/** One reason the archive cannot be read safely. */
export interface ZipProblem {
  /** Which rule. */
  kind: ZipProblemKind;
  /** One human line (starts with the member name when there is one). */
  message: string;
  /** The member concerned, when there is one. */
  member?: string;
}

/** A member as the central directory describes it, after every check passed. */
export interface ZipMember {
  /** The member name (UTF-8). */
  name: string;
  /** 0 stored, 8 deflated. */
  method: 0 | 8;
  /** CRC-32 of the uncompressed bytes. */
  crc32: number;
  /** Compressed size. */
  compressedSize: number;
  /** Declared uncompressed size (already checked against the limits). */
  size: number;
  /** Offset of the member's data (after its local header). */
  dataOffset: number;
}

/** Fixed limits the reader enforces before inflating anything. */
export interface ZipLimits {
  /** Largest archive accepted, in bytes. */
  maxArchiveBytes: number;
  /** Most members accepted. */
  maxMembers: number;
  /** Longest member name, in bytes. */
  maxNameBytes: number;
  /** Largest declared uncompressed size of one member, by name. */
  maxMemberBytes(name: string): number;
  /** Largest sum of declared uncompressed sizes. */
  maxTotalBytes: number;
}

/** What {@linkcode readZipDirectory} found. */
export interface ZipDirectory {
  /** Members in central-directory order; empty when there are problems. */
  members: ZipMember[];
  /** Every problem found; the archive must not be read when there is any. */
  problems: ZipProblem[];
}

/** A member whose bytes do not match what the central directory promised. */
export class ZipMemberError extends Error {
  /** The member concerned. */
  readonly member: string;

  constructor(member: string, message: string) {
    super(`${member}: ${message}`);
    this.name = "ZipMemberError";
    this.member = member;
  }
}

const EOCD_SIG = 0x06054b50;
const ZIP64_LOCATOR_SIG = 0x07064b50;
const CD_SIG = 0x02014b50;
const LOCAL_SIG = 0x04034b50;
const EOCD_LEN = 22;
const CD_LEN = 46;
const LOCAL_LEN = 30;
const MAX_COMMENT = 0xffff;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_STRONG_ENCRYPTION = 0x0040;
const FLAG_UTF8 = 0x0800;
const METHOD_AES = 99;
// A compressed step of this size inflates to at most ~1032 times as much: a bounded amount
// of memory between two checks of the running output size.
const INFLATE_STEP = 16 * 1024;

function u16(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

function decodeName(raw: Uint8Array): string {
  try {
    return strictUtf8.decode(raw);
  } catch {
    // Not UTF-8 (or CP437 from an old zipper): keep it printable so it can be named.
    return [...raw].map((b) => (b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16)}`))
      .join("");
  }
}

/**
 * Why a member name could write outside an extraction folder, or undefined when it cannot:
 * absolute paths, drive letters, backslashes, `.`/`..` or empty segments, control characters.
 */
export function memberNameProblem(name: string): string | undefined {
  if (name === "") return "empty name";
  // deno-lint-ignore no-control-regex -- control characters are exactly what is refused
  if (/[\u0000-\u001f\u007f]/.test(name)) return "control character in the name";
  if (name.includes("\\")) return "backslash in the name";
  if (name.startsWith("/")) return "absolute path";
  if (/^[A-Za-z]:/.test(name)) return "drive letter";
  const segments = name.split("/");
  if (segments.some((s) => s === "..")) return "'..' segment";
  if (segments.some((s) => s === ".")) return "'.' segment";
  if (segments.slice(0, -1).some((s) => s === "")) return "empty path segment";
  return undefined;
}

function findEndOfCentralDirectory(source: RandomAccessBytes): number | undefined {
  const span = Math.min(source.size, EOCD_LEN + MAX_COMMENT);
  const tail = source.read(source.size - span, span);
  for (let i = tail.length - EOCD_LEN; i >= 0; i--) {
    if (u32(tail, i) === EOCD_SIG && i + EOCD_LEN + u16(tail, i + 20) === tail.length) {
      return source.size - span + i;
    }
  }
  return undefined;
}

interface RawEntry {
  name: string;
  flags: number;
  method: number;
  crc32: number;
  compressedSize: number;
  size: number;
  localOffset: number;
  nameBytes: Uint8Array;
}

/**
 * Reads and checks the central directory: single-disk, no ZIP64, every name safe and unique
 * (also ignoring case, since unzip on a case-insensitive disk would merge them), no
 * encryption, only stored or deflated members, declared sizes within `limits`, each local
 * header consistent with its directory entry, and no two members' data overlapping.
 *
 * @example
 * ```ts
 * const dir = readZipDirectory(memoryBytes(zip), limits);
 * if (dir.problems.length === 0) for (const m of dir.members) readZipMember(source, m);
 * ```
 */
export function readZipDirectory(source: RandomAccessBytes, limits: ZipLimits): ZipDirectory {
  const problems: ZipProblem[] = [];
  const fail = (kind: ZipProblemKind, message: string, member?: string): ZipDirectory => {
    problems.push({ kind, message, member });
    return { members: [], problems };
  };
  if (source.size > limits.maxArchiveBytes) {
    return fail(
      "archive too large",
      `archive is ${source.size} bytes, over the ${limits.maxArchiveBytes}-byte limit`,
    );
  }
  if (source.size < EOCD_LEN) return fail("unreadable archive", "not a ZIP archive (too short)");
  const eocd = findEndOfCentralDirectory(source);
  if (eocd === undefined) {
    return fail("unreadable archive", "not a ZIP archive (no end of central directory)");
  }
  const end = source.read(eocd, EOCD_LEN);
  const disk = u16(end, 4);
  const cdDisk = u16(end, 6);
  const onDisk = u16(end, 8);
  const count = u16(end, 10);
  const cdSize = u32(end, 12);
  const cdOffset = u32(end, 16);
  if (
    eocd >= 20 && u32(source.read(eocd - 20, 4), 0) === ZIP64_LOCATOR_SIG ||
    count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff
  ) {
    return fail("unsupported zip feature", "ZIP64 archives are not accepted");
  }
  if (disk !== 0 || cdDisk !== 0 || onDisk !== count) {
    return fail("unsupported zip feature", "multi-disk archives are not accepted");
  }
  if (count > limits.maxMembers) {
    return fail(
      "archive too large",
      `archive has ${count} members, over the ${limits.maxMembers}-member limit`,
    );
  }
  if (cdOffset + cdSize !== eocd) {
    return fail(
      "unreadable archive",
      "the central directory does not end where the end record says",
    );
  }
  const cd = source.read(cdOffset, cdSize);
  const entries: RawEntry[] = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + CD_LEN > cd.length || u32(cd, at) !== CD_SIG) {
      return fail("unreadable archive", `central directory entry ${i + 1} is damaged`);
    }
    const nameLen = u16(cd, at + 28);
    const extraLen = u16(cd, at + 30);
    const commentLen = u16(cd, at + 32);
    if (at + CD_LEN + nameLen + extraLen + commentLen > cd.length) {
      return fail("unreadable archive", `central directory entry ${i + 1} is truncated`);
    }
    const nameBytes = cd.subarray(at + CD_LEN, at + CD_LEN + nameLen);
    entries.push({
      name: decodeName(nameBytes),
      flags: u16(cd, at + 8),
      method: u16(cd, at + 10),
      crc32: u32(cd, at + 16),
      compressedSize: u32(cd, at + 20),
      size: u32(cd, at + 24),
      localOffset: u32(cd, at + 42),
      nameBytes,
    });
    at += CD_LEN + nameLen + extraLen + commentLen;
  }
  if (at !== cd.length) {
    return fail("unreadable archive", "the central directory holds more than its entries");
  }

  const seen = new Map<string, string>();
  let total = 0;
  for (const e of entries) {
    const shown = JSON.stringify(e.name);
    if (e.nameBytes.length > limits.maxNameBytes) {
      problems.push({
        kind: "unsupported zip feature",
        member: e.name,
        message: `member name ${shown.slice(0, 80)}… is longer than ${limits.maxNameBytes} bytes`,
      });
      continue;
    }
    const slip = memberNameProblem(e.name);
    if (slip !== undefined) {
      problems.push({
        kind: "zip-slip member name",
        member: e.name,
        message: `${shown}: zip-slip member name (${slip}); refused`,
      });
    }
    const folded = e.name.toLowerCase();
    const earlier = seen.get(folded);
    if (earlier !== undefined) {
      problems.push({
        kind: "duplicate member",
        member: e.name,
        message: earlier === e.name
          ? `${shown}: duplicate member (the name appears more than once)`
          : `${shown}: duplicate member (same name as ${JSON.stringify(earlier)} ignoring case)`,
      });
    } else seen.set(folded, e.name);
    if (
      (e.flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) !== 0 || e.method === METHOD_AES
    ) {
      problems.push({
        kind: "encrypted member",
        member: e.name,
        message: `${shown}: encrypted member; refused`,
      });
      continue;
    }
    if (e.method !== 0 && e.method !== 8) {
      problems.push({
        kind: "unsupported zip feature",
        member: e.name,
        message: `${shown}: compression method ${e.method} (only stored and deflate)`,
      });
      continue;
    }
    const limit = limits.maxMemberBytes(e.name);
    if (e.size > limit) {
      problems.push({
        kind: "oversized member",
        member: e.name,
        message:
          `${shown}: oversized member: declares ${e.size} bytes, over the ${limit}-byte limit`,
      });
    }
    if (e.method === 0 && e.compressedSize !== e.size) {
      problems.push({
        kind: "corrupt member",
        member: e.name,
        message: `${shown}: stored member with different compressed and uncompressed sizes`,
      });
    }
    total += e.size;
  }
  if (total > limits.maxTotalBytes) {
    problems.push({
      kind: "archive too large",
      message:
        `members declare ${total} bytes in total, over the ${limits.maxTotalBytes}-byte limit`,
    });
  }
  if (problems.length > 0) return { members: [], problems };

  // Local headers: where each member's data starts, and that no two data ranges overlap
  // (overlapping members are how the densest zip bombs reuse one compressed stream).
  const members: ZipMember[] = [];
  const ranges: { start: number; end: number; name: string }[] = [];
  for (const e of entries) {
    const shown = JSON.stringify(e.name);
    if (e.localOffset + LOCAL_LEN > cdOffset) {
      problems.push({
        kind: "unreadable archive",
        member: e.name,
        message: `${shown}: local header outside the archive data`,
      });
      continue;
    }
    const local = source.read(e.localOffset, LOCAL_LEN);
    if (u32(local, 0) !== LOCAL_SIG) {
      problems.push({
        kind: "unreadable archive",
        member: e.name,
        message: `${shown}: no local header where the directory points`,
      });
      continue;
    }
    const nameLen = u16(local, 26);
    const extraLen = u16(local, 28);
    const localName = source.read(e.localOffset + LOCAL_LEN, nameLen);
    const sameName = localName.length === e.nameBytes.length &&
      localName.every((b, i) => b === e.nameBytes[i]);
    if (!sameName) {
      problems.push({
        kind: "unreadable archive",
        member: e.name,
        message: `${shown}: local header names ${JSON.stringify(decodeName(localName))}`,
      });
      continue;
    }
    const localFlags = u16(local, 6);
    if ((localFlags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) !== 0) {
      problems.push({
        kind: "encrypted member",
        member: e.name,
        message: `${shown}: encrypted member; refused`,
      });
      continue;
    }
    if (u16(local, 8) !== e.method || (localFlags & FLAG_UTF8) !== (e.flags & FLAG_UTF8)) {
      problems.push({
        kind: "unreadable archive",
        member: e.name,
        message: `${shown}: local header disagrees with the central directory`,
      });
      continue;
    }
    const dataOffset = e.localOffset + LOCAL_LEN + nameLen + extraLen;
    if (dataOffset + e.compressedSize > cdOffset) {
      problems.push({
        kind: "unreadable archive",
        member: e.name,
        message: `${shown}: member data runs past the archive data`,
      });
      continue;
    }
    ranges.push({ start: e.localOffset, end: dataOffset + e.compressedSize, name: e.name });
    members.push({
      name: e.name,
      method: e.method as 0 | 8,
      crc32: e.crc32,
      compressedSize: e.compressedSize,
      size: e.size,
      dataOffset,
    });
  }
  ranges.sort((a, b) => a.start - b.start);
  for (let i = 1; i < ranges.length; i++) {
    if (ranges[i].start < ranges[i - 1].end) {
      problems.push({
        kind: "unreadable archive",
        member: ranges[i].name,
        message: `${JSON.stringify(ranges[i].name)}: data overlaps member ${
          JSON.stringify(ranges[i - 1].name)
        } (zip bomb)`,
      });
    }
  }
  return problems.length > 0 ? { members: [], problems } : { members, problems };
}

/**
 * The uncompressed bytes of `member`, in chunks, inflated in bounded steps: it throws
 * {@linkcode ZipMemberError} as soon as the output passes the declared size, and at the end
 * when the size or CRC-32 differ from the directory's.
 */
export function* streamZipMember(
  source: RandomAccessBytes,
  member: ZipMember,
): Generator<Uint8Array> {
  const crc = new Crc32();
  let produced = 0;
  const check = (chunk: Uint8Array) => {
    produced += chunk.length;
    if (produced > member.size) {
      throw new ZipMemberError(
        member.name,
        `inflates past its declared size of ${member.size} bytes (zip bomb); stopped`,
      );
    }
    crc.update(chunk);
  };
  if (member.method === 0) {
    for (let at = 0; at < member.compressedSize; at += 1024 * 1024) {
      const chunk = source.read(
        member.dataOffset + at,
        Math.min(1024 * 1024, member.compressedSize - at),
      );
      check(chunk);
      yield chunk;
    }
  } else {
    let pending: Uint8Array[] = [];
    let failure: unknown;
    const inflater = new Inflate((chunk) => {
      try {
        if (chunk.length > 0) {
          check(chunk);
          pending.push(chunk);
        }
      } catch (error) {
        failure = error;
      }
    });
    let finished = false;
    for (let at = 0; !finished; at += INFLATE_STEP) {
      const step = Math.min(INFLATE_STEP, member.compressedSize - at);
      finished = at + step >= member.compressedSize;
      try {
        inflater.push(source.read(member.dataOffset + at, Math.max(0, step)), finished);
      } catch (error) {
        if (failure !== undefined) throw failure;
        throw new ZipMemberError(
          member.name,
          `deflate data is damaged (${(error as Error).message})`,
        );
      }
      if (failure !== undefined) throw failure;
      const out = pending;
      pending = [];
      for (const chunk of out) yield chunk;
    }
  }
  if (produced !== member.size) {
    throw new ZipMemberError(
      member.name,
      `inflates to ${produced} bytes, the directory declares ${member.size}`,
    );
  }
  if (crc.value() !== member.crc32) {
    throw new ZipMemberError(member.name, "CRC-32 does not match the central directory");
  }
}

/** The whole uncompressed member (for members whose declared size is small). */
export function readZipMember(source: RandomAccessBytes, member: ZipMember): Uint8Array {
  const out = new Uint8Array(member.size);
  let at = 0;
  for (const chunk of streamZipMember(source, member)) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
