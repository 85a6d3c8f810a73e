// The lines of a pack's `fleet-events.jsonl` (FORMATS.md §5 and §12): one canonical line per
// fleet event of the window, as the audit chain recorded it. The builder writes them
// (src/compliance/store), the verifier checks them (src/verify/fleet_events.ts). Pure.
import { canonicalBytes, type JsonObject } from "../canonical/mod.ts";

/** The event types the member may hold (the fleet plane's, src/fleet/events.ts). */
export const PACK_FLEET_EVENT_TYPES: readonly string[] = [
  "fleet.var_set",
  "fleet.var_unset",
  "fleet.var_read",
  "fleet.conn_create",
  "fleet.conn_rotate",
  "fleet.conn_resolve",
  "fleet.conn_refuse",
  "fleet.context_create",
  "fleet.context_activate",
  "fleet.run_config",
];

/** One line of the member: an audit record's fleet fields and its chain position. */
export interface PackFleetEvent {
  /** Who acted. */
  actor: string;
  /** The record's details. */
  details: JsonObject;
  /** A fleet event type. */
  event_type: string;
  /** The record's HMAC (64 hex): its identity in the operator's chain. */
  hmac: string;
  /** The record's timestamp (ISO 8601 UTC). */
  timestamp: string;
  /** `<segment>:<line>` in the operator's chain. */
  where: string;
}

/** The member line of one event (`canon` bytes, no newline). */
export function packFleetLine(event: PackFleetEvent): Uint8Array {
  const line: JsonObject = {
    actor: event.actor,
    details: event.details,
    event_type: event.event_type,
    hmac: event.hmac,
    timestamp: event.timestamp,
    where: event.where,
  };
  return canonicalBytes(line, "canon");
}
