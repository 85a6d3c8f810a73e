// Lineage v1 entries (FORMATS.md §4): the exact field set, validation, canonical bytes, entry
// hash and operator HMAC. Optional fields are omitted when absent, never null, so an entry
// without them keeps the exact bytes (and hash, HMAC, signature) it had before they existed.
import { canonicalBytes, type JsonObject, type JsonValue } from "../canonical/mod.ts";
import { hmacSha256Hex, type KeyedHmacSha256, sha256Hex } from "../crypto/mod.ts";
import { artefactKeyProblem } from "./artefact_key.ts";
import { LineageEntryError } from "./errors.ts";

/** The closed set of artefact kinds. */
export const ARTEFACT_KINDS = [
  "file",
  "config",
  "sdd-runtime",
  "tool-result",
  "query-result",
  "mcp-result",
  "report",
  "dataset",
  "action_log",
  "ops_result",
  "external",
  "finding",
  "coverage",
  "blob",
] as const;

/** One of {@linkcode ARTEFACT_KINDS}. */
export type ArtefactKind = typeof ARTEFACT_KINDS[number];

/** Provenance trust classes, highest trust first. */
export const TRUST_CLASSES = [
  "operator",
  "workspace",
  "first_party",
  "third_party",
  "public",
] as const;

/** One of {@linkcode TRUST_CLASSES}. */
export type TrustClass = typeof TRUST_CLASSES[number];

/** Where the activity that wrote an entry came from (the Python implementation's field). */
export const ACTIVITY_SOURCES = ["scheduler", "adapter"] as const;

/** One of {@linkcode ACTIVITY_SOURCES}. */
export type ActivitySource = typeof ACTIVITY_SOURCES[number];

/** Providers a `model_ref` may name. */
export const MODEL_REF_PROVIDERS = [
  "openai",
  "anthropic",
  "google",
  "azure",
  "ollama",
  "local",
] as const;

/**
 * The model asked for and the one that answered (the Python implementation's optional
 * `model_ref`). Its absent inner values are written as `null`, as Python writes them.
 */
export interface ModelRef {
  /** One of {@linkcode MODEL_REF_PROVIDERS}. */
  provider: string;
  /** The model requested. */
  model_requested: string;
  /** The model the provider reported, or null. */
  model_reported: string | null;
  /** Its version, or null. */
  version: string | null;
  /** `""` or `sha256:` of the routing decision. */
  routing_decision_hash: string;
}

/** One lineage v1 entry. */
export interface LineageEntry {
  /** Format version, always 1. */
  v: 1;
  /** Repo-relative POSIX path or canonical artefact URI. */
  artefact_path: string;
  /** What kind of artefact was written. */
  artefact_kind: ArtefactKind;
  /** `sha256:` + hex SHA-256 of the artefact bytes. */
  content_hash: string;
  /** Entry hashes: `[]` genesis, one = linear, two or more = merge. */
  parent_hashes: string[];
  /** The signer. */
  agent_id: string;
  /** The key id the signer used. */
  agent_card_kid: string;
  /** Cross-link to the audit log. */
  tool_call_id: string;
  /** Cross-link to the trace. */
  span_id: string;
  /** Nanoseconds since the Unix epoch. */
  ts_ns: bigint;
  /** Hex HMAC-SHA256 by the operator key (see {@linkcode computeOperatorHmac}). */
  operator_hmac: string;
  /** Optional provenance trust class. */
  trust_class?: TrustClass;
  /** Optional, non-empty: hex SHA-256 of attachments the producing turn consumed. */
  attachment_digests?: string[];
  /** Optional (written by the Python implementation): `scheduler` or `adapter`. */
  activity_source?: ActivitySource;
  /** Optional (written by the Python implementation): the model requested and reported. */
  model_ref?: ModelRef;
}

/**
 * The fields every lineage entry has (FORMATS.md §4), in the order of the format: the one list
 * the parser, the pack's CSV columns and the docs use.
 */
export const ENTRY_REQUIRED_FIELDS = [
  "v",
  "artefact_path",
  "artefact_kind",
  "content_hash",
  "parent_hashes",
  "agent_id",
  "agent_card_kid",
  "tool_call_id",
  "span_id",
  "ts_ns",
  "operator_hmac",
] as const satisfies readonly (keyof LineageEntry)[];
/** The fields a lineage entry may have, omitted (never null) when absent. */
export const ENTRY_OPTIONAL_FIELDS = [
  "trust_class",
  "attachment_digests",
  "activity_source",
  "model_ref",
] as const satisfies readonly (keyof LineageEntry)[];
/** A field of a lineage entry. */
export type EntryField =
  | (typeof ENTRY_REQUIRED_FIELDS)[number]
  | (typeof ENTRY_OPTIONAL_FIELDS)[number];
