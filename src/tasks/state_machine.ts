// The task state machine: one table, read by the store, the server and the docs.
import { TASK_STATUSES, type TaskStatus } from "./status.ts";

/**
 * Every legal transition. Main line: planned → open → claimed → in_progress → done → closed.
 * `open` is re-entered when a claim is released (stale, agent died), an orphan is resumed or a
 * failed task is retried (bounded by `max_retries`). `done → failed` is a gate or merge
 * refusal after the agent finished. `closed` and `cancelled` are final.
 */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  planned: ["open", "cancelled"],
  open: ["claimed", "blocked", "failed", "cancelled"],
  claimed: ["in_progress", "open", "failed", "blocked", "cancelled", "orphaned"],
  in_progress: [
    "done",
    "failed",
    "blocked",
    "waiting_for_subtasks",
    "open",
    "cancelled",
    "orphaned",
  ],
  waiting_for_subtasks: ["open", "done", "failed", "cancelled"],
  done: ["closed", "failed"],
  closed: [],
  failed: ["open"],
  blocked: ["open", "failed", "cancelled"],
  cancelled: [],
  orphaned: ["open", "failed", "cancelled"],
};

/** Statuses with no way out. */
export const FINAL_STATUSES: readonly TaskStatus[] = TASK_STATUSES.filter(
  (s) => TRANSITIONS[s].length === 0,
);

/** Statuses in which an agent holds the task (a claim that can go stale). */
export const CLAIMED_STATUSES: readonly TaskStatus[] = ["claimed", "in_progress"];

/** Statuses that count as finished for run termination (nothing more will happen by itself). */
export const FINISHED_STATUSES: readonly TaskStatus[] = ["closed", "failed", "cancelled"];

/** The status a dependency must reach before its dependents can be claimed (merged work). */
export const DEPENDENCY_SATISFIED: TaskStatus = "closed";

/**
 * Statuses from which a task does not reach `closed` by itself: a task that depends on one
 * can never be claimed, so the scheduler fails it.
 */
export const DEAD_END_STATUSES: readonly TaskStatus[] = ["failed", "cancelled", "orphaned"];

/** True when `from → to` is a legal transition. */
export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The statuses reachable from `from` in one step. */
export function nextStatuses(from: TaskStatus): readonly TaskStatus[] {
  return TRANSITIONS[from];
}
