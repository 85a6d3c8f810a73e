// The run scorecard (FORMATS.md §6), derived only from the ledger rows: no clock, no file
// system, no environment. What each field means, and which payload facts it reads:
//
//   run.open       payload.branch, payload.host (strings) → branch, host
//   run.resumed    counts one more attempt → attempt_count = 1 + run.resumed rows
//   run.closed     payload.reason: "backstop" or "wedged" → outcome wedged; "infra-error" →
//                  outcome infra-error; anything else (quiescent, stopped, …) is informative
//   task.started   one agent attempt of the task (steps[].attempts)
//   task.completed payload.merged === true → a merged task; payload.cost_usd (number)
//   task.failed    payload.reason: "gate-failed" | "merge-conflict" | "signals-unmet" count as
//                  gate failures, "infra-error" as an infrastructure error; payload.cost_usd
//   task.abandoned payload.reason; counted with the failed tasks
//
// A task's state is its last terminal row (a retried task that finally completed counts as
// completed). Outcome, first rule that applies: wedged (the last run.open/run.resumed has no
// later run.closed, or the close reason is backstop/wedged) · infra-error · gate-failed ·
// merged (some task completed with merged true) · no-changes.
import {
  canonicalBytes,
  JsonFloat,
  jsonFloat,
  type JsonObject,
  type JsonValue,
} from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { LedgerError } from "./errors.ts";
import { ledgerRelativePath } from "./paths.ts";
import { floatValue, type LedgerRow } from "./row.ts";

/** Possible run outcomes, in the order the rules are tried. */
export const OUTCOMES = ["wedged", "infra-error", "gate-failed", "merged", "no-changes"] as const;

/** One run outcome. */
export type Outcome = typeof OUTCOMES[number];

/** Version of the scorecard content (both `version` and `scorecard_version`). */
export const SCORECARD_VERSION = 1;

/** Failure reasons that make the outcome `gate-failed`. */
export const GATE_FAILURE_REASONS: readonly string[] = [
  "gate-failed",
  "merge-conflict",
  "signals-unmet",
];

/** Close reasons that make the outcome `wedged`. */
export const WEDGED_CLOSE_REASONS: readonly string[] = ["backstop", "wedged"];

/** The content fields of a scorecard, in FORMATS.md order. */
export const SCORECARD_FIELDS: readonly string[] = [
  "kind",
  "version",
  "run_id",
  "branch",
  "outcome",
  "evidence",
  "started_at",
  "ended_at",
  "elapsed_seconds",
  "host",
  "attempt_count",
  "steps",
  "tasks_total",
  "tasks_completed",
  "tasks_failed",
  "tasks_started",
  "cost_usd",
  "scorecard_version",
];

type TaskState = "scheduled" | "started" | "completed" | "failed" | "abandoned";

interface TaskTally {
  id: string;
  title: string | null;
  state: TaskState;
  attempts: number;
  merged: boolean;
  reason: string | null;
  cost: number;
}

function asFloat(value: number): number | JsonFloat {
  return Number.isInteger(value) ? jsonFloat(value) : value;
}