// A field added to LineageEntry but to neither list is a type error here.
const _everyFieldListed: Record<Exclude<keyof LineageEntry, EntryField>, never> = {};
const MODEL_REF_FIELDS = [
  "model_reported",
  "model_requested",
  "provider",
  "routing_decision_hash",
  "version",
];
const KNOWN_FIELDS = new Set<string>([...ENTRY_REQUIRED_FIELDS, ...ENTRY_OPTIONAL_FIELDS]);
const HASH = /^sha256:[0-9a-f]{64}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const MAX_TS_NS = (1n << 63n) - 1n;

/** True when `value` is `sha256:` followed by 64 lowercase hex characters. */
export function isEntryHash(value: string): boolean {
  return HASH.test(value);
}

function isPlainObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype;
}

function fail(field: string, message: string, location?: string): never {
  throw new LineageEntryError(`${field}: ${message}`, { location });
}

function requireString(obj: JsonObject, field: string, location?: string): string {
  const value = obj[field];
  if (typeof value !== "string") fail(field, "must be a string", location);
  return value;
}

/**
 * Validates a parsed JSON value as a lineage entry: exactly the fields of FORMATS.md §4 with
 * their types and value rules. Throws {@linkcode LineageEntryError} naming the first bad field.
 */
export function parseEntry(value: JsonValue, location?: string): LineageEntry {
  if (!isPlainObject(value)) {
    throw new LineageEntryError("an entry must be a JSON object", { location });
  }
  for (const key of Object.keys(value)) {
    if (!KNOWN_FIELDS.has(key)) fail(key, "unknown field", location);
  }
  for (const key of ENTRY_REQUIRED_FIELDS) {
    if (!Object.hasOwn(value, key)) fail(key, "missing", location);
  }
  if (value.v !== 1) fail("v", "must be the integer 1", location);
  const artefactPath = requireString(value, "artefact_path", location);
  const problem = artefactKeyProblem(artefactPath);
  if (problem !== undefined) fail("artefact_path", problem, location);
  const kind = requireString(value, "artefact_kind", location);
  if (!(ARTEFACT_KINDS as readonly string[]).includes(kind)) {
    fail("artefact_kind", `unknown kind ${JSON.stringify(kind)}`, location);
  }
  const contentHash = requireString(value, "content_hash", location);
  if (!HASH.test(contentHash)) fail("content_hash", "must be sha256: + 64 lowercase hex", location);
  const parents = value.parent_hashes;
  if (!Array.isArray(parents)) fail("parent_hashes", "must be a list", location);
  const parentHashes: string[] = [];
  for (const [i, p] of parents.entries()) {
    if (typeof p !== "string" || !HASH.test(p)) {
      fail(`parent_hashes[${i}]`, "must be sha256: + 64 lowercase hex", location);
    }
    parentHashes.push(p);
  }
  const agentId = requireString(value, "agent_id", location);
  if (agentId === "") fail("agent_id", "must not be empty", location);
  const kid = requireString(value, "agent_card_kid", location);
  if (kid === "") fail("agent_card_kid", "must not be empty", location);
  const toolCallId = requireString(value, "tool_call_id", location);
  const spanId = requireString(value, "span_id", location);
  const ts = value.ts_ns;
  let tsNs: bigint;
  if (typeof ts === "bigint") tsNs = ts;
  else if (typeof ts === "number" && Number.isInteger(ts)) tsNs = BigInt(ts);
  else fail("ts_ns", "must be an integer", location);
  if (tsNs < 0n || tsNs > MAX_TS_NS) fail("ts_ns", "must be between 0 and 2^63-1", location);
  const operatorHmac = requireString(value, "operator_hmac", location);
  const entry: LineageEntry = {
    v: 1,
    artefact_path: artefactPath,
    artefact_kind: kind as ArtefactKind,
    content_hash: contentHash,
    parent_hashes: parentHashes,
    agent_id: agentId,
    agent_card_kid: kid,
    tool_call_id: toolCallId,
    span_id: spanId,
    ts_ns: tsNs,
    operator_hmac: operatorHmac,
  };
  if (Object.hasOwn(value, "trust_class")) {
    const tc = value.trust_class;
    if (typeof tc !== "string" || !(TRUST_CLASSES as readonly string[]).includes(tc)) {
      fail(
        "trust_class",
        `must be one of ${TRUST_CLASSES.join(", ")} (omit it when absent)`,
        location,
      );
    }
    entry.trust_class = tc as TrustClass;
  }
  if (Object.hasOwn(value, "attachment_digests")) {
    const list = value.attachment_digests;
    if (!Array.isArray(list) || list.length === 0) {
      fail("attachment_digests", "must be a non-empty list (omit it when absent)", location);
    }
    entry.attachment_digests = list.map((d, i) => {
      if (typeof d !== "string" || !HEX64.test(d)) {
        fail(`attachment_digests[${i}]`, "must be 64 lowercase hex", location);
      }
      return d;
    });
  }
  if (Object.hasOwn(value, "activity_source")) {
    const source = value.activity_source;
    if (typeof source !== "string" || !(ACTIVITY_SOURCES as readonly string[]).includes(source)) {
      fail(
        "activity_source",
        `must be one of ${ACTIVITY_SOURCES.join(", ")} (omit it when absent)`,
        location,
      );
    }
    entry.activity_source = source as ActivitySource;
  }
  if (Object.hasOwn(value, "model_ref")) entry.model_ref = parseModelRef(value.model_ref, location);
  return entry;
}

