// Art. 12(2)(c) operation monitoring: what each agent of the window could reach. The run
// records every spawn as an authenticated `agent.spawned` audit event whose `isolation` says
// how it ran (the sandbox and its backend, `none`, or `remote` on a worker host; the egress
// allowlist stays in the event); the pack states it per agent identity (`<adapter>:<session>`, the lineage
// entries' `agent_id`), and "not_recorded" where no authenticated event says.
import type { JsonObject, JsonValue } from "../canonical/mod.ts";

/** The fields of an audit record the collector reads. */
export interface SpawnRecord {
  /** Event type (`agent.spawned` is read, the rest ignored). */
  event_type: string;
  /** The session. */
  resource_id: string;
  /** Structured facts (`adapter`, `isolation`). */
  details: JsonObject;
}

/** What the audit log said about the agents' isolation. */
export interface AgentIsolationFacts {
  /** False when the audit log could not be read with its key. */
  checked: boolean;
  /** Why it was not checked. */
  reason?: string;
  /** Agent identity → its isolation as recorded (`isolation`, and `backend` for a sandbox). */
  byAgent: ReadonlyMap<string, JsonObject>;
}

/** Shown for an agent no authenticated `agent.spawned` event describes. */
export const NOT_RECORDED = "not_recorded";

function summary(isolation: JsonValue | undefined): JsonObject {
  if (typeof isolation !== "object" || isolation === null || Array.isArray(isolation)) {
    return { isolation: NOT_RECORDED };
  }
  const o = isolation as JsonObject;
  const out: JsonObject = {
    isolation: typeof o.isolation === "string" ? o.isolation : NOT_RECORDED,
  };
  // The egress allowlist names loopback ports of one run; it stays in the audit event.
  if (typeof o.backend === "string") out.backend = o.backend;
  return out;
}

/**
 * Collects the isolation of each spawned agent from authenticated audit records fed in chain
 * order (a later spawn of the same identity replaces an earlier one).
 *
 * @example
 * ```ts
 * const c = new AgentIsolationCollector();
 * c.add({ event_type: "agent.spawned", resource_id: "t-a1", details: { adapter: "claude", isolation: { isolation: "none" } } });
 * c.result().byAgent.get("claude:t-a1"); // { isolation: "none" }
 * ```
 */
export class AgentIsolationCollector {
  #byAgent = new Map<string, JsonObject>();

  /** Feeds one authenticated record. */
  add(record: SpawnRecord): void {
    if (record.event_type !== "agent.spawned") return;
    const adapter = record.details.adapter;
    if (typeof adapter !== "string") return;
    this.#byAgent.set(`${adapter}:${record.resource_id}`, summary(record.details.isolation));
  }

  /** The facts gathered. */
  result(): AgentIsolationFacts {
    return { checked: true, byAgent: this.#byAgent };
  }
}

/**
 * The `agent_isolation` block of 12(2)(c): every agent identity of the window with its
 * isolation, and how many agents ran under each.
 */
export function agentIsolationBlock(
  agentIds: readonly string[],
  facts: AgentIsolationFacts,
): JsonObject {
  if (!facts.checked) {
    return { checked: false, reason: facts.reason ?? "not checked" };
  }
  const counts: Record<string, number> = {};
  const agents = agentIds.map((agent_id) => {
    const isolation = facts.byAgent.get(agent_id) ?? { isolation: NOT_RECORDED };
    const kind = String(isolation.isolation);
    counts[kind] = (counts[kind] ?? 0) + 1;
    return { agent_id, ...isolation };
  });
  const sorted: JsonObject = {};
  for (const k of Object.keys(counts).sort()) sorted[k] = counts[k];
  return { checked: true, counts: sorted, agents };
}
