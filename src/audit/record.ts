// The audit record of FORMATS.md §2 as pure functions over bytes: building a record, its HMAC
// and the local check of one line (parse, byte binding, shape, HMAC, predecessor claim).
import {
  bytesEqual,
  canonicalBytes,
  decodeUtf8Strict,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  parseCanonicalLine,
  parseJsonBytes,
} from "../canonical/mod.ts";
import { hmacSha256Hex, timingSafeEqualBytes } from "../crypto/mod.ts";
import { AuditError } from "./errors.ts";
import { type AuditKey, deriveChainKey } from "./key.ts";

/** `prev_hmac` of the first record of a chain. */
export const GENESIS_HMAC: string = "0".repeat(64);

/** The record scheme this implementation writes (HMAC with K2 and a domain prefix). */
export const AUDIT_SCHEME = 2;

/** Domain prefix of the scheme-2 HMAC input. */
export const AUDIT_V2_PREFIX = "bernstein:audit:v2";

/** Event type of the record that seals a torn tail. Only the writer emits it. */
export const TORN_RECORD_EVENT = "chain.torn_record";

/** What a caller records: who did what to which resource, with free-form details. */
export interface AuditEventInput {
  /** Who acted (`orchestrator`, an agent id, `operator`). */
  actor: string;
  /** What happened (`task.transition`, `multimodal.attach`). */
  event_type: string;
  /** Kind of the affected resource (`task`, `agent`, `worktree`). */
  resource_type: string;
  /** Id of the affected resource. */
  resource_id: string;
  /** Structured facts; any JSON object (py-default canonicalisable). */
  details?: JsonObject;
}

