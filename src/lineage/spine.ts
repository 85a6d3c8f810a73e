/**
 * The run spine (FORMATS.md §10), pure: a per-run Merkle-chained, HMAC-tagged journal,
 * `.sdd/lineage/<run_id>/spine.jsonl`, in the Python implementation's spine format (entry
 * version 2). Each row is the `canon` JSON of
 * `{actor, artifact_path, content_hash, entry_hash, hmac, model, prev_hash, step_id, timestamp, v}`;
 * `entry_hash` = `sha256:` + SHA-256(`bernstein:lineage:v2` ‖ canon of the seven hashed fields)
 * chains each row to the one before (`prev_hash`, "" for the first), and `hmac` = HMAC-SHA256
 * under HKDF-SHA256(audit key, info `lineage`) of the row without `hmac`. `spine.head` pins the
 * last entry hash and the row count under the same key, so a cut tail shows.
 *
 * @example
 * ```ts ignore
 * const key = spineKey(auditKey.bytes);
 * const e = sealSpineEntry({ prev_hash: "", artifact_path, content_hash, actor, step_id,
 *   model: "", timestamp: 0 }, key);
 * const report = verifySpine(rows, head, key);
 * ```
 */
import {
  canonicalBytes,
  isJsonObject,
  type JsonObject,
  type JsonValue,
  parseJsonBytes,
  toHex,
} from "../canonical/mod.ts";
import { hkdfSha256, hmacSha256, sha256, timingSafeEqualBytes } from "../crypto/mod.ts";

/** The entry version written (the Python writer's scheme v2). */
export const SPINE_VERSION = 2;
/** The domain tag prefixed to a v2 entry's hash pre-image. */
export const SPINE_DOMAIN_TAG = "bernstein:lineage:v2";
/** The spine's file name in its run folder. */
export const SPINE_FILE = "spine.jsonl";
/** The head file's name in its run folder. */
export const SPINE_HEAD_FILE = "spine.head";

const encoder = new TextEncoder();
const HASHED_FIELDS = [
  "prev_hash",
  "artifact_path",
  "content_hash",
  "actor",
  "step_id",
  "model",
  "timestamp",
] as const;
const OPTIONAL_FIELDS = ["traceparent", "tracestate", "baggage"] as const;

/** The fields an entry hash covers. */
export interface SpineFields {
  /** The previous entry's hash ("" for the first). */
  prev_hash: string;
  /** What the entry records (a repo-relative path). */
  artifact_path: string;
  /** `sha256:<hex>` of its bytes. */
  content_hash: string;
  /** Who recorded it. */
  actor: string;
  /** Cross-link to the step (`failure-receipt:<task id>`). */
  step_id: string;
  /** Model, "" when none. */
  model: string;
  /** Integer time chosen by the writer (receipts use 0: no wall clock). */
  timestamp: number;
}

/** One spine row. */
export interface SpineEntry extends SpineFields {
  /** Entry version (1 or 2). */
  v: number;
  /** `sha256:<hex>`. */
  entry_hash: string;
  /** Hex HMAC-SHA256 of the row without `hmac`. */
  hmac: string;
}

/** The per-store key: HKDF-SHA256 of the audit key K (its file text), info `lineage`. */
export function spineKey(auditKey: Uint8Array): Uint8Array {
  return hkdfSha256(auditKey, { info: "lineage", length: 32 });
}

/** Trace-context fields a row may carry: hashed when they are strings, ignored otherwise. */
type TraceFields = { readonly [K in (typeof OPTIONAL_FIELDS)[number]]?: unknown };

function hashedObject(fields: SpineFields & TraceFields): SpineFields & JsonObject {
  const out: SpineFields & JsonObject = {
    prev_hash: fields.prev_hash,
    artifact_path: fields.artifact_path,
    content_hash: fields.content_hash,
    actor: fields.actor,
    step_id: fields.step_id,
    model: fields.model,
    timestamp: fields.timestamp,
  };
  for (const k of OPTIONAL_FIELDS) {
    const value = fields[k];
    if (typeof value === "string") out[k] = value;
  }
  return out;
}

/** `entry_hash` of a version-2 entry (version 1: no domain tag). */
export function spineEntryHash(
  fields: SpineFields & TraceFields,
  version = SPINE_VERSION,
): string {
  const body = canonicalBytes(hashedObject(fields), "canon");
  const tag = version === 1 ? new Uint8Array(0) : encoder.encode(SPINE_DOMAIN_TAG);
  const pre = new Uint8Array(tag.length + body.length);
  pre.set(tag);
  pre.set(body, tag.length);
  return `sha256:${toHex(sha256(pre))}`;
}

function hmacOf(key: Uint8Array, body: JsonObject): string {
  return toHex(hmacSha256(key, canonicalBytes(body, "canon")));
}

/** A new entry: its hash over `fields`, its tag under `key` (from {@linkcode spineKey}). */
export function sealSpineEntry(fields: SpineFields, key: Uint8Array): SpineEntry {
  const body = {
    v: SPINE_VERSION,
    ...hashedObject(fields),
    entry_hash: spineEntryHash(fields),
  };
  return { ...body, hmac: hmacOf(key, body) };
}

/** The row bytes of an entry: `canon` JSON + `\n`. */
export function spineRowBytes(entry: SpineEntry): Uint8Array {
  const body = canonicalBytes(entry, "canon");
  const out = new Uint8Array(body.length + 1);
  out.set(body);
  out[body.length] = 0x0a;
  return out;
}

/** `spine.head`: `canon` of `{count, head_hash, hmac}` (no newline). */
export function spineHeadBytes(headHash: string, count: number, key: Uint8Array): Uint8Array {
  const body: JsonObject = { count, head_hash: headHash };
  return canonicalBytes({ ...body, hmac: hmacOf(key, body) }, "canon");
}

