// The work ledger's row format: kinds, fields, the entry hash that chains rows, and timestamps
// in the canonical float form.

import {
  canonicalBytes,
  compareCodePoints,
  JsonFloat,
  jsonFloat,
  type JsonObject,
  type JsonValue,
} from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";

/** Every kind of ledger row (FORMATS.md §6); nothing else may be written. */
export const LEDGER_KINDS = [
  "run.open",
  "run.resumed",
  "run.closed",
  "task.scheduled",
  "task.started",
  "task.completed",
  "task.failed",
  "task.abandoned",
] as const;

/** One kind of ledger row. */
export type LedgerKind = typeof LEDGER_KINDS[number];

/** `prev_hash` of the first row. */
export const GENESIS_HASH = "0".repeat(64);

/** The ledger row format version. */
export const LEDGER_SCHEMA_VERSION = 1;

/** One row of the work ledger, as stored. */
export interface LedgerRow {
  /** Position in the run's ledger, 0 for the first row. */
  seq: number;
  /** `entry_hash` of the previous row (64 zeros for the first). */
  prev_hash: string;
  /** What happened. */
  kind: LedgerKind;
  /** The task, for `task.*` rows; null for `run.*` rows. */
  task_id: string | null;
  /** Facts about the event (after redaction). */
  payload: JsonObject;
  /** hex SHA-256 of canon-ascii `{kind, payload, prev_hash, task_id}`. */
  entry_hash: string;
  /** Epoch seconds as a float (integral values keep their `.0`). */
  ts: number | JsonFloat;
  /** Payload fields (dotted paths) whose values were replaced before writing. */
  redactions: string[];
  /** Always 1. */
  schema_version: 1;
}

/** True for `task.*` kinds, which must name a task. */
export function isTaskKind(kind: LedgerKind): boolean {
  return kind.startsWith("task.");
}

/** hex SHA-256 of the canon-ascii bytes of `{kind, payload, prev_hash, task_id}`. */
export function entryHash(
  fields: Pick<LedgerRow, "kind" | "payload" | "prev_hash" | "task_id">,
): string {
  const hashed: JsonObject = {
    kind: fields.kind,
    payload: fields.payload,
    prev_hash: fields.prev_hash,
    task_id: fields.task_id,
  };
  return sha256Hex(canonicalBytes(hashed, "canon-ascii"));
}

/** Epoch milliseconds → float epoch seconds that serialise like Python's `time.time()`. */
export function tsFromMs(ms: number): number | JsonFloat {
  const seconds = ms / 1000;
  return Number.isInteger(seconds) ? jsonFloat(seconds) : seconds;
}

/** The numeric value of a float that may be wrapped as {@linkcode JsonFloat}. */
export function floatValue(value: number | JsonFloat): number {
  return value instanceof JsonFloat ? value.value : value;
}

/** The row as a JSON object (for serialising). */
export function rowJson(row: LedgerRow): JsonObject {
  return {
    seq: row.seq,
    prev_hash: row.prev_hash,
    kind: row.kind,
    task_id: row.task_id,
    payload: row.payload,
    entry_hash: row.entry_hash,
    ts: row.ts,
    redactions: [...row.redactions],
    schema_version: row.schema_version,
  };
}

/** The exact bytes of a row on disk: canon-ascii JSON and `\n`. */
export function rowBytes(row: LedgerRow): Uint8Array {
  const body = canonicalBytes(rowJson(row), "canon-ascii");
  const out = new Uint8Array(body.length + 1);
  out.set(body);
  out[body.length] = 0x0a;
  return out;
}

/** What the caller supplies for a new row; the chain fields are computed. */
export interface LedgerEntryInput {
  /** What happened. */
  kind: LedgerKind;
  /** The task (required for `task.*`, must be absent or null for `run.*`). */
  task_id?: string | null;
  /** Facts about the event; secret-looking fields are redacted. */
  payload?: JsonObject;
}

// A key is secret-looking when one of its `_`/`-`/`.`-separated words is one of these, or
// the key spells an API key. `tokens` (counts) is deliberately not in the list.
const SECRET_WORDS = new Set([
  "token",
  "secret",
  "password",
  "passwd",
  "authorization",
  "bearer",
  "credential",
  "credentials",
  "apikey",
  "cookie",
]);

/** True when a payload key names a secret (`api_key`, `access_token`, `GITHUB_TOKEN`, …). */
export function isSecretKey(key: string): boolean {
  const lower = key.toLowerCase();
  if (/api[_-]?key|private[_-]?key/.test(lower)) return true;
  return lower.split(/[_.\-]+/).some((w) => SECRET_WORDS.has(w));
}

/** Placeholder written instead of a redacted value. */
export const REDACTED = "[redacted]";

function redactValue(value: JsonValue, path: string, found: string[]): JsonValue {
  if (value === null || typeof value !== "object" || value instanceof JsonFloat) return value;
  if (Array.isArray(value)) {
    return value.map((item, i) => redactValue(item, `${path}[${i}]`, found));
  }
  const out: JsonObject = {};
  // Sorted like the canonical bytes, so the redactions list does not depend on key order.
  for (const key of Object.keys(value).sort(compareCodePoints)) {
    const item = value[key];
    if (item === undefined) continue;
    const at = path === "" ? key : `${path}.${key}`;
    if (isSecretKey(key)) {
      out[key] = REDACTED;
      found.push(at);
    } else {
      out[key] = redactValue(item, at, found);
    }
  }
  return out;
}

/**
 * Replaces the values of secret-looking keys (at any depth) with `[redacted]` so secrets never
 * reach the ledger; returns the redacted payload and the dotted paths that were replaced.
 */
export function redactPayload(payload: JsonObject): { payload: JsonObject; redactions: string[] } {
  const redactions: string[] = [];
  const out = redactValue(payload, "", redactions) as JsonObject;
  return { payload: out, redactions };
}

/**
 * Builds the next row after `head` (or the first row when `head` is undefined). Pure: the
 * time comes in as epoch milliseconds.
 */
export function buildRow(
  head: Pick<LedgerRow, "seq" | "entry_hash"> | undefined,
  input: LedgerEntryInput & { tsMs: number },
): LedgerRow {
  const { payload, redactions } = redactPayload(input.payload ?? {});
  const prev_hash = head?.entry_hash ?? GENESIS_HASH;
  const task_id = input.task_id ?? null;
  return {
    seq: head === undefined ? 0 : head.seq + 1,
    prev_hash,
    kind: input.kind,
    task_id,
    payload,
    entry_hash: entryHash({ kind: input.kind, payload, prev_hash, task_id }),
    ts: tsFromMs(input.tsMs),
    redactions,
    schema_version: LEDGER_SCHEMA_VERSION,
  };
}
