// A defensive ZIP reader for archives nobody should trust: it reads the central directory,
// checks every member name, flag, size and data range BEFORE anything is inflated, and then
// inflates one member at a time in bounded steps, never past the member's declared size.
// Nothing is ever written to disk: members are handed out as bytes or chunk streams.
import { Inflate, inflateSync } from "fflate";
import {
  ZIP64_END_LEN,
  ZIP64_END_SIG,
  ZIP64_LOCATOR_LEN,
  ZIP64_LOCATOR_SIG,
  ZIP_CENTRAL_LEN,
  ZIP_CENTRAL_SIG,
  ZIP_END_LEN,
  ZIP_END_SIG,
  ZIP_FLAG_ENCRYPTED,
  ZIP_FLAG_STRONG_ENCRYPTION,
  ZIP_FLAG_UTF8,
  ZIP_LOCAL_LEN,
  ZIP_LOCAL_SIG,
  ZIP_METHOD_DEFLATE,
  ZIP_METHOD_STORED,
} from "../pack_format/mod.ts";
import { Crc32 } from "../crypto/mod.ts";

/** Bytes that can be read at any offset: a file opened read-only, or a buffer. */
export interface RandomAccessBytes {
  /** Total length in bytes. */
  readonly size: number;
  /**
   * Exactly `length` bytes from `offset` (fewer only past the end). The bytes may be a view
   * that the next read overwrites: copy what must be kept.
   */
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
  /** 0 stored, 8 deflated (the directory refuses every other method). */
  method: number;
  /** CRC-32 of the uncompressed bytes. */
  crc32: number;
  /** Compressed size. */
  compressedSize: number;
  /** Declared uncompressed size (already checked against the limits). */
  size: number;
  /** General-purpose flags from the directory. */
  flags: number;
  /** Offset of the member's local header. */
  localOffset: number;
  /** Where the next member (or the directory) starts: the member must end before it. */
  limit: number;
}

