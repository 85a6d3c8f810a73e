// The task statuses: the one list every store, schema and state machine uses. Its own file so
// the errors (which name statuses) and the task record (which raises errors) do not import each
// other.

/** Every task status. `claimed`/`in_progress`/`waiting_for_subtasks` are "active". */
export const TASK_STATUSES = [
  "planned",
  "open",
  "claimed",
  "in_progress",
  "done",
  "closed",
  "failed",
  "blocked",
  "waiting_for_subtasks",
  "cancelled",
  "orphaned",
] as const;

/** A task's status (see the state machine in state_machine.ts). */
export type TaskStatus = typeof TASK_STATUSES[number];
