// Checks a ledger's bytes: canonical rows, each chained to the previous row's hash; the first
// break is named.

import {
  JsonFloat,
  type JsonObject,
  type JsonValue,
  parseCanonicalLine,
  splitLines,
} from "../canonical/mod.ts";
import {
  entryHash,
  GENESIS_HASH,
  isTaskKind,
  LEDGER_KINDS,
  LEDGER_SCHEMA_VERSION,
  type LedgerKind,
  type LedgerRow,
} from "./row.ts";

/** Where and why a ledger stops verifying. */
export interface LedgerBreak {
  /** 1-based line number of the first bad row. */
  line: number;
  /** The seq that row should have had. */
  seq: number;
  /** Byte offset of the start of that line. */
  offset: number;
  /** What is wrong, in words. */
  reason: string;
}

/** Result of {@linkcode verifyLedgerBytes}. */
export interface LedgerCheck {
  /** True when every row verifies and the file ends with `\n`. */
  ok: boolean;
  /** The rows that verify, in order (the valid prefix when broken). */
  rows: LedgerRow[];
  /** The first problem, when not ok. */
  broken?: LedgerBreak;
}

const ROW_KEYS = [
  "entry_hash",
  "kind",
  "payload",
  "prev_hash",
  "redactions",
  "schema_version",
  "seq",
  "task_id",
  "ts",
];
const HEX64 = /^[0-9a-f]{64}$/;

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value) &&
    !(value instanceof JsonFloat);
}

/** Checks one parsed row against the chain so far; returns the row, or why it is bad. */
function readRow(value: JsonValue, seq: number, prev: string): LedgerRow | string {
  if (!isObject(value)) return "a row must be a JSON object";
  const keys = Object.keys(value).sort();
  if (keys.join(",") !== ROW_KEYS.join(",")) {
    const missing = ROW_KEYS.filter((k) => !keys.includes(k));
    const extra = keys.filter((k) => !ROW_KEYS.includes(k));
    return [
      missing.length ? `missing ${missing.join(", ")}` : "",
      extra.length ? `unexpected ${extra.join(", ")}` : "",
    ].filter(Boolean).join("; ");
  }
  if (value.schema_version !== LEDGER_SCHEMA_VERSION) {
    return `schema_version must be ${LEDGER_SCHEMA_VERSION}`;
  }
  if (value.seq !== seq) return `seq is ${String(value.seq)}, expected ${seq}`;
  if (typeof value.kind !== "string" || !(LEDGER_KINDS as readonly string[]).includes(value.kind)) {
    return `unknown kind ${JSON.stringify(value.kind)}`;
  }
  const kind = value.kind as LedgerKind;
  if (isTaskKind(kind)) {
    if (typeof value.task_id !== "string" || value.task_id === "") {
      return `${kind} needs a task_id`;
    }
  } else if (value.task_id !== null) return `${kind} must have task_id null`;
  if (!isObject(value.payload)) return "payload must be an object";
  const ts = value.ts;
  if (!(ts instanceof JsonFloat || (typeof ts === "number" && !Number.isInteger(ts)))) {
    return "ts must be a float (epoch seconds)";
  }
  if (
    !Array.isArray(value.redactions) || value.redactions.some((r) => typeof r !== "string")
  ) return "redactions must be a list of strings";
  if (typeof value.prev_hash !== "string" || !HEX64.test(value.prev_hash)) {
    return "prev_hash must be 64 lowercase hex";
  }
  if (value.prev_hash !== prev) {
    return seq === 0
      ? "prev_hash of the first row must be 64 zeros"
      : "prev_hash does not match the previous row's entry_hash";
  }
  const task_id = typeof value.task_id === "string" ? value.task_id : null;
  const expected = entryHash({ kind, payload: value.payload, prev_hash: value.prev_hash, task_id });
  if (value.entry_hash !== expected) return "entry_hash does not match the row's content";
  return {
    seq,
    prev_hash: value.prev_hash,
    kind,
    task_id,
    payload: value.payload,
    entry_hash: expected,
    ts,
    redactions: value.redactions as string[],
    schema_version: LEDGER_SCHEMA_VERSION,
  };
}

/**
 * Verifies a ledger file's bytes: each line canon-ascii (byte binding), the fields and kinds
 * of FORMATS.md §6, consecutive `seq`, the hash chain from 64 zeros, and a final `\n`.
 * Reports the first broken row. Pure.
 *
 * @example
 * ```ts ignore
 * const check = verifyLedgerBytes(await Deno.readFile(path));
 * if (!check.ok) console.log(`line ${check.broken?.line}: ${check.broken?.reason}`);
 * ```
 */
export function verifyLedgerBytes(bytes: Uint8Array): LedgerCheck {
  const { lines, endsWithNewline } = splitLines(bytes);
  const rows: LedgerRow[] = [];
  let prev = GENESIS_HASH;
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fail = (reason: string): LedgerCheck => ({
      ok: false,
      rows,
      broken: { line: i + 1, seq: rows.length, offset, reason },
    });
    if (i === lines.length - 1 && !endsWithNewline) return fail("missing trailing newline");
    const parsed = parseCanonicalLine(line, "canon-ascii");
    if (!parsed.ok) return fail(`${parsed.reason}: ${parsed.detail}`);
    const row = readRow(parsed.value, rows.length, prev);
    if (typeof row === "string") return fail(row);
    rows.push(row);
    prev = row.entry_hash;
    offset += line.length + 1;
  }
  return { ok: true, rows };
}
