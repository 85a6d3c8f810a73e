// Reading the fleet records from the audit chain: an authenticated scan (only records whose
// HMAC verifies and that link to their predecessor), filtered to the fleet event types.
import { type AuditKey, readAuditKey, resolveAuditKeyPath, scanAuditLog } from "../audit/mod.ts";
import { KeyMissingError } from "../errors/mod.ts";
import type { EnvReader } from "../io/mod.ts";
import { FLEET_EVENT_TYPES } from "./events.ts";
import type { FleetChainEvent } from "./projection.ts";

/** The fleet records of a chain and how many lines the scan could not authenticate. */
export interface FleetChain {
  /** Fleet records in chain order. */
  events: FleetChainEvent[];
  /** Lines of the whole chain that did not authenticate (0 on an intact chain). */
  unauthenticated: number;
  /** The first of them (`<segment>:<line>: <reason>`), when any. */
  firstProblem?: string;
}

/** Reads every fleet record of the audit log in `auditDir` under `key`. */
export async function readFleetChain(auditDir: string, key: AuditKey): Promise<FleetChain> {
  const events: FleetChainEvent[] = [];
  const scan = await scanAuditLog(auditDir, key, {
    eventTypes: FLEET_EVENT_TYPES,
    onRecord: ({ record, segment, line }) =>
      events.push({
        event_type: record.event_type,
        actor: record.actor,
        details: record.details,
        timestamp: record.timestamp,
        hmac: record.hmac,
        where: `${segment}:${line}`,
      }),
  });
  const first = scan.skipped[0];
  return {
    events,
    unauthenticated: scan.skipped_count,
    firstProblem: first === undefined
      ? undefined
      : `${first.segment}:${first.line}: ${first.reason}`,
  };
}

/** The audit key, or undefined when none exists yet (nothing was ever written: no writer ran). */
export async function auditKeyIfAny(env: EnvReader): Promise<AuditKey | undefined> {
  return await readAuditKey(resolveAuditKeyPath(env).path).catch((error) => {
    if (error instanceof KeyMissingError) return undefined;
    throw error;
  });
}