/** Fixed limits the reader enforces before inflating anything. */
export interface ZipLimits {
  /** Largest archive accepted, in bytes. */
  maxArchiveBytes: number;
  /** Most members accepted. */
  maxMembers: number;
  /** Longest member name, in bytes. */
  maxNameBytes: number;
  /**
   * Largest declared uncompressed size of one member, by name (`index`: its place in the
   * directory). Asked once per member, after its name, flags and method passed.
   */
  maxMemberBytes(name: string, index: number): number;
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

const MAX_COMMENT = 0xffff;
const METHOD_AES = 99;
// A compressed step of this size inflates to at most ~1032 times as much: a bounded amount
// of memory between two checks of the running output size.
const INFLATE_STEP = 16 * 1024;
// Members this small (compressed) inflate in one call into a buffer of their declared size
// plus one byte: a longer output shows in that extra byte, and decoding so little data costs
// at most ~66 MB of work however it is crafted.
const ONE_SHOT_LIMIT = 64 * 1024;

function u16(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}

function u32(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}

/** A 64-bit little-endian field; values past 2^53 become Infinity (always refused). */
function u64(b: Uint8Array, at: number): number {
  const hi = u32(b, at + 4);
  return hi >= 0x200000 ? Infinity : hi * 0x100000000 + u32(b, at);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/** A name has a byte ≥ 0x80 (a name class bit, see {@linkcode nameClass}). */
const NAME_NOT_ASCII = 1;
/** A name has an ASCII uppercase letter. */
const NAME_UPPER = 2;
/** A name is not plain (see {@linkcode isPlainMemberName}); set for every non-ASCII name. */
const NAME_NOT_PLAIN = 4;

/**
 * The class bits of a raw name, in one pass over its bytes: the directory's later checks read
 * them instead of walking each of up to millions of names' characters again.
 */
function nameClass(raw: Uint8Array): number {
  let cls = 0;
  let segmentStart = 0;
  for (let i = 0; i <= raw.length; i++) {
    const c = i < raw.length ? raw[i] : 0x2f;
    if (c === 0x2f) {
      // The same segment rule as isPlainMemberName: none empty, `.` or `..`.
      const n = i - segmentStart;
      if (n === 0 || (n <= 2 && raw[segmentStart] === 0x2e && (n === 1 || raw[i - 1] === 0x2e))) {
        cls |= NAME_NOT_PLAIN;
      }
      segmentStart = i + 1;
    } else if (c >= 0x80) cls |= NAME_NOT_ASCII | NAME_NOT_PLAIN;
    else if (c >= 0x41 && c <= 0x5a) cls |= NAME_UPPER;
    else if (
      !((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2e || c === 0x5f ||
        c === 0x2d)
    ) cls |= NAME_NOT_PLAIN;
  }
  return cls;
}

function decodeName(raw: Uint8Array, cls = nameClass(raw)): string {
  // Pack names are ASCII: skip the decoder call for each of up to millions of names.
  if ((cls & NAME_NOT_ASCII) === 0) {
    return String.fromCharCode.apply(null, raw as unknown as number[]);
  }
  try {
    return strictUtf8.decode(raw);
  } catch {
    // Not UTF-8 (or CP437 from an old zipper): keep it printable so it can be named.
    return [...raw].map((b) => (b < 0x80 ? String.fromCharCode(b) : `\\x${b.toString(16)}`))
      .join("");
  }
}

/**
 * True for the names packs are made of (`[A-Za-z0-9._-]` segments joined by `/`, none of them
 * empty, `.` or `..`), decided in one pass; anything else takes the full check below.
 */
function isPlainMemberName(name: string): boolean {
  let segmentStart = 0;
  for (let i = 0; i <= name.length; i++) {
    const c = i < name.length ? name.charCodeAt(i) : 0x2f;
    if (c === 0x2f) {
      const n = i - segmentStart;
      if (n === 0) return false;
      if (n <= 2 && name.charCodeAt(segmentStart) === 0x2e) {
        if (n === 1 || name.charCodeAt(segmentStart + 1) === 0x2e) return false;
      }
      segmentStart = i + 1;
      continue;
    }
    const ok = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) ||
      c === 0x2e || c === 0x5f || c === 0x2d;
    if (!ok) return false;
  }
  return true;
}

/**
 * Why a member name could write outside an extraction folder, or undefined when it cannot:
 * absolute paths, drive letters, backslashes, `.`/`..` or empty segments, control characters.
 */
export function memberNameProblem(name: string): string | undefined {
  if (isPlainMemberName(name)) return undefined;
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
  const span = Math.min(source.size, ZIP_END_LEN + MAX_COMMENT);
  const tail = source.read(source.size - span, span);
  for (let i = tail.length - ZIP_END_LEN; i >= 0; i--) {
    if (u32(tail, i) === ZIP_END_SIG && i + ZIP_END_LEN + u16(tail, i + 20) === tail.length) {
      return source.size - span + i;
    }
  }
  return undefined;
}

/**
 * Reads and checks the central directory: single-disk, no ZIP64, every name safe and unique
 * (also ignoring case, since unzip on a case-insensitive disk would merge them), no
 * encryption, only stored or deflated members, declared sizes within `limits`, each local
 * header consistent with its directory entry, and no two members' data overlapping.
 *
 * @example
 * ```ts ignore
 * const dir = readZipDirectory(memoryBytes(zip), limits);
 * if (dir.problems.length === 0) for (const m of dir.members) readZipMember(source, m);
 * ```
 */
export function readZipDirectory(source: RandomAccessBytes, limits: ZipLimits): ZipDirectory {
  const located = locateCentralDirectory(source, limits);
  if ("kind" in located) return { members: [], problems: [located] };
  const parsed = parseCentralDirectory(source, located);
  if ("kind" in parsed) return { members: [], problems: [parsed] };
  const problems = checkEntries(parsed, limits);
  if (problems.length === 0) problems.push(...checkDataRanges(parsed, located.offset));
  return problems.length > 0 ? { members: [], problems } : { members: parsed.members, problems };
}

/** Where the central directory is and how many entries it holds, as the end records say. */
interface DirectoryLocation {
  /** Entries. */
  count: number;
  /** Offset of the directory. */
  offset: number;
  /** Its size in bytes. */
  size: number;
}

function problem(kind: ZipProblemKind, message: string): ZipProblem {
  return { kind, message };
}

/**
 * Phase 1: the end record (and the ZIP64 end record and locator past 65 535 members), checked
 * against the archive's size, the limits and each other: one disk, the directory ending where
 * the end records start.
 */
function locateCentralDirectory(
  source: RandomAccessBytes,
  limits: ZipLimits,
): DirectoryLocation | ZipProblem {
  if (source.size > limits.maxArchiveBytes) {
    return problem(
      "archive too large",
      `archive is ${source.size} bytes, over the ${limits.maxArchiveBytes}-byte limit`,
    );
  }
  if (source.size < ZIP_END_LEN) {
    return problem("unreadable archive", "not a ZIP archive (too short)");
  }
  const eocd = findEndOfCentralDirectory(source);
  if (eocd === undefined) {
    return problem("unreadable archive", "not a ZIP archive (no end of central directory)");
  }
  const end = source.read(eocd, ZIP_END_LEN);
  let record = {
    disk: u16(end, 4),
    cdDisk: u16(end, 6),
    onDisk: u16(end, 8),
    count: u16(end, 10),
    size: u32(end, 12),
    offset: u32(end, 16),
    // Where the central directory must end: the end record, or the ZIP64 end record.
    end: eocd,
  };
  const locator = eocd >= ZIP64_LOCATOR_LEN
    ? source.read(eocd - ZIP64_LOCATOR_LEN, ZIP64_LOCATOR_LEN)
    : new Uint8Array(0);
  if (locator.length === ZIP64_LOCATOR_LEN && u32(locator, 0) === ZIP64_LOCATOR_SIG) {
    const zip64 = readZip64End(source, locator, eocd, record);
    if ("kind" in zip64) return zip64;
    record = zip64;
  } else if (record.size === 0xffffffff || record.offset === 0xffffffff) {
    return problem("unsupported zip feature", "ZIP64 sizes without a ZIP64 end record");
  }
  if (record.disk !== 0 || record.cdDisk !== 0 || record.onDisk !== record.count) {
    return problem("unsupported zip feature", "multi-disk archives are not accepted");
  }
  if (record.count > limits.maxMembers) {
    return problem(
      "archive too large",
      `archive has ${record.count} members, over the ${limits.maxMembers}-member limit`,
    );
  }
  if (record.offset + record.size !== record.end) {
    return problem(
      "unreadable archive",
      "the central directory does not end where the end record says",
    );
  }
  return { count: record.count, offset: record.offset, size: record.size };
}

/** The end record's fields (ZIP64 ones when there is a ZIP64 end record). */
interface EndRecord {
  disk: number;
  cdDisk: number;
  onDisk: number;
  count: number;
  size: number;
  offset: number;
  end: number;
}

/**
 * The ZIP64 end record the locator points to. Accepted for what packs need it for, more than
 * 65 535 members; sizes and offsets must still fit 32 bits (ZIP64 entries are refused).
 */
function readZip64End(
  source: RandomAccessBytes,
  locator: Uint8Array,
  eocd: number,
  record: EndRecord,
): EndRecord | ZipProblem {
  const at = u64(locator, 8);
  if (
    u32(locator, 4) !== 0 || u32(locator, 16) !== 1 ||
    at !== eocd - ZIP64_LOCATOR_LEN - ZIP64_END_LEN
  ) {
    return problem(
      "unsupported zip feature",
      "ZIP64 end record is not where a single-disk archive keeps it",
    );
  }
  const z = source.read(at, ZIP64_END_LEN);
  if (u32(z, 0) !== ZIP64_END_SIG || u64(z, 4) !== ZIP64_END_LEN - 12) {
    return problem("unreadable archive", "damaged ZIP64 end record");
  }
  if (
    (record.count !== 0xffff && record.count !== u64(z, 32) % 0x10000) ||
    (record.size !== 0xffffffff && record.size !== u64(z, 40)) ||
    (record.offset !== 0xffffffff && record.offset !== u64(z, 48))
  ) {
    return problem("unreadable archive", "the ZIP64 end record disagrees with the end record");
  }
  return {
    disk: u32(z, 16),
    cdDisk: u32(z, 20),
    onDisk: u64(z, 24),
    count: u64(z, 32),
    size: u64(z, 40),
    offset: u64(z, 48),
    end: at,
  };
}

/** The directory's entries as parsed, before they are checked. */
interface ParsedDirectory {
  /** The entries (their `limit` is set by {@linkcode checkDataRanges}). */
  members: ZipMember[];
  /** Each entry's name length in bytes. */
  nameLengths: Uint16Array;
  /** Each entry's name class bits ({@linkcode nameClass}). */
  nameClasses: Uint8Array;
}

/** Phase 2: the directory's entries, each within the directory and nothing after them. */
function parseCentralDirectory(
  source: RandomAccessBytes,
  location: DirectoryLocation,
): ParsedDirectory | ZipProblem {
  const { count } = location;
  // A copy: the source may reuse its buffer on the next read.
  const cd = source.read(location.offset, location.size).slice();
  // Directory entries become the members themselves (limits are set later): a pack may have
  // millions of them, so no second object per entry.
  const members: ZipMember[] = [];
  const nameLengths = new Uint16Array(count);
  const nameClasses = new Uint8Array(count);
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (at + ZIP_CENTRAL_LEN > cd.length || u32(cd, at) !== ZIP_CENTRAL_SIG) {
      return problem("unreadable archive", `central directory entry ${i + 1} is damaged`);
    }
    const nameLen = u16(cd, at + 28);
    const extraLen = u16(cd, at + 30);
    const commentLen = u16(cd, at + 32);
    if (at + ZIP_CENTRAL_LEN + nameLen + extraLen + commentLen > cd.length) {
      return problem("unreadable archive", `central directory entry ${i + 1} is truncated`);
    }
    nameLengths[i] = nameLen;
    const raw = cd.subarray(at + ZIP_CENTRAL_LEN, at + ZIP_CENTRAL_LEN + nameLen);
    nameClasses[i] = nameClass(raw);
    members.push({
      name: decodeName(raw, nameClasses[i]),
      method: u16(cd, at + 10),
      flags: u16(cd, at + 8),
      crc32: u32(cd, at + 16),
      compressedSize: u32(cd, at + 20),
      size: u32(cd, at + 24),
      localOffset: u32(cd, at + 42),
      limit: 0,
    });
    at += ZIP_CENTRAL_LEN + nameLen + extraLen + commentLen;
  }
  if (at !== cd.length) {
    return problem("unreadable archive", "the central directory holds more than its entries");
  }
  return { members, nameLengths, nameClasses };
}

/**
 * Phase 3: every entry on its own and all of them together — name length and safety, no two
 * names equal ignoring case, no encryption, stored or deflated only, declared sizes within
 * the limits, stored sizes consistent, the total within its limit.
 */
function checkEntries(directory: ParsedDirectory, limits: ZipLimits): ZipProblem[] {
  const problems: ZipProblem[] = [];
  const add = (kind: ZipProblemKind, member: string, message: string) =>
    problems.push({ kind, member, message });
  const seen = new Map<string, string>();
  // A pack's names are distinct by construction; proving it in one pass spares a map of up to
  // millions of folded names. When it cannot be proved, the map finds the duplicates.
  const distinct = distinctIgnoringCase(directory);
  let total = 0;
  const { members } = directory;
  // A loop, with no closure made per member: a pack has 100 000s of them.
  for (let i = 0; i < members.length; i++) {
    const e = members[i];
    if (directory.nameLengths[i] > limits.maxNameBytes) {
      add(
        "unsupported zip feature",
        e.name,
        `member name ${
          JSON.stringify(e.name).slice(0, 80)
        }… is longer than ${limits.maxNameBytes} bytes`,
      );
      continue;
    }
    // A plain name has no problem (memberNameProblem's own first test, here from its bytes).
    const slip = (directory.nameClasses[i] & NAME_NOT_PLAIN) === 0
      ? undefined
      : memberNameProblem(e.name);
    if (slip !== undefined) {
      add(
        "zip-slip member name",
        e.name,
        `${JSON.stringify(e.name)}: zip-slip member name (${slip}); refused`,
      );
    }
    const folded = distinct ? undefined : e.name.toLowerCase();
    const earlier = folded === undefined ? undefined : seen.get(folded);
    if (earlier !== undefined) {
      add(
        "duplicate member",
        e.name,
        earlier === e.name
          ? `${JSON.stringify(e.name)}: duplicate member (the name appears more than once)`
          : `${JSON.stringify(e.name)}: duplicate member (same name as ${
            JSON.stringify(earlier)
          } ignoring case)`,
      );
    } else if (folded !== undefined) seen.set(folded, e.name);
    if (
      (e.flags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENCRYPTION)) !== 0 || e.method === METHOD_AES
    ) {
      add("encrypted member", e.name, `${JSON.stringify(e.name)}: encrypted member; refused`);
      continue;
    }
    if (e.method !== ZIP_METHOD_STORED && e.method !== ZIP_METHOD_DEFLATE) {
      add(
        "unsupported zip feature",
        e.name,
        `${JSON.stringify(e.name)}: compression method ${e.method} (only stored and deflate)`,
      );
      continue;
    }
    const limit = limits.maxMemberBytes(e.name, i);
    if (e.size > limit) {
      add(
        "oversized member",
        e.name,
        `${
          JSON.stringify(e.name)
        }: oversized member: declares ${e.size} bytes, over the ${limit}-byte limit`,
      );
    }
    if (e.method === ZIP_METHOD_STORED && e.compressedSize !== e.size) {
      add(
        "corrupt member",
        e.name,
        `${JSON.stringify(e.name)}: stored member with different compressed and uncompressed sizes`,
      );
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
  return problems;
}

/** Folded names known apart without a map; past this many, the map is used. */
const MAX_FOLDED_NAMES = 64;

/**
 * True when no two names can be equal ignoring case, proved without a map of every name: the
 * names that are ASCII without an uppercase letter (their own lowercase form) come in strictly
 * increasing order, so they are distinct; the few others (README.md) are ASCII, and their
 * lowercase forms are none of those names and differ from each other. False (the map decides)
 * otherwise: a non-ASCII name (Unicode case folding), names out of order, many folded names.
 */
function distinctIgnoringCase(directory: ParsedDirectory): boolean {
  const { members, nameClasses } = directory;
  const plain: string[] = [];
  const folded: string[] = [];
  for (let i = 0; i < members.length; i++) {
    const name = members[i].name;
    // A byte ≥ 0x80 (so a character ≥ 0x80 once decoded, or an undecodable name).
    if ((nameClasses[i] & NAME_NOT_ASCII) !== 0) return false;
    if ((nameClasses[i] & NAME_UPPER) !== 0) {
      if (folded.length === MAX_FOLDED_NAMES) return false;
      folded.push(name.toLowerCase());
    } else if (plain.length > 0 && !(plain[plain.length - 1] < name)) return false;
    else plain.push(name);
  }
  for (let k = 0; k < folded.length; k++) {
    if (folded.indexOf(folded[k]) !== k || sortedIncludes(plain, folded[k])) return false;
  }
  return true;
}

/** Binary search in names sorted by `<`. */
function sortedIncludes(sorted: readonly string[], name: string): boolean {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid] < name) lo = mid + 1;
    else hi = mid;
  }
  return lo < sorted.length && sorted[lo] === name;
}

