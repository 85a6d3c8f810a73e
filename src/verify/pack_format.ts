// The compliance pack format (FORMATS.md §5), shared by the builder (src/compliance) and the
// verifier: member names, size limits, the evidence CSV, the manifest's shape and hashes, the
// operator fingerprint and the UTC-day window. Pure: no I/O.
import {
  canonicalBytes,
  canonicalObjectSpans,
  compareCodePoints,
  decodeUtf8Strict,
  type JsonObject,
  type JsonValue,
  parseJsonBytes,
} from "../canonical/mod.ts";
import { sha256Hex, sha256Stream, spkiDer } from "../crypto/mod.ts";
import type { EntryField, LineageEntry } from "../lineage/mod.ts";
import type { ZipLimits } from "./zip_reader.ts";
import { PACK_FLEET_MEMBER } from "./fleet_events.ts";

/** `schema` of every pack manifest. */
export const PACK_SCHEMA = "bernstein-compliance-pack";

/** `pack_format_version` this code writes (3: with the checkpoint and inclusion proof). */
export const PACK_FORMAT_VERSION = 3;

/** Versions this code reads: 2 (no checkpoint) and 3. */
export const PACK_FORMAT_VERSIONS: readonly number[] = [2, 3];

/** The fixed members of a pack (signatures and agent cards come on top). */
export const PACK_MEMBERS = {
  readme: "README.md",
  instructions: "verify-instructions.md",
  csv: "article12-evidence.csv",
  log: "lineage-log.jsonl",
  operatorKey: "operator.pub",
  manifest: "pack-manifest.json",
  manifestSignature: "pack-manifest.json.sig",
} as const;

/** The checkpoint document a pack carries (pack format 3, FORMATS.md §8). */
export const PACK_CHECKPOINT_MEMBER = "checkpoint.json";

/** The batch inclusion proof of the window's entries in that checkpoint (pack format 3). */
export const PACK_INCLUSION_MEMBER = "inclusion-proof.json";

/** What a member of a pack is, by its name. */
export type PackMemberKind =
  | keyof typeof PACK_MEMBERS
  | "signature"
  | "card"
  | "checkpoint"
  | "inclusion"
  | "attestation"
  | "attachment"
  | "fleet";

const FIXED = new Map<string, PackMemberKind>([
  ...Object.entries(PACK_MEMBERS).map(([kind, name]) => [name, kind as PackMemberKind] as const),
  [PACK_CHECKPOINT_MEMBER, "checkpoint"],
  [PACK_INCLUSION_MEMBER, "inclusion"],
  [PACK_FLEET_MEMBER, "fleet"],
]);
const ATTESTATION_MEMBER = /^attestations\/([0-9a-f]{64})\/([0-9a-f]{64})\.json$/;
const ATTACHMENT_MEMBER =
  /^attachments\/([A-Za-z0-9._-]+)\/(manifest\.json|events\.jsonl|lineage\.jsonl|bytes\/[0-9a-f]{64})$/;

/** Folder of a run's attachment export inside a pack (`--with-attachments`, FORMATS.md §7.1). */
export function attachmentMemberName(runId: string, file: string): string {
  return `attachments/${memberSegment(runId)}/${file}`;
}

/** The run folder and the file inside it of an attachment member name. */
export function attachmentMemberParts(name: string): { run: string; file: string } | undefined {
  const m = ATTACHMENT_MEMBER.exec(name);
  if (m === null || m[1] === "." || m[1] === "..") return undefined;
  return { run: m[1], file: m[2] };
}
const SAFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

function safeSegment(s: string): boolean {
  return SAFE_SEGMENT.test(s) && s !== "." && s !== "..";
}

/** `signatures/<64 lowercase hex>.jws`, checked without a regex run. */
function isSignatureMember(name: string): boolean {
  if (name.length !== 79 || !name.startsWith("signatures/") || !name.endsWith(".jws")) {
    return false;
  }
  for (let i = 11; i < 75; i++) {
    const c = name.charCodeAt(i);
    if (!((c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66))) return false;
  }
  return true;
}

