/**
 * Failure receipts (FORMATS.md §10), pure: what a recovery step was routed on — the failing
 * task's status, the values its condition was evaluated against, its gate report and the tail
 * of the run's events about it. The receipt's `canon` bytes are its file
 * (`.sdd/lineage/receipts/<sha256 hex>.json`); nothing in it depends on the wall clock or on
 * the run's random names, so identical runs give identical bytes.
 *
 * @example
 * ```ts ignore
 * const bytes = receiptBytes(receipt);
 * const hex = receiptContentHash(bytes); // the file name and the spine's content_hash
 * ```
 */
import {
  canonicalBytes,
  type FieldChecks,
  fieldProblem,
  hasFields,
  isJsonObject,
  isString,
  isStringRecord,
  type JsonObject,
  type JsonValue,
  parseJsonBytes,
  toHex,
} from "../canonical/mod.ts";
import { sha256 } from "../crypto/mod.ts";

/** The `schema` of a failure receipt. */
export const RECEIPT_SCHEMA = "bernstein-failure-receipt/v1";
/** The receipts folder under `.sdd/lineage/`. */
export const RECEIPTS_DIR = "receipts";

/** A failure receipt. */
export interface FailureReceipt {
  /** {@linkcode RECEIPT_SCHEMA}. */
  schema: string;
  /** The task whose end was routed on (the failing task). */
  source_task: string;
  /** Its status in the condition's words (`failed`, `done`, `cancelled`, `skipped`). */
  source_status: string;
  /** The upstream stage, for a stage-level dependency; null for a step. */
  source_stage: string | null;
  /** The recovery task that was routed to. */
  recovery_task: string;
  /** The condition text. */
  condition: string;
  /** The values the condition was evaluated against. */
  condition_context: { status: string; result: string; output: string };
  /** The checks of the failing attempt: gate results and the failure, or null. */
  gate_report: JsonValue;
  /** The run's events about the failing task, oldest first, without time or run names. */
  journal_tail: JsonObject[];
}

/** The receipt's bytes: `canon` JSON, no trailing newline. */
export function receiptBytes(receipt: FailureReceipt): Uint8Array {
  return canonicalBytes(receipt, "canon");
}

/** Hex SHA-256 of receipt bytes: the file name and the spine entry's `content_hash`. */
export function receiptContentHash(bytes: Uint8Array): string {
  return toHex(sha256(bytes));
}

/** `receipts/<hex>.json`, relative to `.sdd/lineage/`. */
export function receiptRelativePath(hex: string): string {
  return `${RECEIPTS_DIR}/${hex}.json`;
}

const KEYS = [
  "condition",
  "condition_context",
  "gate_report",
  "journal_tail",
  "recovery_task",
  "schema",
  "source_stage",
  "source_status",
  "source_task",
];

/** Reads receipt bytes: well-formed, in `canon` form, with exactly the receipt's fields. */
export function parseReceipt(
  bytes: Uint8Array,
): { ok: true; receipt: FailureReceipt } | { ok: false; problem: string } {
  let v: JsonValue;
  try {
    v = parseJsonBytes(bytes);
  } catch (error) {
    return { ok: false, problem: `not JSON: ${(error as Error).message}` };
  }
  if (!isJsonObject(v)) return { ok: false, problem: "not a JSON object" };
  const o = v;
  const keys = Object.keys(o).sort();
  if (keys.join(",") !== KEYS.join(",")) {
    return {
      ok: false,
      problem: `fields are ${keys.join(", ")}; a receipt has ${KEYS.join(", ")}`,
    };
  }
  if (o.schema !== RECEIPT_SCHEMA) {
    return { ok: false, problem: `schema is ${JSON.stringify(o.schema)}, not ${RECEIPT_SCHEMA}` };
  }
  if (!hasFields(o, RECEIPT_FIELDS)) {
    return { ok: false, problem: fieldProblem(o, RECEIPT_FIELDS) ?? "not a receipt" };
  }
  const receipt: FailureReceipt = o;
  const again = receiptBytes(receipt);
  if (again.length !== bytes.length || again.some((b, i) => b !== bytes[i])) {
    return { ok: false, problem: "not in canon form (its bytes are not the canonical bytes)" };
  }
  return { ok: true, receipt };
}

const RECEIPT_FIELDS: FieldChecks<FailureReceipt> = {
  schema: isString,
  source_task: isString,
  source_status: isString,
  source_stage: (v) => v === null || isString(v),
  recovery_task: isString,
  condition: isString,
  condition_context: (v) =>
    isStringRecord(v) && Object.keys(v ?? {}).sort().join(",") === "output,result,status",
  gate_report: (v) => v !== undefined,
  journal_tail: (v) => Array.isArray(v) && v.every(isJsonObject),
};