/**
 * Phase 4: data ranges from the directory alone — each member's local header, name and data
 * must end before the next member starts (overlapping members are how the densest zip bombs
 * reuse one compressed stream); sets each member's `limit`. The local header itself is read,
 * and checked against this limit, when the member is read.
 */
function checkDataRanges(directory: ParsedDirectory, cdOffset: number): ZipProblem[] {
  const { members: entries, nameLengths } = directory;
  const problems: ZipProblem[] = [];
  // Writers put the directory in archive order: sort only when it is not.
  const order = entries.map((_, i) => i);
  for (let i = 1; i < entries.length; i++) {
    if (entries[i].localOffset < entries[i - 1].localOffset) {
      order.sort((a, b) => entries[a].localOffset - entries[b].localOffset);
      break;
    }
  }
  for (let k = 0; k < order.length; k++) {
    const e = entries[order[k]];
    const limit = k + 1 < order.length ? entries[order[k + 1]].localOffset : cdOffset;
    const end = e.localOffset + ZIP_LOCAL_LEN + nameLengths[order[k]] + e.compressedSize;
    if (end > limit) {
      const next = k + 1 < order.length ? entries[order[k + 1]].name : undefined;
      problems.push({
        kind: "unreadable archive",
        member: e.name,
        message: next === undefined
          ? `${JSON.stringify(e.name)}: member data runs past the archive data`
          : `${JSON.stringify(e.name)}: data overlaps member ${JSON.stringify(next)} (zip bomb)`,
      });
      continue;
    }
    e.limit = limit;
  }
  return problems;
}