/** One thing wrong with a spine. */
export interface SpineProblem {
  /** `spine.jsonl:<line>` or `spine.head`. */
  where: string;
  /** What is wrong. */
  message: string;
}

/** What {@linkcode verifySpine} found. */
export interface SpineReport {
  /** True when every row chains, hashes and authenticates, and the head agrees. */
  ok: boolean;
  /** Rows read. */
  count: number;
  /** The entries that parsed, in order (with their 1-based line). */
  entries: (SpineEntry & { line: number })[];
  /** Every problem, in file order. */
  problems: SpineProblem[];
}

function readRow(raw: Uint8Array): SpineEntry | string {
  let v: JsonValue;
  try {
    v = parseJsonBytes(raw);
  } catch (error) {
    return `not JSON: ${(error as Error).message}`;
  }
  if (!isJsonObject(v)) return "not a JSON object";
  if (!isSpineEntry(v)) return rowProblem(v) ?? "not a spine entry";
  return v;
}

const ROW_FIELDS: readonly string[] = [
  ...HASHED_FIELDS,
  ...OPTIONAL_FIELDS,
  "v",
  "entry_hash",
  "hmac",
];

/** What keeps a parsed row from being a spine entry, or undefined. */
function rowProblem(o: JsonObject): string | undefined {
  for (const k of [...HASHED_FIELDS, "v", "entry_hash", "hmac"]) {
    if (!(k in o)) return `missing field '${k}'`;
  }
  for (const k of Object.keys(o)) {
    if (!ROW_FIELDS.includes(k)) return `unknown field '${k}'`;
  }
  for (const k of HASHED_FIELDS.filter((k) => k !== "timestamp")) {
    if (typeof o[k] !== "string") return `'${k}' is not a string`;
  }
  if (!Number.isSafeInteger(o.timestamp)) return "'timestamp' is not an integer";
  if (o.v !== 1 && o.v !== 2) return `unsupported entry version ${JSON.stringify(o.v)}`;
  if (typeof o.entry_hash !== "string" || typeof o.hmac !== "string") {
    return "'entry_hash' or 'hmac' is not a string";
  }
  return undefined;
}

function isSpineEntry(o: JsonObject): o is JsonObject & SpineEntry {
  return rowProblem(o) === undefined;
}

function sameText(a: string, b: string): boolean {
  return timingSafeEqualBytes(encoder.encode(a), encoder.encode(b));
}

/**
 * Verifies a spine: each row parses, its `prev_hash` is the previous row's `entry_hash` (""
 * first), its `entry_hash` and `hmac` recompute (v2 under `key`, v1 under the raw audit key),
 * and `spine.head`, when given, names the last entry and the row count under `key`.
 */
export function verifySpine(
  rows: Uint8Array,
  head: Uint8Array | undefined,
  keys: { spine: Uint8Array; audit: Uint8Array },
): SpineReport {
  const problems: SpineProblem[] = [];
  const entries: (SpineEntry & { line: number })[] = [];
  let prev = "";
  let line = 0;
  let start = 0;
  while (start < rows.length) {
    let end = rows.indexOf(0x0a, start);
    const torn = end < 0;
    if (torn) end = rows.length;
    line++;
    const where = `${SPINE_FILE}:${line}`;
    const parsed = readRow(rows.subarray(start, end));
    start = end + 1;
    if (torn) problems.push({ where, message: "no trailing newline (torn row)" });
    if (typeof parsed === "string") {
      problems.push({ where, message: parsed });
      continue;
    }
    if (!sameText(parsed.prev_hash, prev)) {
      problems.push({
        where,
        message: `prev_hash breaks the chain (expected '${prev.slice(0, 23)}…', found '${
          parsed.prev_hash.slice(0, 23)
        }…')`,
      });
    }
    if (!sameText(parsed.entry_hash, spineEntryHash(parsed, parsed.v))) {
      problems.push({ where, message: "entry_hash does not match its fields" });
    }
    const { hmac, ...body } = parsed;
    const key = parsed.v === 1 ? keys.audit : keys.spine;
    if (!sameText(hmac, hmacOf(key, body))) {
      problems.push({ where, message: "hmac does not verify under the audit key" });
    }
    entries.push({ ...parsed, line });
    prev = parsed.entry_hash;
  }
  if (head !== undefined) checkHead(head, prev, line, keys.spine, problems);
  return { ok: problems.length === 0, count: line, entries, problems };
}

function checkHead(
  bytes: Uint8Array,
  last: string,
  count: number,
  key: Uint8Array,
  problems: SpineProblem[],
): void {
  const where = SPINE_HEAD_FILE;
  let v: JsonValue;
  try {
    v = parseJsonBytes(bytes);
  } catch (error) {
    problems.push({ where, message: `not JSON: ${(error as Error).message}` });
    return;
  }
  const o = (v ?? {}) as JsonObject;
  if (
    typeof o.head_hash !== "string" || typeof o.count !== "number" || typeof o.hmac !== "string"
  ) {
    problems.push({ where, message: "expected {count, head_hash, hmac}" });
    return;
  }
  const { hmac, ...body } = o;
  if (!sameText(hmac as string, hmacOf(key, body))) {
    problems.push({ where, message: "hmac does not verify under the audit key" });
    return;
  }
  if (o.head_hash !== last || o.count !== count) {
    problems.push({
      where,
      message:
        `pins ${o.count} row(s) ending at ${
          (o.head_hash as string).slice(0, 23)
        }…; the spine has ${count} ending at ${last.slice(0, 23) || "(nothing)"}…` +
        (o.count as number > count ? " (rows were removed)" : ""),
    });
  }
}