/** The kind of a member name, or undefined when no pack holds such a member. */
export function packMemberKind(name: string): PackMemberKind | undefined {
  const fixed = FIXED.get(name);
  if (fixed !== undefined) return fixed;
  // A pack has one signature member per entry: this test runs 100 000s of times.
  if (isSignatureMember(name)) return "signature";
  if (ATTESTATION_MEMBER.test(name)) return "attestation";
  if (attachmentMemberParts(name) !== undefined) return "attachment";
  const parts = name.split("/");
  if (
    parts.length === 3 && parts[0] === "agent-cards" && safeSegment(parts[1]) &&
    parts[2].endsWith(".json") && safeSegment(parts[2].slice(0, -5))
  ) {
    return "card";
  }
  return undefined;
}

/**
 * `attestations/<entry-hex>/<attestation-hex>.json`: a foreign attestation of one entry inside
 * a pack (FORMATS.md §9), named by the SHA-256 of its bytes.
 */
export function attestationMemberName(entryHash: string, attestationHex: string): string {
  return `attestations/${
    entryHash.startsWith("sha256:") ? entryHash.slice(7) : entryHash
  }/${attestationHex}.json`;
}

/** The entry hash and attestation hex of an attestation member name. */
export function attestationMemberParts(
  name: string,
): { entryHash: string; hex: string } | undefined {
  const m = ATTESTATION_MEMBER.exec(name);
  return m === null ? undefined : { entryHash: `sha256:${m[1]}`, hex: m[2] };
}

/** `signatures/<entry-hex>.jws`: the detached JWS of one entry inside a pack. */
export function signatureMemberName(entryHash: string): string {
  return `signatures/${entryHash.startsWith("sha256:") ? entryHash.slice(7) : entryHash}.jws`;
}

/** A name segment safe in a member name: every character outside `[A-Za-z0-9._-]` → `_`. */
export function memberSegment(text: string): string {
  const s = text.replace(/[^A-Za-z0-9._-]/gu, "_");
  return s === "" || s === "." || s === ".." ? `_${s}` : s;
}