/** True when `raw` is all ASCII and spells `name` (no string is made). */
function asciiEquals(raw: Uint8Array, name: string): boolean {
  if (raw.length !== name.length) return false;
  for (let i = 0; i < raw.length; i++) {
    if (raw[i] >= 0x80 || raw[i] !== name.charCodeAt(i)) return false;
  }
  return true;
}

/**
 * Where `member`'s data starts: reads its local header and checks it against the directory
 * (signature, same name, method and flags, no encryption) and against the member's limit.
 */
function dataOffsetOf(source: RandomAccessBytes, member: ZipMember): number {
  if (member.localOffset + ZIP_LOCAL_LEN > member.limit) {
    throw new ZipMemberError(member.name, "local header outside the archive data");
  }
  const local = source.read(member.localOffset, ZIP_LOCAL_LEN);
  if (local.length < ZIP_LOCAL_LEN || u32(local, 0) !== ZIP_LOCAL_SIG) {
    throw new ZipMemberError(member.name, "no local header where the directory points");
  }
  const nameLen = u16(local, 26);
  const extraLen = u16(local, 28);
  const localFlags = u16(local, 6);
  const method = u16(local, 8);
  const rawName = source.read(member.localOffset + ZIP_LOCAL_LEN, nameLen);
  if (!asciiEquals(rawName, member.name)) {
    const localName = decodeName(rawName);
    if (localName !== member.name) {
      throw new ZipMemberError(member.name, `local header names ${JSON.stringify(localName)}`);
    }
  }
  if ((localFlags & (ZIP_FLAG_ENCRYPTED | ZIP_FLAG_STRONG_ENCRYPTION)) !== 0) {
    throw new ZipMemberError(member.name, "encrypted member (local header); refused");
  }
  if (method !== member.method || (localFlags & ZIP_FLAG_UTF8) !== (member.flags & ZIP_FLAG_UTF8)) {
    throw new ZipMemberError(member.name, "local header disagrees with the central directory");
  }
  const dataOffset = member.localOffset + ZIP_LOCAL_LEN + nameLen + extraLen;
  if (dataOffset + member.compressedSize > member.limit) {
    throw new ZipMemberError(member.name, "member data overlaps the next member");
  }
  return dataOffset;
}

