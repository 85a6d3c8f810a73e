// Art. 12(2)(b) cross-links: which of the window's `tool_call_id`s the authenticated audit log
// knows. A record speaks for a tool call when its details name it (`details.tool_call_id`), or,
// for the run loop's `task:<id>` tool calls, when it is about that task (resource `task`, id).
import type { JsonObject } from "../canonical/mod.ts";
import type { AuditCrossLinks } from "./article12.ts";

/** The fields of an audit record the linker reads. */
export interface LinkableRecord {
  /** Kind of the affected resource. */
  resource_type: string;
  /** Id of the affected resource. */
  resource_id: string;
  /** Structured facts. */
  details: JsonObject;
}

/**
 * Counts links between a window's tool calls and authenticated audit records fed one by one.
 *
 * @example
 * ```ts
 * const linker = new AuditLinker(new Set(["task:t-1"]));
 * linker.add({ resource_type: "task", resource_id: "t-1", details: {} });
 * linker.result({ authenticated: 1, rejected: 0 }).linked_tool_call_ids; // 1
 * ```
 */
export class AuditLinker {
  #ids: ReadonlySet<string>;
  #linked = new Set<string>();
  #events = 0;

  constructor(toolCallIds: ReadonlySet<string>) {
    this.#ids = toolCallIds;
  }

  /** Feeds one authenticated record. */
  add(record: LinkableRecord): void {
    let hit = false;
    const named = record.details.tool_call_id;
    if (typeof named === "string" && this.#ids.has(named)) {
      this.#linked.add(named);
      hit = true;
    }
    if (record.resource_type === "task") {
      const id = `task:${record.resource_id}`;
      if (this.#ids.has(id)) {
        this.#linked.add(id);
        hit = true;
      }
    }
    if (hit) this.#events++;
  }

  /** The cross-link facts, given how many audit lines authenticated and how many did not. */
  result(counts: { authenticated: number; rejected: number }): AuditCrossLinks {
    return {
      checked: true,
      tool_call_ids: this.#ids.size,
      linked_tool_call_ids: this.#linked.size,
      linked_audit_events: this.#events,
      audit_records_authenticated: counts.authenticated,
      audit_records_rejected: counts.rejected,
    };
  }
}
