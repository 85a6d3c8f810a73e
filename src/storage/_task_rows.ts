// Task records as PostgreSQL rows: the whole task as JSON text in `record` (validated with the
// task schema when read back, like every line of the JSONL log), plus the columns the queries
// filter and order by.
import {
  describeZodIssue,
  freezeTask,
  issuePath,
  type Task,
  TaskLogCorruptError,
  TaskSchema,
} from "../tasks/mod.ts";

/** Which run of which namespace a store works in. */
export interface StoreScope {
  /** `storage.namespace`: one orchestrator at a time per namespace. */
  namespace: string;
  /** The run id: a fresh run starts with no tasks, a resumed one finds its own. */
  run: string;
}

/** Column values of one task row. */
export interface TaskRow {
  namespace: string;
  run_id: string;
  id: string;
  status: string;
  role: string;
  priority: number;
  created_at: string;
  updated_ms: number;
  parent_task_id: string | null;
  assigned_agent: string | null;
  version: number;
  record: string;
}

/** The row of `task` in `scope`. */
export function rowOf(scope: StoreScope, task: Task): TaskRow {
  return {
    namespace: scope.namespace,
    run_id: scope.run,
    id: task.id,
    status: task.status,
    role: task.role,
    priority: task.priority,
    created_at: task.created_at,
    updated_ms: Date.parse(task.updated_at),
    parent_task_id: task.parent_task_id,
    assigned_agent: task.assigned_agent,
    version: task.version,
    record: JSON.stringify(task),
  };
}

/**
 * Reads a task back from its `record` column, checked against the task schema and the row's
 * id; a damaged row is an error naming it, never a half-read task.
 */
export function taskOf(scope: StoreScope, id: string, record: string): Task {
  const where = `bernstein.tasks (namespace ${scope.namespace}, run ${scope.run}, id ${id})`;
  let value: unknown;
  try {
    value = JSON.parse(record);
  } catch (error) {
    throw new TaskLogCorruptError(`record is not JSON: ${(error as Error).message}`, {
      location: where,
    });
  }
  const parsed = TaskSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new TaskLogCorruptError(
      `${issuePath(issue.path) || "record"}: ${describeZodIssue(issue)}`,
      {
        location: where,
      },
    );
  }
  if (parsed.data.id !== id) {
    throw new TaskLogCorruptError(`record holds task '${parsed.data.id}'`, { location: where });
  }
  return freezeTask(parsed.data);
}