/** {@linkcode streamZipMember}, synchronously with fflate (for whole members read at once). */
function* chunksSync(
  source: RandomAccessBytes,
  member: ZipMember,
): Generator<Uint8Array> {
  const dataOffset = dataOffsetOf(source, member);
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
        dataOffset + at,
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
        inflater.push(source.read(dataOffset + at, Math.max(0, step)), finished);
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
  checkInflated(member, produced, crc.value());
}

/**
 * The uncompressed bytes of `member`, in chunks, inflated in bounded steps (the runtime's
 * native DEFLATE, fed 16 KiB at a time): it throws {@linkcode ZipMemberError} as soon as the
 * output passes the declared size, and at the end when the size or CRC-32 differ from the
 * directory's.
 */
export async function* streamZipMember(
  source: RandomAccessBytes,
  member: ZipMember,
): AsyncGenerator<Uint8Array> {
  if (member.method === 0) {
    yield* chunksSync(source, member);
    return;
  }
  const dataOffset = dataOffsetOf(source, member);
  const crc = new Crc32();
  let produced = 0;
  let at = 0;
  const input = new ReadableStream<BufferSource>({
    pull(controller) {
      if (at >= member.compressedSize) {
        controller.close();
        return;
      }
      const step = Math.min(INFLATE_STEP, member.compressedSize - at);
      // A copy: the source may reuse its buffer before the stream consumes this chunk.
      controller.enqueue(source.read(dataOffset + at, step).slice());
      at += step;
    },
  }, { highWaterMark: 0 });
  const reader = input.pipeThrough<Uint8Array>(new DecompressionStream("deflate-raw"))
    .getReader();
  try {
    for (;;) {
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        throw new ZipMemberError(
          member.name,
          `deflate data is damaged (${(error as Error).message})`,
        );
      }
      if (next.done) break;
      produced += next.value.length;
      if (produced > member.size) {
        throw new ZipMemberError(
          member.name,
          `inflates past its declared size of ${member.size} bytes (zip bomb); stopped`,
        );
      }
      crc.update(next.value);
      yield next.value;
    }
  } finally {
    // Stops the pipe (and the decompressor) when the consumer or a check ends early.
    await reader.cancel().catch(() => {});
  }
  checkInflated(member, produced, crc.value());
}