/** One record of the chain, exactly the fields on disk. */
export interface AuditRecord {
  /** Who acted. */
  actor: string;
  /** Structured facts. */
  details: JsonObject;
  /** What happened. */
  event_type: string;
  /** Kind of the affected resource. */
  resource_type: string;
  /** Id of the affected resource. */
  resource_id: string;
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ` for scheme 2; legacy records may use another ISO form. */
  timestamp: string;
  /** HMAC of the predecessor (64 hex; genesis = 64 zeros). */
  prev_hmac: string;
  /** 2; absent on legacy records. */
  scheme?: 2;
  /** This record's HMAC (64 hex). */
  hmac: string;
}

/** The two keys a chain may use: K for legacy records, K2 = HKDF(K, "audit") for scheme 2. */
export interface AuditChainKeys {
  /** K: the key file's hex text as ASCII bytes. */
  legacy: Uint8Array;
  /** K2. */
  v2: Uint8Array;
}

/** Derives both chain keys from the audit key. */
export function auditChainKeys(key: AuditKey): AuditChainKeys {
  return { legacy: key.bytes, v2: deriveChainKey(key) };
}

const HEX64 = /^[0-9a-f]{64}$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{6})Z$/;
const RECORD_FIELDS = new Set([
  "actor",
  "details",
  "event_type",
  "hmac",
  "prev_hmac",
  "resource_id",
  "resource_type",
  "scheme",
  "timestamp",
]);
const encoder = new TextEncoder();
const PREFIX_BYTES = encoder.encode(AUDIT_V2_PREFIX);

/** Formats nanoseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ` (UTC, microseconds). */
export function formatAuditTimestamp(ns: bigint): string {
  const totalMicros = floorDiv(ns, 1000n);
  const seconds = floorDiv(totalMicros, 1_000_000n);
  const micros = totalMicros - seconds * 1_000_000n;
  const iso = new Date(Number(seconds * 1000n)).toISOString();
  return `${iso.slice(0, 19)}.${micros.toString().padStart(6, "0")}Z`;
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

/**
 * Microseconds since the epoch of an audit timestamp: the scheme-2 form exactly, or any ISO
 * form `Date.parse` accepts (legacy records); undefined when unreadable.
 */
export function auditTimestampMicros(text: string): bigint | undefined {
  const m = TIMESTAMP.exec(text);
  if (m) {
    const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
    if (Number.isNaN(ms)) return undefined;
    return BigInt(ms) * 1000n + BigInt(m[7]);
  }
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : BigInt(ms) * 1000n;
}

/** Checks an event from a caller; throws {@linkcode AuditError} naming the bad field. */
export function checkEventInput(event: AuditEventInput): void {
  for (const field of ["actor", "event_type", "resource_type", "resource_id"] as const) {
    if (typeof event[field] !== "string") {
      throw new AuditError("audit.invalid_event", `audit event field '${field}' must be a string`);
    }
  }
  for (const field of ["actor", "event_type", "resource_type"] as const) {
    if (event[field] === "") {
      throw new AuditError("audit.invalid_event", `audit event field '${field}' is empty`);
    }
  }
  const details = event.details;
  if (details !== undefined && !isJsonObject(details)) {
    throw new AuditError("audit.invalid_event", "audit event field 'details' must be an object");
  }
}

/** The HMAC of a record body (the record's py-default bytes without `hmac`). */
export function recordHmac(
  body: Uint8Array,
  prevHmac: string,
  options: { legacy: boolean; keys: AuditChainKeys },
): string {
  const prev = encoder.encode(prevHmac);
  return options.legacy
    ? hmacSha256Hex(options.keys.legacy, prev, body)
    : hmacSha256Hex(options.keys.v2, PREFIX_BYTES, prev, body);
}

function bodyOf(record: AuditRecord): Uint8Array {
  const body: JsonObject = {
    actor: record.actor,
    details: record.details,
    event_type: record.event_type,
    prev_hmac: record.prev_hmac,
    resource_id: record.resource_id,
    resource_type: record.resource_type,
    scheme: record.scheme,
    timestamp: record.timestamp,
  };
  return canonicalBytes(body, "py-default");
}

/** Options of {@linkcode buildRecord}. */
export interface BuildRecordOptions {
  /** The chain tip this record follows. */
  prevHmac: string;
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  timestamp: string;
  /** Chain keys. */
  keys: AuditChainKeys;
}

/**
 * Builds a scheme-2 record on top of `prevHmac` and its line bytes (py-default + `\n`).
 * Throws {@linkcode AuditError} for input without a canonical form.
 */
export function buildRecord(
  event: AuditEventInput,
  options: BuildRecordOptions,
): { record: AuditRecord; line: Uint8Array } {
  checkEventInput(event);
  const record: AuditRecord = {
    actor: event.actor,
    details: event.details ?? {},
    event_type: event.event_type,
    resource_type: event.resource_type,
    resource_id: event.resource_id,
    timestamp: options.timestamp,
    prev_hmac: options.prevHmac,
    scheme: AUDIT_SCHEME,
    hmac: "",
  };
  let body: Uint8Array;
  try {
    body = bodyOf(record);
  } catch (error) {
    throw new AuditError(
      "audit.invalid_event",
      `audit event details have no canonical JSON form: ${(error as Error).message}`,
    );
  }
  record.hmac = recordHmac(body, record.prev_hmac, { legacy: false, keys: options.keys });
  const line = canonicalBytes(record, "py-default");
  const out = new Uint8Array(line.length + 1);
  out.set(line);
  out[line.length] = 0x0a;
  return { record, line: out };
}

/** Stable codes of everything the audit checks can find. */
export type AuditIssueCode =
  | "audit.invalid_json"
  | "audit.non_canonical"
  | "audit.not_a_record"
  | "audit.unknown_scheme"
  | "audit.hmac_mismatch"
  | "audit.prev_hmac_mismatch"
  | "audit.false_predecessor_claim"
  | "audit.missing_newline"
  | "audit.line_too_long"
  | "audit.seal_mismatch"
  | "audit.unsealed_tear"
  | "audit.segment_unreadable"
  | "audit.checkpoint_mismatch"
  | "audit.log_truncated"
  | "audit.invalid_checkpoint"
  | "audit.checkpoint_signature_invalid"
  | "audit.checkpoint_signature_unverifiable";

/** Result of {@linkcode checkRecordLine}. */
export type LineCheck =
  | {
    kind: "record";
    /** The parsed record. */
    record: AuditRecord;
    /** No `scheme`: K directly, no prefix. */
    legacy: boolean;
    /** The stored `hmac` matches the one computed over the record and its own `prev_hmac`. */
    hmacOk: boolean;
    /** The HMAC the key gives for this record. */
    expectedHmac: string;
    /** `details.prev_chain_digest` is absent, empty or equal to `prev_hmac`. */
    claimOk: boolean;
  }
  | {
    kind: "bad";
    code: AuditIssueCode;
    message: string;
    /** The line's own `hmac` when it parsed as an object with one (not authenticated). */
    claimedHmac?: string;
  };

function shapeError(value: JsonValue): string | undefined {
  if (!isJsonObject(value)) return "the line is not a JSON object";
  for (const key of Object.keys(value)) {
    if (!RECORD_FIELDS.has(key)) return `unexpected field '${key}'`;
  }
  for (const field of ["actor", "event_type", "resource_type", "resource_id", "timestamp"]) {
    if (typeof value[field] !== "string") return `field '${field}' is missing or not a string`;
  }
  if (!isJsonObject(value.details)) return "field 'details' is missing or not an object";
  for (const field of ["prev_hmac", "hmac"]) {
    const v = value[field];
    if (typeof v !== "string" || !HEX64.test(v)) {
      return `field '${field}' is missing or not 64 lowercase hex`;
    }
  }
  return undefined;
}

/** True when `value` has an audit record's fields and nothing else (see `shapeError`). */
function isAuditRecord(value: JsonValue): value is AuditRecord & JsonObject {
  return shapeError(value) === undefined;
}

/**
 * A fast path for the byte-binding check: the runtime's JSON.parse (after strict UTF-8
 * decoding) is ~8x faster than the BigInt-exact parser. It is only trusted when re-serialising
 * its value gives back exactly the line, which rules out every case where the two parsers
 * differ (integers beyond 2^53, integral floats such as 1.0, -0, duplicate keys, lone
 * surrogates): each of those re-serialises to different bytes. Otherwise the exact parser
 * decides and names the problem.
 */
function fastCanonicalParse(line: Uint8Array): { ok: true; value: JsonValue } | undefined {
  try {
    const value = JSON.parse(decodeUtf8Strict(line)) as JsonValue;
    return bytesEqual(canonicalBytes(value, "py-default"), line) ? { ok: true, value } : undefined;
  } catch {
    return undefined;
  }
}

const HMAC_MEMBER = encoder.encode(', "hmac": "');

/**
 * The record's bytes without its `hmac` member, cut from a canonical line instead of
 * re-serialised. In a canonical record `hmac` sorts after the required `actor`, `details` and
 * `event_type` and before `prev_hmac`, and every later value is a string or a number, so the
 * last `, "hmac": "` is the top-level member; the cut is checked before it is used.
 */
function bodyFromLine(line: Uint8Array, hmac: string): Uint8Array | undefined {
  let at = -1;
  for (let i = line.length - HMAC_MEMBER.length; i >= 0 && at < 0; i--) {
    let match = true;
    for (let j = 0; j < HMAC_MEMBER.length; j++) {
      if (line[i + j] !== HMAC_MEMBER[j]) {
        match = false;
        break;
      }
    }
    if (match) at = i;
  }
  const end = at + HMAC_MEMBER.length + 64;
  if (at < 0 || line[end] !== 0x22) return undefined;
  for (let j = 0; j < 64; j++) {
    if (line[at + HMAC_MEMBER.length + j] !== hmac.charCodeAt(j)) return undefined;
  }
  const body = new Uint8Array(line.length - (end + 1 - at));
  body.set(line.subarray(0, at));
  body.set(line.subarray(end + 1), at);
  return body;
}

function claimedHmacOf(value: JsonValue): string | undefined {
  if (!isJsonObject(value)) return undefined;
  const hmac = value.hmac;
  return typeof hmac === "string" && HEX64.test(hmac) ? hmac : undefined;
}

/**
 * Checks one line (without its `\n`) on its own: strict UTF-8 JSON, py-default byte binding,
 * the record shape, the HMAC against the record's own `prev_hmac`, and the predecessor claim.
 * Chain linkage is the caller's job.
 */
export function checkRecordLine(line: Uint8Array, keys: AuditChainKeys): LineCheck {
  const parsed = fastCanonicalParse(line) ?? parseCanonicalLine(line, "py-default");
  if (!parsed.ok) {
    if (parsed.reason === "invalid JSON") {
      return { kind: "bad", code: "audit.invalid_json", message: `invalid JSON: ${parsed.detail}` };
    }
    return {
      kind: "bad",
      code: "audit.non_canonical",
      message: "non-canonical line bytes",
      claimedHmac: claimedHmacOf(parseJsonBytes(line)),
    };
  }
  const record = parsed.value;
  if (!isAuditRecord(record)) {
    return {
      kind: "bad",
      code: "audit.not_a_record",
      message: `not an audit record: ${shapeError(record)}`,
      claimedHmac: claimedHmacOf(record),
    };
  }
  const scheme: unknown = record.scheme;
  if (scheme !== undefined && scheme !== AUDIT_SCHEME) {
    return {
      kind: "bad",
      code: "audit.unknown_scheme",
      message: `unknown scheme ${JSON.stringify(String(scheme))}; this verifier knows 2 and legacy`,
      claimedHmac: record.hmac,
    };
  }
  const legacy = scheme === undefined;
  if (!legacy && !TIMESTAMP.test(record.timestamp)) {
    return {
      kind: "bad",
      code: "audit.not_a_record",
      message: "not an audit record: timestamp is not YYYY-MM-DDTHH:MM:SS.ffffffZ",
      claimedHmac: record.hmac,
    };
  }
  const body = bodyFromLine(line, record.hmac) ?? bodyOf(record);
  const expectedHmac = recordHmac(body, record.prev_hmac, { legacy, keys });
  const hmacOk = timingSafeEqualBytes(encoder.encode(expectedHmac), encoder.encode(record.hmac));
  const claim = record.details.prev_chain_digest;
  const claimOk = claim === undefined || claim === "" || claim === record.prev_hmac;
  return { kind: "record", record, legacy, hmacOk, expectedHmac, claimOk };
}
