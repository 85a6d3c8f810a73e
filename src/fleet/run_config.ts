// A run's configuration identity: at each start (and resume) the effective configuration is
// written as `.sdd/runs/<run>/config-<attempt>.json` (every leaf, the layer that set it, the
// active context and its settings hash; URL passwords redacted) and bound to the audit chain
// by a `fleet.run_config` event carrying the file's hash. `runs diff A B` compares two runs
// from these records: each differing key with its value and layer in both, and whether the
// operating context is the cause.
import { join } from "node:path";
import type { AuditKey, AuditSink } from "../audit/mod.ts";
import {
  canonicalBytes,
  type FieldChecks,
  fieldProblem,
  hasFields,
  isJsonObject,
  isSafeInteger,
  isString,
  isStringRecord,
  type JsonObject,
  type JsonValue,
  parseJsonBytes,
  toHex,
} from "../canonical/mod.ts";
import { isPlainObject, shownConfigValue } from "../config/mod.ts";
import { sha256 } from "../crypto/mod.ts";
import { readFileIfExists, sddFolder, writeFileAtomic } from "../io/mod.ts";
import { checkRunId, runDir } from "../io/mod.ts";
import { readFleetChain } from "./chain.ts";
import { FleetError } from "./errors.ts";
import { RUN_CONFIG } from "./events.ts";

/** The record's schema tag. */
export const RUN_CONFIG_SCHEMA = "bernstein-run-config/v1";

/** What a run's configuration record holds. */
export interface RunConfigRecord {
  /** The schema tag. */
  schema: string;
  /** The run. */
  run_id: string;
  /** 1 for the start, n for the n-th resume. */
  attempt: number;
  /** The active context, or null. */
  context: { name: string; settings_hash: string } | null;
  /** `sha256:` of the `canon` bytes of `values`. */
  config_hash: string;
  /** Every configuration leaf by dotted key (URL passwords redacted). */
  values: JsonObject;
  /** The layer that set each leaf (`default` when none did). */
  sources: { [key: string]: string };
}

const RECORD_FIELDS: FieldChecks<RunConfigRecord> = {
  schema: isString,
  run_id: isString,
  attempt: isSafeInteger,
  context: (v) => v === null || (isJsonObject(v) && isString(v.name) && isString(v.settings_hash)),
  config_hash: isString,
  values: isJsonObject,
  sources: isStringRecord,
};

function leaves(value: unknown, prefix: string, out: JsonObject): void {
  if (isPlainObject(value) && Object.keys(value).length > 0) {
    for (const [k, v] of Object.entries(value)) {
      if (v !== undefined) leaves(v, prefix === "" ? k : `${prefix}.${k}`, out);
    }
    return;
  }
  out[prefix] = shownConfigValue(prefix, value) as JsonValue;
}

/** The record of an effective configuration (pure). */
export function runConfigRecord(input: {
  runId: string;
  attempt: number;
  config: object;
  sources: ReadonlyMap<string, string>;
  context: { name: string; settings_hash: string } | null;
}): RunConfigRecord {
  const values: JsonObject = {};
  // Through JSON once: the record holds what the configuration serialises to.
  leaves(JSON.parse(JSON.stringify(input.config)), "", values);
  const sorted: JsonObject = {};
  const sources: { [key: string]: string } = {};
  for (const key of Object.keys(values).sort()) {
    sorted[key] = values[key];
    sources[key] = input.sources.get(key) ?? "default";
  }
  return {
    schema: RUN_CONFIG_SCHEMA,
    run_id: input.runId,
    attempt: input.attempt,
    context: input.context,
    config_hash: `sha256:${toHex(sha256(canonicalBytes(sorted, "canon")))}`,
    values: sorted,
    sources,
  };
}

function recordPath(sdd: string, runId: string, attempt: number): string {
  return join(runDir(sdd, runId), `config-${attempt}.json`);
}

