// Events every store change produces, and the recorder interface they are delivered to. The
// run loop plugs the HMAC audit chain in here; tests plug in a list.
import type { TaskStatus } from "./status.ts";
import type { TaskJson } from "./task.ts";

/** Kinds of store events. */
export type TaskEventType =
  | "task.created"
  | "task.transition"
  | "task.progress"
  | "task.attachments"
  | "task.refused"
  | "hold.added"
  | "hold.released";

/**
 * One change, shaped like an audit record (FORMATS.md §2) minus the chain fields: `actor`,
 * `event_type` (`type`), `resource_type`, `resource_id` and `details` map one to one; the
 * audit writer adds its own timestamp and HMAC.
 */
export interface TaskEvent {
  /** What happened. */
  type: TaskEventType;
  /** `task` or `hold`. */
  resource_type: "task" | "hold";
  /** Task or hold id. */
  resource_id: string;
  /** Who did it: `operator`, `orchestrator`, `agent:<id>`, … */
  actor: string;
  /** Why, in words. */
  reason: string;
  /** Status before (null for creations, progress and holds). */
  from: TaskStatus | null;
  /** Status after (for progress: the unchanged status; null for holds). */
  to: TaskStatus | null;
  /** Task version after the change (null for holds). */
  version: number | null;
  /** ISO-8601 time of the change, from the store's clock. */
  at: string;
  /**
   * Type-specific facts: progress `{message, percent}`, `{result_summary}`, `{retry_count}`;
   * a refusal `{attempted, holder, assigned_agent}`.
   */
  details: { [key: string]: TaskJson };
}

/**
 * Receives every event after the change is durable, in commit order. A rejection reaches the
 * caller of the store operation as `task.event_not_recorded` (the change itself stays).
 */
export interface TaskEventSink {
  /** Records one event. */
  append(event: TaskEvent): Promise<void> | void;
}

/** A sink that drops everything (a store without an audit trail, benchmarks). */
export const NULL_EVENT_SINK: TaskEventSink = { append: () => {} };

/** A sink that keeps events in memory (tests, `bernstein run --json` streaming). */
export class MemoryEventSink implements TaskEventSink {
  /** Every event so far, in order. */
  readonly events: TaskEvent[] = [];

  append(event: TaskEvent): void {
    this.events.push(event);
  }
}