function roundTo(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

function str(value: JsonValue | undefined): string | null {
  return typeof value === "string" ? value : null;
}

function num(value: JsonValue | undefined): number {
  if (value instanceof JsonFloat) return value.value;
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

/** What a run's ledger rows add up to, before the outcome is decided. */
interface LedgerTally {
  tasks: Map<string, TaskTally>;
  branch: string | null;
  host: string | null;
  attempts: number;
  /** Index of the last run.open/run.resumed row (-1: none). */
  lastStart: number;
  /** Index of the last run.closed row (-1: none). */
  lastClose: number;
  closeReason: string | null;
  cost: number;
}

/** Adds the rows up: run starts and closes, and each task's state, attempts and cost. */
function tallyLedger(rows: readonly LedgerRow[]): LedgerTally {
  const tally: LedgerTally = {
    tasks: new Map(),
    branch: null,
    host: null,
    attempts: 0,
    lastStart: -1,
    lastClose: -1,
    closeReason: null,
    cost: 0,
  };
  let opened = false;
  rows.forEach((row, i) => {
    const p = row.payload;
    if (row.kind === "run.open" || row.kind === "run.resumed") {
      tally.attempts++;
      tally.lastStart = i;
      if (row.kind === "run.open" && !opened) {
        opened = true;
        tally.branch = str(p.branch);
        tally.host = str(p.host);
      }
      return;
    }
    if (row.kind === "run.closed") {
      tally.lastClose = i;
      tally.closeReason = str(p.reason);
      return;
    }
    const id = row.task_id as string;
    let t = tally.tasks.get(id);
    if (t === undefined) {
      t = {
        id,
        title: null,
        state: "scheduled",
        attempts: 0,
        merged: false,
        reason: null,
        cost: 0,
      };
      tally.tasks.set(id, t);
    }
    tally.cost += applyTaskRow(t, row);
  });
  return tally;
}

/** Applies one task row to its task's tally; returns the row's cost. */
function applyTaskRow(t: TaskTally, row: LedgerRow): number {
  const p = row.payload;
  if (t.title === null) t.title = str(p.title);
  const rowCost = num(p.cost_usd);
  t.cost += rowCost;
  switch (row.kind) {
    case "task.started":
      t.attempts++;
      t.state = "started";
      break;
    case "task.completed":
      t.state = "completed";
      t.merged = p.merged === true;
      t.reason = null;
      break;
    case "task.failed":
    case "task.abandoned":
      t.state = row.kind === "task.failed" ? "failed" : "abandoned";
      t.merged = false;
      t.reason = str(p.reason);
      break;
  }
  return rowCost;
}

/** The run's outcome and the task ids that are its evidence. */
function outcomeOf(all: readonly TaskTally[], closed: boolean, reason: string | null) {
  const ids = (pick: (t: TaskTally) => boolean) => all.filter(pick).map((t) => t.id);
  const merged = ids((t) => t.state === "completed" && t.merged);
  const gateFailed = ids((t) =>
    t.state === "failed" && t.reason !== null && GATE_FAILURE_REASONS.includes(t.reason)
  );
  const infra = ids((t) => t.state === "failed" && t.reason === "infra-error");
  const unfinished = ids((t) => t.state === "scheduled" || t.state === "started");
  let outcome: Outcome;
  if (!closed || (reason !== null && WEDGED_CLOSE_REASONS.includes(reason))) outcome = "wedged";
  else if (reason === "infra-error" || infra.length > 0) outcome = "infra-error";
  else if (gateFailed.length > 0) outcome = "gate-failed";
  else if (merged.length > 0) outcome = "merged";
  else outcome = "no-changes";
  return { outcome, merged, gateFailed, infra, unfinished };
}

/**
 * Derives the scorecard content of `runId` from its verified ledger rows. Pure: the same
 * rows always give the same content (and so the same sha256).
 */
export function deriveScorecard(runId: string, rows: readonly LedgerRow[]): JsonObject {
  if (rows.length === 0) {
    throw new LedgerError("ledger.empty", `run '${runId}' has an empty ledger`);
  }
  const tally = tallyLedger(rows);
  const all = [...tally.tasks.values()];
  const closed = tally.lastClose > tally.lastStart;
  const reason: string | null = closed ? tally.closeReason : null;
  const { outcome, merged, gateFailed, infra, unfinished } = outcomeOf(all, closed, reason);
  const started = floatValue(rows[0].ts);
  const ended = floatValue(rows[closed ? tally.lastClose : rows.length - 1].ts);
  return {
    kind: "run_scorecard",
    version: SCORECARD_VERSION,
    run_id: runId,
    branch: tally.branch,
    outcome,
    evidence: {
      ledger_path: ledgerRelativePath(runId),
      ledger_rows: rows.length,
      ledger_head: rows[rows.length - 1].entry_hash,
      closed_reason: reason,
      merged,
      gate_failed: gateFailed,
      infra_errors: infra,
      unfinished,
    },
    started_at: asFloat(started),
    ended_at: asFloat(ended),
    elapsed_seconds: asFloat(roundTo(ended - started, 3)),
    host: tally.host,
    attempt_count: tally.attempts,
    steps: all.map((t) => ({
      task_id: t.id,
      title: t.title,
      state: t.state,
      attempts: t.attempts,
      merged: t.merged,
      reason: t.reason,
      cost_usd: asFloat(roundTo(t.cost, 6)),
    })),
    tasks_total: all.length,
    tasks_completed: all.filter((t) => t.state === "completed").length,
    tasks_failed: all.filter((t) => t.state === "failed" || t.state === "abandoned").length,
    tasks_started: all.filter((t) => t.attempts > 0).length,
    cost_usd: asFloat(roundTo(tally.cost, 6)),
    scorecard_version: SCORECARD_VERSION,
  };
}

/** A scorecard envelope: its exact bytes and the content hash that names the file. */
export interface ScorecardEnvelope {
  /** hex SHA-256 of the canon-ascii content. */
  sha256: string;
  /** canon-ascii `{"content":…,"sha256":…}`, no trailing newline. */
  bytes: Uint8Array;
}

/** Wraps scorecard content in its envelope (FORMATS.md §6). */
export function scorecardEnvelope(content: JsonObject): ScorecardEnvelope {
  const sha256 = sha256Hex(canonicalBytes(content, "canon-ascii"));
  return { sha256, bytes: canonicalBytes({ content, sha256 }, "canon-ascii") };
}

function diff(a: JsonValue | undefined, b: JsonValue | undefined, path: string, out: string[]) {
  const isObj = (v: JsonValue | undefined): v is JsonObject =>
    v !== null && typeof v === "object" && !Array.isArray(v) && !(v instanceof JsonFloat);
  if (isObj(a) && isObj(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    for (const k of keys) diff(a[k], b[k], path === "" ? k : `${path}.${k}`, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    a.forEach((item, i) => diff(item, b[i], `${path}[${i}]`, out));
    return;
  }
  const bytes = (v: JsonValue | undefined) =>
    v === undefined ? "<absent>" : new TextDecoder().decode(canonicalBytes(v, "canon-ascii"));
  if (bytes(a) !== bytes(b)) out.push(path === "" ? "content" : path);
}

/**
 * The fields (dotted paths, `steps[1].state`) where a recorded scorecard content differs
 * from a recomputed one; empty when they are byte-identical.
 */
export function divergingFields(recorded: JsonValue, recomputed: JsonValue): string[] {
  const out: string[] = [];
  diff(recorded, recomputed, "", out);
  return out;
}