/** The end checks of a streamed member: its inflated size and CRC-32, as the directory says. */
function checkInflated(member: ZipMember, produced: number, crc32: number): void {
  if (produced !== member.size) {
    throw new ZipMemberError(
      member.name,
      `inflates to ${produced} bytes, the directory declares ${member.size}`,
    );
  }
  if (crc32 !== member.crc32) {
    throw new ZipMemberError(member.name, "CRC-32 does not match the central directory");
  }
}

function checkWhole(member: ZipMember, out: Uint8Array): Uint8Array {
  const crc = new Crc32();
  crc.update(out);
  checkInflated(member, out.length, crc.value());
  return out;
}

/**
 * A stored member's bytes as a view into the source's buffer (valid until the next read: copy
 * what you keep), after every check `readZipMember` makes. For the many small stored members
 * of a pack (its signatures), which the caller copies into one buffer anyway.
 */
export function readStoredMemberView(source: RandomAccessBytes, member: ZipMember): Uint8Array {
  if (member.method !== 0) return readZipMember(source, member);
  const dataOffset = dataOffsetOf(source, member);
  const data = source.read(dataOffset, member.compressedSize);
  const crc = new Crc32();
  crc.update(data);
  checkInflated(member, data.length, crc.value());
  return data;
}

/** The whole uncompressed member (for members whose declared size is small). */
export function readZipMember(source: RandomAccessBytes, member: ZipMember): Uint8Array {
  if (member.compressedSize <= ONE_SHOT_LIMIT) {
    const dataOffset = dataOffsetOf(source, member);
    if (member.method === 0) {
      return checkWhole(member, source.read(dataOffset, member.compressedSize).slice());
    }
    const data = source.read(dataOffset, member.compressedSize);
    let got: Uint8Array;
    try {
      got = inflateSync(data, { out: new Uint8Array(member.size + 1) });
    } catch (error) {
      if (error instanceof RangeError) {
        throw new ZipMemberError(
          member.name,
          `inflates past its declared size of ${member.size} bytes (zip bomb); stopped`,
        );
      }
      throw new ZipMemberError(
        member.name,
        `deflate data is damaged (${(error as Error).message})`,
      );
    }
    if (got.length > member.size) {
      throw new ZipMemberError(
        member.name,
        `inflates past its declared size of ${member.size} bytes (zip bomb); stopped`,
      );
    }
    return checkWhole(member, got);
  }
  const out = new Uint8Array(member.size);
  let at = 0;
  for (const chunk of chunksSync(source, member)) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

/**
 * {@linkcode readZipMember} that inflates a large member with the runtime's native DEFLATE
 * ({@linkcode streamZipMember}: the same checks, bounded steps) instead of in JavaScript; small
 * and stored members are read as by `readZipMember`.
 */
export async function readZipMemberNative(
  source: RandomAccessBytes,
  member: ZipMember,
): Promise<Uint8Array> {
  if (member.method === 0 || member.compressedSize <= ONE_SHOT_LIMIT) {
    return readZipMember(source, member);
  }
  // streamZipMember stops before its output passes the declared size: the buffer suffices.
  const out = new Uint8Array(member.size);
  let at = 0;
  for await (const chunk of streamZipMember(source, member)) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
