// Claim-time reads of variables: a task's `${var:NAME}` references are resolved once, at its
// first claim, and pinned — `(name, value_hash, chain_position)` on the run's spine, a
// `fleet.var_read` event on the chain, and `metadata.fleet_pins` on the task. Every later
// attempt of the task (a retry, a resumed run) resolves the pinned hash, never the live value,
// so it reads the same bytes whatever was written since.
import { join } from "node:path";
import type { AuditKey, AuditSink } from "../audit/mod.ts";
import { auditKeyIfAny } from "./chain.ts";
import type { EnvReader } from "../io/mod.ts";
import { type LineagePaths, lineagePaths, spineDir } from "../lineage/store/mod.ts";
import { appendSpineEntry } from "../lineage/store/mod.ts";
import { SPINE_FILE, SPINE_HEAD_FILE, spineKey, verifySpine } from "../lineage/mod.ts";
import { readFileIfExists } from "../io/mod.ts";
import { FleetError } from "./errors.ts";
import { varReadEvent } from "./events.ts";
import { substituteVariables, variableReferences } from "./references.ts";
import { hexOfValueHash, renderValue } from "./value.ts";
import { VariableStore } from "./variables.ts";

/** The step id prefix of a pin on the run spine: `fleet-var:<task id>:<name>@<ordinal>`. */
export const PIN_STEP_PREFIX = "fleet-var:";

/** One pinned read, as stamped on the task (`metadata.fleet_pins`). */
export interface VariablePin {
  /** The variable. */
  name: string;
  /** `sha256:<hex>` of the value's canonical bytes. */
  value_hash: string;
  /** The write ordinal the value came from. */
  chain_position: number;
  /** The pin's entry on the run spine. */
  spine_entry_hash: string;
}

/** The texts of a task that may reference variables. */
export interface TaskTexts {
  /** Task id. */
  id: string;
  /** One line. */
  title: string;
  /** What to do. */
  description: string;
  /** The task's metadata (pins of an earlier attempt live here). */
  metadata: { [key: string]: unknown };
}

/** A task's texts with its references resolved, and the pins to stamp (when new). */
export interface PinnedTexts {
  /** The title with values in place of references. */
  title: string;
  /** The description with values in place of references. */
  description: string;
  /** Every pin the texts read (old and new). */
  pins: VariablePin[];
  /** True when this call pinned a name the task had not read before. */
  pinnedNow: boolean;
}

/** The pins stamped on a task's metadata (malformed entries are ignored: they are re-pinned). */
export function pinsOf(metadata: { [key: string]: unknown }): VariablePin[] {
  const raw = metadata.fleet_pins;
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((p) => {
    if (p === null || typeof p !== "object") return [];
    const o = p as Record<string, unknown>;
    return typeof o.name === "string" && typeof o.value_hash === "string" &&
        typeof o.chain_position === "number" && typeof o.spine_entry_hash === "string"
      ? [{
        name: o.name,
        value_hash: o.value_hash,
        chain_position: o.chain_position,
        spine_entry_hash: o.spine_entry_hash,
      }]
      : [];
  });
}

/** True when a text may reference a variable (cheap test before any I/O). */
export function mentionsVariables(task: Pick<TaskTexts, "title" | "description">): boolean {
  return task.title.includes("${var:") || task.description.includes("${var:");
}

/** What {@linkcode pinTaskVariables} works with. */
export interface PinOptions {
  /** The project's `.sdd/`. */
  sdd: string;
  /** The run. */
  runId: string;
  /** The audit key (the chain is read with it, the spine tagged under it). */
  auditKey: AuditKey;
  /** The run's audit sink (the `fleet.var_read` events). */
  audit: AuditSink;
}

/**
 * Resolves a task's references: names pinned by an earlier attempt from their pinned hash,
 * other names from the chain head (and pins them). An unknown name is `fleet.unknown_name`.
 */
export async function pinTaskVariables(
  task: TaskTexts,
  options: PinOptions,
): Promise<PinnedTexts> {
  const names = [
    ...variableReferences(task.title, `task ${task.id} title`),
    ...variableReferences(task.description, `task ${task.id} description`),
  ].filter((n, i, all) => all.indexOf(n) === i);
  const store = new VariableStore({ sdd: options.sdd, auditKey: options.auditKey });
  const earlier = pinsOf(task.metadata);
  const pins: VariablePin[] = [];
  const values = new Map<string, string>();
  let pinnedNow = false;
  for (const name of names) {
    const old = earlier.find((p) => p.name === name);
    if (old !== undefined) {
      const { value, bytes } = await store.resolve(old.value_hash);
      values.set(name, renderValue(value, bytes));
      pins.push(old);
      continue;
    }
    const current = await store.get(name);
    const pin = await pinRead(
      task.id,
      current.name,
      current.value_hash,
      current.write.ordinal,
      options,
    );
    values.set(name, renderValue(current.value, current.bytes));
    pins.push(pin);
    pinnedNow = true;
  }
  return {
    title: substituteVariables(task.title, values),
    description: substituteVariables(task.description, values),
    pins,
    pinnedNow,
  };
}

