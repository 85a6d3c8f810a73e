// The fleet plane's state, projected from the audit chain alone (pure): each variable's writes
// and reads, and the semantic checks `audit verify` adds over them — write ordinals contiguous
// per name, each write's old hash equal to the previous write's new hash, each read naming a
// write that existed at its position with the value that write stored.
import type { ErrorCode } from "../errors/mod.ts";
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import {
  CONN_CREATE,
  CONN_REFUSE,
  CONN_RESOLVE,
  CONN_ROTATE,
  CONTEXT_ACTIVATE,
  CONTEXT_CREATE,
  VAR_READ,
  VAR_SET,
  VAR_UNSET,
} from "./events.ts";

/** One authenticated fleet record of the chain, with where it is. */
export interface FleetChainEvent {
  /** The event type. */
  event_type: string;
  /** Who acted. */
  actor: string;
  /** The record's details. */
  details: JsonObject;
  /** The record's timestamp. */
  timestamp: string;
  /** The record's HMAC (its identity in the chain). */
  hmac: string;
  /** `<segment>:<line>`: the chain position a report names. */
  where: string;
}

/** A variable write (`set` or `unset`) as the chain recorded it. */
export interface VariableWrite {
  /** The per-name write ordinal (`chain_position`), 0 for the first write. */
  ordinal: number;
  /** `set` or `unset`. */
  kind: "set" | "unset";
  /** The value hash before ("" when there was none). */
  old_value_hash: string;
  /** The value hash after ("" for an unset). */
  new_value_hash: string;
  /** Who wrote. */
  actor: string;
  /** When. */
  timestamp: string;
  /** Chain position of the record. */
  where: string;
  /** The record's HMAC. */
  hmac: string;
}

/** A claim-time read as the chain recorded it. */
export interface VariableRead {
  /** The ordinal of the write the read saw. */
  ordinal: number;
  /** The value hash read. */
  value_hash: string;
  /** The reading task. */
  task_id: string;
  /** The run it ran in. */
  run_id: string;
  /** The pin's entry on the run spine. */
  spine_entry_hash: string;
  /** Chain position of the record. */
  where: string;
}

/** One variable, from the chain. */
export interface VariableHistory {
  /** The name. */
  name: string;
  /** Every write in chain order. */
  writes: VariableWrite[];
  /** Every claim-time read in chain order. */
  reads: VariableRead[];
}

/** A connection, from the chain: its versions, resolutions and refusals. */
export interface ConnectionHistory {
  /** The name. */
  name: string;
  /** Every version (create, then rotations), in chain order. */
  versions: {
    version: number;
    document_hash: string;
    actor: string;
    timestamp: string;
    where: string;
  }[];
  /** Every resolution for a task. */
  resolutions: {
    task_id: string;
    run_id: string;
    version: number;
    document_hash: string;
    token_id: string;
    timestamp: string;
    where: string;
  }[];
  /** Every refusal. */
  refusals: {
    task_id: string;
    document_hash: string;
    reason: string;
    timestamp: string;
    where: string;
  }[];
}

/** A semantic violation of the fleet records, with its chain position. */
export interface FleetViolation {
  /** `<segment>:<line>`. */
  where: string;
  /** Stable code: `fleet.ordinal_gap`, `fleet.hash_lineage`, `fleet.read_unknown`, … */
  code: ErrorCode;
  /** What is wrong. */
  message: string;
}

/** The projection of every fleet record. */
export interface FleetProjection {
  /** Variables by name (sorted when listed). */
  variables: Map<string, VariableHistory>;
  /** Connections by name. */
  connections: Map<string, ConnectionHistory>;
  /** Contexts by name: every settings hash created for it, in chain order. */
  contexts: Map<string, string[]>;
  /** Semantic violations, in chain order. */
  violations: FleetViolation[];
}

function text(d: JsonObject, key: string): string | undefined {
  const v = d[key];
  return typeof v === "string" ? v : undefined;
}

