// `pack-manifest.json` (FORMATS.md §5): its schema and versions, its fields (one list, checked
// against the type), its output hash, and the strict parse the verifier runs over its bytes
// (canonical bytes exactly, exactly these fields with their types). The builder writes the
// fields this module names (src/compliance/pack.ts, _manifest_stream.ts). Pure.
import {
  canonicalBytes,
  canonicalObjectSpans,
  compareCodePoints,
  decodeUtf8Strict,
  type JsonObject,
  type JsonValue,
  parseJsonBytes,
} from "../canonical/mod.ts";
import { sha256Hex, sha256Stream } from "../crypto/mod.ts";
import { type InputHashes, inputHashesOf, scanManifestTop } from "./input_hashes.ts";
import type { ManifestOperator } from "./operator.ts";
import { packWindow } from "./period.ts";

/** `schema` of every pack manifest. */
export const PACK_SCHEMA = "bernstein-compliance-pack";

/** `pack_format_version` this code writes (3: with the checkpoint and inclusion proof). */
export const PACK_FORMAT_VERSION = 3;

/** Versions this code reads: 2 (no checkpoint) and 3. */
export const PACK_FORMAT_VERSIONS: readonly number[] = [2, 3];

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
  /**
   * Member → `sha256:` hex, for every member except the manifest and its signature, in code
   * point order of the names (read in place from the bytes, not as an object).
   */
  input_hashes: InputHashes;
  /** Article 12 facts. */
  article12: JsonObject;
  /** The signing key: kid and SHA-256 of its SPKI DER. */
  operator: ManifestOperator;
  /** `sha256:` of the manifest's `canon` bytes without `output_hash`. */
  output_hash: string;
}

/**
 * Every field of a manifest, in canonical (code point) order: the builder writes exactly these
 * and the verifier refuses any other. A field added to {@linkcode PackManifest} and not here is
 * a type error.
 */
export const MANIFEST_FIELDS = [
  "article12",
  "builder",
  "built_at",
  "entry_count",
  "external_parents",
  "input_hashes",
  "operator",
  "org",
  "output_hash",
  "pack_format_version",
  "period",
  "schema",
] as const satisfies readonly (keyof PackManifest)[];

/** A manifest field. */
export type ManifestField = typeof MANIFEST_FIELDS[number];

// A field added to PackManifest but not to the list is a type error here.
const _everyFieldListed: Record<Exclude<keyof PackManifest, ManifestField>, never> = {};

/**
 * The fields the builder fixes before it has hashed the members: everything but
 * `input_hashes` and `output_hash`, which sealing adds.
 */
export type ManifestBaseField = Exclude<ManifestField, "input_hashes" | "output_hash">;
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
  | { ok: true; manifest: PackManifest; recomputedOutputHash: string }
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
 *
 * `input_hashes` names every member (a million at a million entries): it is scanned in place
 * when it is in its strict canonical form, and the rest of the manifest — a few KB with
 * `input_hashes` emptied — is parsed as any manifest. Otherwise, or when that rest has a
 * problem, the whole manifest is parsed, which words the problems exactly as before.
 */
export function parsePackManifest(bytes: Uint8Array): ParsedManifest {
  return parseScannedManifest(bytes) ?? parseWholeManifest(bytes);
}

const EMPTY_OBJECT = new Uint8Array([0x7b, 0x7d]);

/** The manifest with `input_hashes` scanned in place, or undefined to parse it whole. */
function parseScannedManifest(bytes: Uint8Array): ParsedManifest | undefined {
  const top = scanManifestTop(bytes);
  if (top === undefined) return undefined;
  const listed = top.members[top.inputHashesMember];
  const rest = new Uint8Array(bytes.length - (listed.end - listed.valueStart) + 2);
  rest.set(bytes.subarray(0, listed.valueStart));
  rest.set(EMPTY_OBJECT, listed.valueStart);
  rest.set(bytes.subarray(listed.end), listed.valueStart + 2);
  const parsed = parseWholeManifest(rest);
  if (!parsed.ok) return undefined;
  // Canonical with `{}` and a strict (canonical) `input_hashes`: canonical whole, so the output
  // hash is the hash of the bytes without the `output_hash` member and its joining comma.
  const k = top.members.findIndex((m) => m.key === "output_hash");
  if (k < 0) return undefined;
  const [cutFrom, cutTo] = k > 0
    ? [top.members[k - 1].end, top.members[k].end]
    : [top.members[k].start, top.members.length > 1 ? top.members[1].start : top.members[k].end];
  const hash = sha256Stream().update(bytes.subarray(0, cutFrom)).update(bytes.subarray(cutTo));
  return {
    ok: true,
    recomputedOutputHash: "sha256:" + hash.hexDigest(),
    manifest: { ...parsed.manifest, input_hashes: top.inputHashes },
  };
}

/** The whole manifest parsed as a value (small manifests, and every unusual one). */
function parseWholeManifest(bytes: Uint8Array): ParsedManifest {
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
    if (!(MANIFEST_FIELDS as readonly string[]).includes(key)) {
      problems.push(`unknown field ${JSON.stringify(key)}`);
    }
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
  const inputHashes: [string, string][] = [];
  if (!isObject(v.input_hashes)) problems.push("input_hashes must be an object");
  else {
    for (const [member, h] of Object.entries(v.input_hashes)) {
      if (typeof h !== "string" || !HASH.test(h)) {
        problems.push(`input_hashes[${JSON.stringify(member)}] must be sha256: + 64 hex`);
      } else inputHashes.push([member, h]);
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
      input_hashes: inputHashesOf(inputHashes),
      article12: v.article12 as JsonObject,
      operator: { kid, public_key_sha256: keySha },
      output_hash: outputHash,
    },
  };
}