async function pinRead(
  taskId: string,
  name: string,
  valueHash: string,
  ordinal: number,
  options: PinOptions,
): Promise<VariablePin> {
  const hex = hexOfValueHash(valueHash) as string;
  const entry = await appendSpineEntry(lineagePaths(options.sdd), options.runId, {
    artifact_path: `.sdd/fleet/variables/blobs/${hex.slice(0, 2)}/${hex}`,
    content_hash: valueHash,
    actor: "orchestrator",
    step_id: `${PIN_STEP_PREFIX}${taskId}:${name}@${ordinal}`,
    model: "",
    // No wall clock: the chain's fleet.var_read record has the time.
    timestamp: 0,
  }, options.auditKey.bytes);
  await options.audit.append(varReadEvent({
    name,
    valueHash,
    ordinal,
    taskId,
    runId: options.runId,
    spineEntryHash: entry.entry_hash,
  }));
  return {
    name,
    value_hash: valueHash,
    chain_position: ordinal,
    spine_entry_hash: entry.entry_hash,
  };
}

/** One pin of a run's spine, resolved from its hash. */
export interface ReplayedRead {
  /** The reading task. */
  task_id: string;
  /** The variable. */
  name: string;
  /** The write ordinal pinned. */
  chain_position: number;
  /** The pinned hash. */
  value_hash: string;
  /** The spine entry. */
  spine_entry_hash: string;
  /** The value's canonical bytes, as stored under the hash. */
  bytes: Uint8Array;
}

/**
 * Every variable pin of a run, in spine order, each resolved from its pinned hash (never the
 * live value). The spine must verify under the audit key; a broken one is refused.
 */
export async function replayRunPins(
  sdd: string,
  runId: string,
  auditKey: AuditKey,
): Promise<ReplayedRead[]> {
  const paths: LineagePaths = lineagePaths(sdd);
  const dir = spineDir(paths, runId);
  const rows = await readFileIfExists(join(dir, SPINE_FILE));
  if (rows === undefined) {
    throw new FleetError("fleet.unknown_name", `run '${runId}' has no spine (${dir})`, {
      hint: "a run has a spine once a task read a variable or a recovery step was routed",
    });
  }
  const head = await readFileIfExists(join(dir, SPINE_HEAD_FILE));
  const report = verifySpine(rows, head, {
    spine: spineKey(auditKey.bytes),
    audit: auditKey.bytes,
  });
  if (!report.ok) {
    const p = report.problems[0];
    throw new FleetError("fleet.chain_damaged", `${dir}/${p.where}: ${p.message}`);
  }
  const store = new VariableStore({ sdd, auditKey });
  const out: ReplayedRead[] = [];
  for (const e of report.entries) {
    const m = /^fleet-var:(.+):([a-z0-9][a-z0-9._-]*)@(\d+)$/.exec(e.step_id);
    if (m === null) continue;
    const { bytes } = await store.resolve(e.content_hash);
    out.push({
      task_id: m[1],
      name: m[2],
      chain_position: Number(m[3]),
      value_hash: e.content_hash,
      spine_entry_hash: e.entry_hash,
      bytes,
    });
  }
  return out;
}

/**
 * Refuses a plan whose steps reference a variable that has no value now (or a malformed
 * reference), before anything starts: `fleet.unknown_name` / `fleet.bad_reference`, exit 2.
 * The values are not pinned here: each task pins at its own first claim.
 */
export async function checkPlanVariables(
  sdd: string,
  steps: readonly { title: string; description?: string }[],
  env: EnvReader,
): Promise<void> {
  const wanted = new Map<string, string>();
  for (const s of steps) {
    const where = `step '${s.title}'`;
    for (
      const n of [
        ...variableReferences(s.title, where),
        ...variableReferences(s.description ?? "", where),
      ]
    ) {
      if (!wanted.has(n)) wanted.set(n, where);
    }
  }
  if (wanted.size === 0) return;
  // No audit key yet: nothing was ever set (a writer creates the key).
  const key = await auditKeyIfAny(env);
  const known = key === undefined
    ? []
    : (await new VariableStore({ sdd, auditKey: key }).list()).map((v) => v.name);
  for (const [name, where] of wanted) {
    if (!known.includes(name)) {
      throw new FleetError(
        "fleet.unknown_name",
        `${where} reads \${var:${name}}, which has no value`,
        {
          hint: `'bernstein var set ${name} VALUE' sets it${
            known.length ? `; known: ${known.join(", ")}` : ""
          }`,
        },
      );
    }
  }
}