function ordinalOf(d: JsonObject): number | undefined {
  const v: JsonValue | undefined = d.chain_position;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return v;
  if (typeof v === "bigint" && v >= 0n && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  return undefined;
}

function historyOf(p: FleetProjection, name: string): VariableHistory {
  let h = p.variables.get(name);
  if (h === undefined) {
    h = { name, writes: [], reads: [] };
    p.variables.set(name, h);
  }
  return h;
}

function addWrite(p: FleetProjection, e: FleetChainEvent): void {
  const d = e.details;
  const name = text(d, "name");
  const ordinal = ordinalOf(d);
  const oldHash = text(d, "old_value_hash");
  const newHash = text(d, "new_value_hash");
  if (
    name === undefined || ordinal === undefined || oldHash === undefined || newHash === undefined
  ) {
    p.violations.push({
      where: e.where,
      code: "fleet.malformed",
      message: `${e.event_type} without name, chain_position, old_value_hash and new_value_hash`,
    });
    return;
  }
  const h = historyOf(p, name);
  const prev = h.writes.at(-1);
  const expected = prev === undefined ? 0 : prev.ordinal + 1;
  if (ordinal !== expected) {
    p.violations.push({
      where: e.where,
      code: "fleet.ordinal_gap",
      message: `variable '${name}': write ordinal ${ordinal}, expected ${expected}` +
        (ordinal > expected ? " (a write is missing)" : " (a write is repeated or reordered)"),
    });
  }
  const before = prev?.new_value_hash ?? "";
  if (oldHash !== before) {
    p.violations.push({
      where: e.where,
      code: "fleet.hash_lineage",
      message: `variable '${name}': write ${ordinal} says the old value was '${
        oldHash || "(none)"
      }', but the previous write left '${before || "(none)"}'`,
    });
  }
  const unset = e.event_type === VAR_UNSET;
  if (unset !== (newHash === "")) {
    p.violations.push({
      where: e.where,
      code: "fleet.malformed",
      message: `variable '${name}': ${e.event_type} with new_value_hash '${newHash}'`,
    });
  }
  h.writes.push({
    ordinal,
    kind: unset ? "unset" : "set",
    old_value_hash: oldHash,
    new_value_hash: newHash,
    actor: e.actor,
    timestamp: e.timestamp,
    where: e.where,
    hmac: e.hmac,
  });
}

function addRead(p: FleetProjection, e: FleetChainEvent): void {
  const d = e.details;
  const name = text(d, "name");
  const ordinal = ordinalOf(d);
  const valueHash = text(d, "value_hash");
  if (name === undefined || ordinal === undefined || valueHash === undefined) {
    p.violations.push({
      where: e.where,
      code: "fleet.malformed",
      message: `${VAR_READ} without name, chain_position and value_hash`,
    });
    return;
  }
  const h = historyOf(p, name);
  const write = h.writes.find((w) => w.ordinal === ordinal);
  if (write === undefined || write.new_value_hash !== valueHash) {
    p.violations.push({
      where: e.where,
      code: "fleet.read_unknown",
      message: write === undefined
        ? `variable '${name}': a read names write ${ordinal}, which the chain does not hold before it`
        : `variable '${name}': a read of write ${ordinal} says '${valueHash}', the write stored '${write.new_value_hash}'`,
    });
  }
  h.reads.push({
    ordinal,
    value_hash: valueHash,
    task_id: text(d, "task_id") ?? "",
    run_id: text(d, "run_id") ?? "",
    spine_entry_hash: text(d, "spine_entry_hash") ?? "",
    where: e.where,
  });
}

const CONN_EVENTS = new Set([CONN_CREATE, CONN_ROTATE, CONN_RESOLVE, CONN_REFUSE]);

function intOf(v: JsonValue | undefined): number | undefined {
  return typeof v === "number" && Number.isSafeInteger(v) ? v : undefined;
}

function addConnection(p: FleetProjection, e: FleetChainEvent): void {
  const d = e.details;
  const name = text(d, "name");
  if (name === undefined) {
    p.violations.push({
      where: e.where,
      code: "fleet.malformed",
      message: `${e.event_type} without name`,
    });
    return;
  }
  let h = p.connections.get(name);
  const fail = (code: ErrorCode, message: string) =>
    p.violations.push({ where: e.where, code, message: `connection '${name}': ${message}` });
  if (e.event_type === CONN_CREATE || e.event_type === CONN_ROTATE) {
    const hash = text(d, e.event_type === CONN_CREATE ? "document_hash" : "new_document_hash");
    const version = intOf(d.version);
    if (hash === undefined || version === undefined) {
      return void fail("fleet.malformed", `${e.event_type} without its hash and version`);
    }
    const last = h?.versions.at(-1);
    if (e.event_type === CONN_CREATE && (h?.versions.length ?? 0) > 0) {
      fail("fleet.conn_lineage", "created twice");
    }
    if (e.event_type === CONN_ROTATE) {
      if (last === undefined) fail("fleet.conn_lineage", "rotated before it was created");
      else if (text(d, "old_document_hash") !== last.document_hash) {
        fail(
          "fleet.conn_lineage",
          `rotation ${version} does not start from version ${last.version}'s document`,
        );
      }
    }
    const expected = (last?.version ?? 0) + 1;
    if (version !== expected) {
      fail("fleet.conn_lineage", `version ${version}, expected ${expected}`);
    }
    if (h === undefined) {
      h = { name, versions: [], resolutions: [], refusals: [] };
      p.connections.set(name, h);
    }
    h.versions.push({
      version,
      document_hash: hash,
      actor: e.actor,
      timestamp: e.timestamp,
      where: e.where,
    });
    return;
  }
  const hash = text(d, "document_hash") ?? "";
  if (hash !== "" && !(h?.versions.some((v) => v.document_hash === hash) ?? false)) {
    fail(
      "fleet.conn_unknown_document",
      `a ${
        e.event_type === CONN_RESOLVE ? "resolution" : "refusal"
      } names document ${hash}, which no earlier create or rotation recorded`,
    );
  }
  if (h === undefined) {
    h = { name, versions: [], resolutions: [], refusals: [] };
    p.connections.set(name, h);
  }
  if (e.event_type === CONN_RESOLVE) {
    h.resolutions.push({
      task_id: text(d, "task_id") ?? "",
      run_id: text(d, "run_id") ?? "",
      version: intOf(d.version) ?? 0,
      document_hash: hash,
      token_id: text(d, "token_id") ?? "",
      timestamp: e.timestamp,
      where: e.where,
    });
  } else {
    h.refusals.push({
      task_id: text(d, "task_id") ?? "",
      document_hash: hash,
      reason: text(d, "reason") ?? "",
      timestamp: e.timestamp,
      where: e.where,
    });
  }
}

function addContext(p: FleetProjection, e: FleetChainEvent): void {
  const name = e.details.name;
  const hash = text(e.details, "settings_hash");
  if (e.event_type === CONTEXT_ACTIVATE && name === null && hash === "") return;
  if (typeof name !== "string" || hash === undefined) {
    p.violations.push({
      where: e.where,
      code: "fleet.malformed",
      message: `${e.event_type} without name and settings_hash`,
    });
    return;
  }
  const hashes = p.contexts.get(name) ?? [];
  if (e.event_type === CONTEXT_CREATE) {
    hashes.push(hash);
    p.contexts.set(name, hashes);
  } else if (!hashes.includes(hash)) {
    p.violations.push({
      where: e.where,
      code: "fleet.context_unknown",
      message:
        `context '${name}' activated as ${hash}, a version no earlier fleet.context_create recorded`,
    });
  }
}

/**
 * Projects the fleet records of a chain, in chain order, and checks them.
 *
 * @example
 * ```ts ignore
 * const p = projectFleet(events);
 * p.variables.get("threshold")?.writes.at(-1)?.new_value_hash; // the current value's hash
 * ```
 */
export function projectFleet(events: readonly FleetChainEvent[]): FleetProjection {
  const p: FleetProjection = {
    variables: new Map(),
    connections: new Map(),
    contexts: new Map(),
    violations: [],
  };
  for (const e of events) {
    if (e.event_type === VAR_SET || e.event_type === VAR_UNSET) addWrite(p, e);
    else if (e.event_type === VAR_READ) addRead(p, e);
    else if (e.event_type === CONTEXT_CREATE || e.event_type === CONTEXT_ACTIVATE) addContext(p, e);
    else if (CONN_EVENTS.has(e.event_type)) addConnection(p, e);
  }
  return p;
}

/** The write a variable's value comes from now; undefined when never set or last unset. */
export function headWrite(h: VariableHistory | undefined): VariableWrite | undefined {
  const last = h?.writes.at(-1);
  return last === undefined || last.kind === "unset" ? undefined : last;
}

/** Why two reads of one variable differ: the writes between their two positions. */
export interface Divergence {
  /** The two reads compared. */
  reads: [VariableRead, VariableRead];
  /** Same value hash: nothing to explain. */
  same: boolean;
  /** The writes after the earlier read's write, up to the later read's write. */
  writes: VariableWrite[];
}

/**
 * Explains two reads: the writes whose ordinal lies in (lower ordinal, higher ordinal] are the
 * ones that landed between them — from the chain alone.
 */
export function explainDivergence(
  h: VariableHistory,
  a: VariableRead,
  b: VariableRead,
): Divergence {
  const low = Math.min(a.ordinal, b.ordinal);
  const high = Math.max(a.ordinal, b.ordinal);
  return {
    reads: [a, b],
    same: a.value_hash === b.value_hash,
    writes: h.writes.filter((w) => w.ordinal > low && w.ordinal <= high),
  };
}