/** `agent-cards/<dir>/<kid>.json` (both parts sanitised like card folders). */
export function cardMemberName(agentId: string, kid: string): string {
  return `agent-cards/${memberSegment(agentId)}/${memberSegment(kid)}.json`;
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** The fixed size limits of `bernstein-verify pack` (bytes, uncompressed unless noted). */
export const PACK_LIMITS = {
  /** The archive file itself (ZIP64 is not accepted, so it is below 4 GiB anyway). */
  archive: 4 * GiB - 1,
  /** Members in the archive. */
  members: 2_000_000,
  /** One member name. */
  nameBytes: 512,
  /** All members together. */
  total: 4 * GiB - 1,
  /** Per kind of member. */
  member: {
    readme: 1 * MiB,
    instructions: 1 * MiB,
    csv: 2 * GiB - 1,
    log: 2 * GiB - 1,
    operatorKey: 4 * KiB,
    manifest: 256 * MiB,
    manifestSignature: 4 * KiB,
    signature: 4 * KiB,
    card: 64 * KiB,
    checkpoint: 1 * MiB,
    inclusion: 256 * MiB,
    attestation: 64 * KiB,
    // An attested file is read up to 64 MiB; the events and lineage of one run stay below.
    attachment: 256 * MiB,
    fleet: 256 * MiB,
  } satisfies Record<PackMemberKind, number>,
  /** Members of unknown kind are refused anyway; this bounds what is read to name them. */
  unknown: 64 * KiB,
} as const;

/** {@linkcode PACK_LIMITS} as the ZIP reader takes them. */
export function packZipLimits(limits: typeof PACK_LIMITS = PACK_LIMITS): ZipLimits {
  return {
    maxArchiveBytes: limits.archive,
    maxMembers: limits.members,
    maxNameBytes: limits.nameBytes,
    maxTotalBytes: limits.total,
    maxMemberBytes: (name) => {
      const kind = packMemberKind(name);
      return kind === undefined ? limits.unknown : limits.member[kind];
    },
  };
}

/** The header row of `article12-evidence.csv`: lineage entry fields (a renamed one is a type error). */
export const CSV_COLUMNS = [
  "ts_ns",
  "artefact_path",
  "artefact_kind",
  "content_hash",
  "parent_hashes",
  "agent_id",
  "agent_card_kid",
  "tool_call_id",
  "span_id",
] as const satisfies readonly EntryField[];

function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/** The CSV header line, with its `\n`. */
export function csvHeader(): string {
  return CSV_COLUMNS.join(",") + "\n";
}

/** One CSV row for an entry (RFC 4180 quoting, parents space-joined), with its `\n`. */
export function csvRow(entry: LineageEntry): string {
  let row = "";
  for (let i = 0; i < CSV_COLUMNS.length; i++) {
    const value = entry[CSV_COLUMNS[i]];
    const text = typeof value === "bigint"
      ? value.toString()
      : Array.isArray(value)
      ? value.join(" ")
      : value;
    row += (i === 0 ? "" : ",") + csvField(text);
  }
  return row + "\n";
}

/** Hex SHA-256 of an Ed25519 public key's SPKI DER: the operator fingerprint. */
export function operatorFingerprint(publicKey: Uint8Array): string {
  return sha256Hex(spkiDer(publicKey));
}

/**
 * Normalises a fingerprint as people paste it (`SHA256:`/`sha256:` prefix, colons, spaces,
 * upper case) to 64 lowercase hex, or undefined when it is not one.
 */
export function normalizeFingerprint(text: string): string | undefined {
  const hex = text.trim().replace(/^sha256:/i, "").replace(/[:\s]/g, "").toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const NS_PER_DAY = 86_400_000_000_000n;

/** Epoch day number of a `YYYY-MM-DD` UTC date, or undefined when it is not a real date. */
export function utcDay(text: string): number | undefined {
  const m = DAY.exec(text);
  if (!m) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (new Date(ms).toISOString().slice(0, 10) !== text) return undefined;
  return ms / 86_400_000;
}

/** The inclusive `ts_ns` bounds of a window of UTC days. */
export interface PackWindow {
  /** First nanosecond of `since` (00:00:00 UTC). */
  startNs: bigint;
  /** Last nanosecond of `until` (23:59:59.999999999 UTC). */
  endNs: bigint;
  /** Days covered, both ends included. */
  days: number;
}

/** The window of `since`..`until` (inclusive UTC days); undefined when either is bad. */
export function packWindow(since: string, until: string): PackWindow | undefined {
  const a = utcDay(since);
  const b = utcDay(until);
  if (a === undefined || b === undefined || b < a) return undefined;
  return {
    startNs: BigInt(a) * NS_PER_DAY,
    endNs: BigInt(b + 1) * NS_PER_DAY - 1n,
    days: b - a + 1,
  };
}

/** ISO 8601 UTC time of a `ts_ns` (to the millisecond). */
export function isoOfNs(tsNs: bigint): string {
  return new Date(Number(tsNs / 1_000_000n)).toISOString();
}

/** The pack manifest (FORMATS.md §5) after its shape was checked. */
export interface PackManifest {
  /** {@linkcode PACK_SCHEMA}. */
  schema: string;
  /** One of {@linkcode PACK_FORMAT_VERSIONS}. */
  pack_format_version: number;
  /** `bernstein <version>`. */
  builder: string;
  /** The organisation the pack is for. */
  org: string;
  /** Inclusive UTC days. */
  period: { since: string; until: string };
  /** Build time (`--build-time` / `SOURCE_DATE_EPOCH`), or null when none was passed. */
  built_at: string | null;
  /** Lines of `lineage-log.jsonl`. */
  entry_count: number;
  /**
   * Entry hashes that window entries name as parents and that precede the window in the
   * operator's log (sorted): they are not dangling, but they are not in the pack either.
   */
  external_parents: string[];
  /** Member → `sha256:` hex, for every member except the manifest and its signature. */
  input_hashes: Map<string, string>;
  /** Article 12 facts. */
  article12: JsonObject;
  /** The signing key: kid and SHA-256 of its SPKI DER. */
  operator: { kid: string; public_key_sha256: string };
  /** `sha256:` of the manifest's `canon` bytes without `output_hash`. */
  output_hash: string;
}

const MANIFEST_FIELDS = [
  "schema",
  "pack_format_version",
  "builder",
  "org",
  "period",
  "built_at",
  "entry_count",
  "external_parents",
  "input_hashes",
  "article12",
  "operator",
  "output_hash",
];
const HASH = /^sha256:[0-9a-f]{64}$/;

function isObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    Object.getPrototypeOf(v) === Object.prototype;
}

function isInt(v: JsonValue | undefined): v is number | bigint {
  return (typeof v === "number" && Number.isSafeInteger(v)) || typeof v === "bigint";
}

/** `sha256:` of the `canon` bytes of `manifest` without its `output_hash`. */
export function manifestOutputHash(manifest: JsonObject): string {
  const { output_hash: _, ...rest } = manifest;
  return "sha256:" + sha256Hex(canonicalBytes(rest, "canon"));
}

/** Parsed manifest bytes, or the problems that stopped them from being one. */
export type ParsedManifest =
  | { ok: true; manifest: PackManifest; value: JsonObject; recomputedOutputHash: string }
  | { ok: false; problems: string[] };

const COMMA_BYTES = new Uint8Array([0x2c]);
const OPEN_BYTES = new Uint8Array([0x7b]);
const CLOSE_BYTES = new Uint8Array([0x7d]);
const COLON = new Uint8Array([0x3a]);

function isPlainObject(v: JsonValue | undefined): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v) &&
    Object.getPrototypeOf(v) === Object.prototype;
}