function parseModelRef(value: JsonValue | undefined, location?: string): ModelRef {
  if (!isPlainObject(value)) fail("model_ref", "must be an object (omit it when absent)", location);
  const keys = Object.keys(value).sort();
  if (keys.join(",") !== MODEL_REF_FIELDS.join(",")) {
    fail("model_ref", `fields must be exactly ${MODEL_REF_FIELDS.join(", ")}`, location);
  }
  const text = (name: string, nullable: boolean): string | null => {
    const v = value[name];
    if (nullable && v === null) return null;
    if (typeof v !== "string" || v === "") {
      fail(
        `model_ref.${name}`,
        `must be a non-empty string${nullable ? " or null" : ""}`,
        location,
      );
    }
    return v;
  };
  const provider = text("provider", false) as string;
  if (!(MODEL_REF_PROVIDERS as readonly string[]).includes(provider)) {
    fail("model_ref.provider", `must be one of ${MODEL_REF_PROVIDERS.join(", ")}`, location);
  }
  const routing = value.routing_decision_hash;
  if (typeof routing !== "string" || (routing !== "" && !routing.startsWith("sha256:"))) {
    fail("model_ref.routing_decision_hash", 'must be "" or start with "sha256:"', location);
  }
  return {
    provider,
    model_requested: text("model_requested", false) as string,
    model_reported: text("model_reported", true),
    version: text("version", true),
    routing_decision_hash: routing,
  };
}

/** The entry as a JSON object (optional fields only when present). */
export function entryToJson(entry: LineageEntry): JsonObject {
  const out: JsonObject = {
    v: entry.v,
    artefact_path: entry.artefact_path,
    artefact_kind: entry.artefact_kind,
    content_hash: entry.content_hash,
    parent_hashes: [...entry.parent_hashes],
    agent_id: entry.agent_id,
    agent_card_kid: entry.agent_card_kid,
    tool_call_id: entry.tool_call_id,
    span_id: entry.span_id,
    ts_ns: entry.ts_ns,
    operator_hmac: entry.operator_hmac,
  };
  if (entry.trust_class !== undefined) out.trust_class = entry.trust_class;
  if (entry.attachment_digests !== undefined) {
    out.attachment_digests = [...entry.attachment_digests];
  }
  if (entry.activity_source !== undefined) out.activity_source = entry.activity_source;
  if (entry.model_ref !== undefined) out.model_ref = { ...entry.model_ref };
  return out;
}

/** The `canon` bytes of an entry: what is hashed, signed and written to `log.jsonl`. */
export function entryBytes(entry: LineageEntry): Uint8Array {
  return canonicalBytes(entryToJson(entry), "canon");
}

/** `sha256:` + hex SHA-256 of canonical entry bytes. */
export function entryHashOfBytes(bytes: Uint8Array): string {
  return "sha256:" + sha256Hex(bytes);
}

/** The entry hash: `sha256:` + hex SHA-256 of the entry's `canon` bytes. */
export function entryHash(entry: LineageEntry): string {
  return entryHashOfBytes(entryBytes(entry));
}

/** The bytes the operator HMAC covers: `canon` of the entry with `operator_hmac` set to "". */
export function operatorHmacInput(entry: LineageEntry): Uint8Array {
  return entryBytes({ ...entry, operator_hmac: "" });
}

/** Hex HMAC-SHA256(operator key, `canon` bytes of the entry with `operator_hmac` = ""). */
export function computeOperatorHmac(
  entry: LineageEntry,
  key: Uint8Array | KeyedHmacSha256,
): string {
  const input = operatorHmacInput(entry);
  return key instanceof Uint8Array ? hmacSha256Hex(key, input) : key.hex(input);
}

/** An entry before its operator HMAC is computed. */
export type UnsealedEntry = Omit<LineageEntry, "operator_hmac" | "v">;

/**
 * Builds a complete entry: validates every field, then sets `operator_hmac`. Throws
 * {@linkcode LineageEntryError} on a bad field.
 *
 * @example
 * ```ts ignore
 * const entry = sealEntry({ artefact_path: "src/a.ts", artefact_kind: "file", … }, key);
 * entryHash(entry); // "sha256:…"
 * ```
 */
export function sealEntry(fields: UnsealedEntry, operatorKey: Uint8Array): LineageEntry {
  const draft: LineageEntry = { v: 1, ...fields, operator_hmac: "" };
  // Validation goes through the same parser that reads entries back, so nothing can be
  // written that the gate would refuse.
  const checked = parseEntry(entryToJson(draft));
  return { ...checked, operator_hmac: computeOperatorHmac(checked, operatorKey) };
}
