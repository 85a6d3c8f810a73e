/**
 * Tasks: the task record and its schemas, the state machine, the `TaskStore` contract with
 * its backends (embedded JSONL log + in-memory index, pure in-memory), the pure rules every
 * backend shares, store events for the audit chain, and orchestrator holds.
 *
 * @example
 * ```ts ignore
 * import { openJsonlTaskStore } from "./mod.ts";
 * const store = await openJsonlTaskStore(".sdd/runtime/tasks.jsonl", {
 *   clock, random, sink, defaults: { priority: 2, max_retries: 2 }, compactMinRecords: 10000,
 * });
 * const task = await store.create({ title: "Write the parser", role: "backend" }, {
 *   actor: "planner",
 * });
 * const next = await store.claimNext("backend", { agent: "session-1" });
 * ```
 *
 * @module
 */
export { OrderedDelivery, WorkListeners } from "./delivery.ts";
export {
  ClaimLostError,
  DependenciesUnfinishedError,
  DuplicateTaskError,
  HoldNotFoundError,
  IllegalTransitionError,
  RetriesExhaustedError,
  TaskEventNotRecordedError,
  TaskLogCorruptError,
  TaskNotActiveError,
  TaskNotFoundError,
  TaskStoreLockedError,
  TaskStoreLockLostError,
  TaskStoreUnavailableError,
  TaskValidationError,
  UnknownTaskReferenceError,
  VersionConflictError,
} from "./errors.ts";
export { MemoryEventSink, type TaskEvent, type TaskEventSink } from "./events.ts";
export { FileHoldStore, type Hold, type HoldStore, openHoldStore } from "./holds.ts";
export { IndexedTaskStore } from "./indexed_store.ts";
export { JsonlTaskStore, openJsonlTaskStore, readTaskLog } from "./jsonl_store.ts";
export { createMemoryTaskStore, TASK_LOG_FILE, taskDefaults } from "./open_store.ts";
export {
  applyAttachmentStamp,
  applyProgress,
  applyTransition,
  buildTask,
  checkChange,
  checkHolder,
  checkReleaseOptions,
  checkStatus,
  compareClaimOrder,
  freezeTask,
  holdsClaim,
  isoTime,
  refusalEvent,
  type TaskChange,
  type TaskDefaults,
  type TaskLookup,
  wakesWork,
} from "./rules.ts";
export {
  canTransition,
  CLAIMED_STATUSES,
  DEAD_END_STATUSES,
  DEPENDENCY_SATISFIED,
  FINAL_STATUSES,
  FINISHED_STATUSES,
  nextStatuses,
} from "./state_machine.ts";
export type {
  ClaimByIdOptions,
  ClaimOptions,
  CreateOptions,
  HeartbeatOptions,
  ProgressOptions,
  ReleaseStaleOptions,
  StampAttachmentsOptions,
  TaskFilter,
  TaskStore,
  TransitionOptions,
} from "./store.ts";
export {
  type CompletionSignal,
  describeZodError,
  describeZodIssue,
  issuePath,
  type ParsedTaskDraft,
  parseTaskDraft,
  type Task,
  type TaskDraft,
  TaskDraftSchema,
  TaskSchema,
} from "./task.ts";
export { TASK_STATUSES, type TaskStatus } from "./status.ts";
export { TaskIdGenerator } from "./task_id.ts";