/**
 * Serialises `value` (a parsed manifest) piece by piece in `canon` order — objects of the top
 * two levels key by key, everything below whole — and in that single pass both compares the
 * pieces with `bytes` (the byte binding) and hashes them without the top-level
 * `output_hash` (the output hash). A 100 000-entry manifest is ~16 MB: it is never held as
 * one serialised string.
 */
export function checkManifestBytes(
  value: JsonObject,
  bytes: Uint8Array,
): { canonical: boolean; outputHash: string } {
  const rest = sha256Stream();
  let pos = 0;
  let canonical = true;
  let hashing = true;
  const compare = (part: Uint8Array) => {
    if (!canonical) return;
    if (pos + part.length > bytes.length) {
      canonical = false;
      return;
    }
    for (let i = 0; i < part.length; i++) {
      if (bytes[pos + i] !== part[i]) {
        canonical = false;
        return;
      }
    }
    pos += part.length;
  };
  const emit = (part: Uint8Array) => {
    if (hashing) rest.update(part);
    compare(part);
  };
  const walk = (v: JsonValue, depth: number, top: boolean) => {
    if (!isPlainObject(v) || depth >= 2) {
      emit(canonicalBytes(v, "canon"));
      return;
    }
    const keys = Object.keys(v).filter((k) => v[k] !== undefined).sort(compareCodePoints);
    emit(OPEN_BYTES);
    let written = 0; // fields written to the comparison
    let hashed = 0; // fields written to the hash
    for (const key of keys) {
      // The output hash covers the manifest without its own field: compare it, never hash it.
      const skip = top && key === "output_hash";
      if (written > 0) compare(COMMA_BYTES);
      if (!skip && hashed > 0 && hashing) rest.update(COMMA_BYTES);
      const was = hashing;
      if (skip) hashing = false;
      emit(canonicalBytes(key, "canon"));
      emit(COLON);
      walk(v[key] as JsonValue, depth + 1, false);
      hashing = was;
      written++;
      if (!skip) hashed++;
    }
    emit(CLOSE_BYTES);
  };
  walk(value, 0, true);
  return { canonical: canonical && pos === bytes.length, outputHash: "sha256:" + rest.hexDigest() };
}