/** Writes a run's configuration record and binds it to the chain (`fleet.run_config`). */
export async function recordRunConfig(
  sdd: string,
  record: RunConfigRecord,
  audit: AuditSink,
): Promise<void> {
  const bytes = canonicalBytes(record, "canon");
  const path = recordPath(sdd, record.run_id, record.attempt);
  await Deno.mkdir(join(path, ".."), { recursive: true, mode: 0o755 });
  await writeFileAtomic(path, bytes, { mode: 0o644 });
  await audit.append({
    actor: "orchestrator",
    event_type: RUN_CONFIG,
    resource_type: "run",
    resource_id: record.run_id,
    details: {
      run_id: record.run_id,
      attempt: record.attempt,
      config_hash: record.config_hash,
      context: record.context,
      record_sha256: `sha256:${toHex(sha256(bytes))}`,
    },
  });
}

/**
 * A run's latest configuration record, checked against its `fleet.run_config` event on the
 * chain (a changed or unbound file is `fleet.chain_damaged`).
 */
export async function readRunConfig(
  sdd: string,
  auditKey: AuditKey,
  runId: string,
): Promise<RunConfigRecord> {
  const chain = await readFleetChain(sddFolder(sdd, "audit"), auditKey);
  const bound = chain.events.filter((e) =>
    e.event_type === RUN_CONFIG && e.details.run_id === checkRunId(runId)
  ).at(-1);
  if (bound === undefined) {
    throw new FleetError("fleet.unknown_name", `run '${runId}' has no configuration record`, {
      hint:
        "runs record their configuration from this version on; 'bernstein runs list' lists runs",
    });
  }
  const attempt = Number(bound.details.attempt);
  const path = recordPath(sdd, runId, attempt);
  const bytes = await readFileIfExists(path);
  const want = bound.details.record_sha256;
  if (bytes === undefined || `sha256:${toHex(sha256(bytes))}` !== want) {
    throw new FleetError(
      "fleet.chain_damaged",
      bytes === undefined
        ? `the configuration record of run '${runId}' is missing`
        : `the configuration record of run '${runId}' does not hash to what ${bound.where} bound`,
      { location: path },
    );
  }
  // Hash-bound to the chain, so bernstein wrote these bytes; another version may have shaped them
  // differently.
  const record = parseJsonBytes(bytes);
  if (!hasFields(record, RECORD_FIELDS)) {
    throw new FleetError(
      "fleet.record_invalid",
      `the configuration record of run '${runId}' is not one this version reads: ${
        fieldProblem(record, RECORD_FIELDS)
      }`,
      { location: path },
    );
  }
  return record;
}

/** One key two runs disagree on. */
export interface ConfigDifference {
  /** Dotted key. */
  key: string;
  /** Value and layer in the first run (value null when unset). */
  a: { value: JsonValue; source: string };
  /** Value and layer in the second run. */
  b: { value: JsonValue; source: string };
}

/** Two runs' configurations compared. */
export interface RunConfigDiff {
  /** Same configuration hash. */
  same: boolean;
  /** True when the operating contexts differ (name or settings hash). */
  context_differs: boolean;
  /** Differing keys, sorted. */
  differences: ConfigDifference[];
}

/** Compares two records (pure). */
export function diffRunConfigs(a: RunConfigRecord, b: RunConfigRecord): RunConfigDiff {
  const keys = [...new Set([...Object.keys(a.values), ...Object.keys(b.values)])].sort();
  const side = (r: RunConfigRecord, k: string) => ({
    value: (r.values[k] ?? null) as JsonValue,
    source: k in r.values ? r.sources[k] ?? "default" : "unset",
  });
  const differences = keys.flatMap((k) => {
    const x = canonicalBytes(a.values[k] ?? null, "canon");
    const y = canonicalBytes(b.values[k] ?? null, "canon");
    const equal = x.length === y.length && x.every((v, i) => v === y[i]);
    return equal ? [] : [{ key: k, a: side(a, k), b: side(b, k) }];
  });
  return {
    same: a.config_hash === b.config_hash,
    context_differs: a.context?.name !== b.context?.name ||
      a.context?.settings_hash !== b.context?.settings_hash,
    differences,
  };
}
