// The fleet plane's audit events (FORMATS.md §2 and §12): their types and the exact `details`
// each carries. Writers build them here; the projection reads them back.
import type { AuditEventInput } from "../audit/mod.ts";

/** A variable write: `{name, old_value_hash, new_value_hash, chain_position, size_bytes}`. */
export const VAR_SET = "fleet.var_set";
/** A variable removed: `{name, old_value_hash, new_value_hash: "", chain_position}`. */
export const VAR_UNSET = "fleet.var_unset";
/**
 * A claim-time read pinned on a task:
 * `{name, value_hash, chain_position, task_id, run_id, spine_entry_hash}`.
 */
export const VAR_READ = "fleet.var_read";
/** A connection document created: `{name, document_hash, version, secret_ref_digest, scope}`. */
export const CONN_CREATE = "fleet.conn_create";
/** A connection rotated: `{name, old_document_hash, new_document_hash, version, …}`. */
export const CONN_ROTATE = "fleet.conn_rotate";
/** A connection resolved for a task: `{name, document_hash, version, task_id, run_id}`. */
export const CONN_RESOLVE = "fleet.conn_resolve";
/** A connection refused to resolve: `{name, document_hash, reason, task_id}`. */
export const CONN_REFUSE = "fleet.conn_refuse";
/** A context created or replaced: `{name, settings_hash}`. */
export const CONTEXT_CREATE = "fleet.context_create";
/** A context made active (or none): `{name, settings_hash}` (`name` null for `--none`). */
export const CONTEXT_ACTIVATE = "fleet.context_activate";

/**
 * A run's configuration identity at its start or resume:
 * `{run_id, attempt, config_hash, context, record_sha256}`.
 */
export const RUN_CONFIG = "fleet.run_config";

/** Every fleet event type, for scans. */
export const FLEET_EVENT_TYPES: readonly string[] = [
  VAR_SET,
  VAR_UNSET,
  VAR_READ,
  CONN_CREATE,
  CONN_ROTATE,
  CONN_RESOLVE,
  CONN_REFUSE,
  CONTEXT_CREATE,
  CONTEXT_ACTIVATE,
  RUN_CONFIG,
];

/** A variable write's event. */
export function varWriteEvent(
  actor: string,
  w: {
    name: string;
    oldValueHash: string;
    newValueHash: string;
    ordinal: number;
    sizeBytes: number;
  },
): AuditEventInput {
  const unset = w.newValueHash === "";
  return {
    actor,
    event_type: unset ? VAR_UNSET : VAR_SET,
    resource_type: "fleet_variable",
    resource_id: w.name,
    details: {
      name: w.name,
      old_value_hash: w.oldValueHash,
      new_value_hash: w.newValueHash,
      chain_position: w.ordinal,
      ...(unset ? {} : { size_bytes: w.sizeBytes }),
    },
  };
}

/** A claim-time read's event. */
export function varReadEvent(r: {
  name: string;
  valueHash: string;
  ordinal: number;
  taskId: string;
  runId: string;
  spineEntryHash: string;
}): AuditEventInput {
  return {
    actor: "orchestrator",
    event_type: VAR_READ,
    resource_type: "fleet_variable",
    resource_id: r.name,
    details: {
      name: r.name,
      value_hash: r.valueHash,
      chain_position: r.ordinal,
      task_id: r.taskId,
      run_id: r.runId,
      spine_entry_hash: r.spineEntryHash,
    },
  };
}