/** UTF-8 length of `text` from `from` to `to` (a lone surrogate counts as its 3-byte U+FFFD). */
function utf8Length(text: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < to) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) {
        n += 4;
        i++;
      } else n += 3;
    } else n += 3;
  }
  return n;
}

/**
 * The common case of a manifest, natively: strictly decoded, `JSON.parse`d, checked to be
 * exactly its canonical print in one walk that also says where the top-level `output_hash`
 * member is; the output hash is then the SHA-256 of the bytes without that member (they are
 * the canonical print of the rest). Undefined when anything is unusual (invalid UTF-8, an
 * escape, not canonical, no `output_hash`): the strict path then decides and words the problem.
 */
function fastManifest(bytes: Uint8Array): { value: JsonObject; outputHash: string } | undefined {
  let text: string;
  let parsed: unknown;
  try {
    text = decodeUtf8Strict(bytes);
    if (text.includes("\\")) return undefined;
    parsed = JSON.parse(text);
  } catch {
    return undefined;
  }
  const walked = canonicalObjectSpans(parsed, text, "canon");
  if (walked === undefined) return undefined;
  const i = walked.spans.findIndex((s) => s.key === "output_hash");
  if (i < 0) return undefined;
  // Without the member and the comma that joins it to its neighbour.
  const span = walked.spans[i];
  const [cutFrom, cutTo] = i > 0
    ? [walked.spans[i - 1].end, span.end]
    : [span.start, walked.spans.length > 1 ? walked.spans[1].start : span.end];
  const a = utf8Length(text, 0, cutFrom);
  const b = a + utf8Length(text, cutFrom, cutTo);
  const rest = sha256Stream().update(bytes.subarray(0, a)).update(bytes.subarray(b));
  return { value: walked.value, outputHash: "sha256:" + rest.hexDigest() };
}

/**
 * Parses `pack-manifest.json` strictly: `canon` bytes exactly (no newline), exactly the
 * fields of FORMATS.md §5 with their types. Hashes are not compared here.
 */
export function parsePackManifest(bytes: Uint8Array): ParsedManifest {
  let value: JsonValue;
  const problems: string[] = [];
  let bound: { canonical: boolean; outputHash: string } | undefined;
  const fast = fastManifest(bytes);
  if (fast !== undefined) {
    value = fast.value;
    bound = { canonical: true, outputHash: fast.outputHash };
  } else {
    try {
      value = parseJsonBytes(bytes);
    } catch (error) {
      return { ok: false, problems: [`not valid JSON: ${(error as Error).message}`] };
    }
    if (!isObject(value)) return { ok: false, problems: ["not a JSON object"] };
    try {
      bound = checkManifestBytes(value, bytes);
    } catch (error) {
      problems.push(`cannot be serialised canonically: ${(error as Error).message}`);
    }
  }
  if (!isObject(value)) return { ok: false, problems: ["not a JSON object"] };
  if (bound !== undefined && !bound.canonical) {
    problems.push("bytes are not canonical (canon profile: sorted keys, no spaces, no newline)");
  }
  for (const key of Object.keys(value)) {
    if (!MANIFEST_FIELDS.includes(key)) problems.push(`unknown field ${JSON.stringify(key)}`);
  }
  for (const key of MANIFEST_FIELDS) {
    if (!Object.hasOwn(value, key)) problems.push(`field ${key} is missing`);
  }
  if (problems.length > 0) return { ok: false, problems };
  const v = value;
  const str = (key: string) => {
    if (typeof v[key] !== "string") problems.push(`${key} must be a string`);
    return v[key] as string;
  };
  const schema = str("schema");
  if (schema !== undefined && typeof schema === "string" && schema !== PACK_SCHEMA) {
    problems.push(`schema is ${JSON.stringify(schema)}, expected ${JSON.stringify(PACK_SCHEMA)}`);
  }
  if (
    typeof v.pack_format_version !== "number" ||
    !PACK_FORMAT_VERSIONS.includes(v.pack_format_version)
  ) {
    problems.push(`pack_format_version must be one of ${PACK_FORMAT_VERSIONS.join(", ")}`);
  }
  const builder = str("builder");
  const org = str("org");
  const outputHash = str("output_hash");
  if (typeof outputHash === "string" && !HASH.test(outputHash)) {
    problems.push("output_hash must be sha256: + 64 hex");
  }
  const period = v.period;
  let since = "";
  let until = "";
  if (
    !isObject(period) || Object.keys(period).sort().join(",") !== "since,until" ||
    typeof period.since !== "string" || typeof period.until !== "string"
  ) {
    problems.push("period must be {since, until} with YYYY-MM-DD strings");
  } else {
    since = period.since;
    until = period.until;
    if (packWindow(since, until) === undefined) {
      problems.push(`period ${since}..${until} is not a valid range of UTC days`);
    }
  }
  const builtAt = v.built_at;
  if (builtAt !== null && typeof builtAt !== "string") {
    problems.push("built_at must be a string or null");
  }
  if (!isInt(v.entry_count) || Number(v.entry_count) < 0) {
    problems.push("entry_count must be a non-negative integer");
  }
  const external: string[] = [];
  if (!Array.isArray(v.external_parents)) problems.push("external_parents must be a list");
  else {
    for (const [i, h] of v.external_parents.entries()) {
      if (typeof h !== "string" || !HASH.test(h)) {
        problems.push(`external_parents[${i}] must be sha256: + 64 hex`);
      } else external.push(h);
    }
  }
  const inputHashes = new Map<string, string>();
  if (!isObject(v.input_hashes)) problems.push("input_hashes must be an object");
  else {
    for (const [member, h] of Object.entries(v.input_hashes)) {
      if (typeof h !== "string" || !HASH.test(h)) {
        problems.push(`input_hashes[${JSON.stringify(member)}] must be sha256: + 64 hex`);
      } else inputHashes.set(member, h);
    }
  }
  if (!isObject(v.article12)) problems.push("article12 must be an object");
  const op = v.operator;
  let kid = "";
  let keySha = "";
  if (
    !isObject(op) || Object.keys(op).sort().join(",") !== "kid,public_key_sha256" ||
    typeof op.kid !== "string" || op.kid === "" || typeof op.public_key_sha256 !== "string" ||
    !/^[0-9a-f]{64}$/.test(op.public_key_sha256)
  ) {
    problems.push("operator must be {kid, public_key_sha256 (64 hex)}");
  } else {
    kid = op.kid;
    keySha = op.public_key_sha256;
  }
  if (problems.length > 0 || bound === undefined) return { ok: false, problems };
  return {
    ok: true,
    value: v,
    recomputedOutputHash: bound.outputHash,
    manifest: {
      schema,
      pack_format_version: v.pack_format_version as number,
      builder,
      org,
      period: { since, until },
      built_at: builtAt as string | null,
      entry_count: Number(v.entry_count),
      external_parents: external,
      input_hashes: inputHashes,
      article12: v.article12 as JsonObject,
      operator: { kid, public_key_sha256: keySha },
      output_hash: outputHash,
    },
  };
}
