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
  TaskAttachmentInvalidError,
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
export {
  fanOutSink,
  MemoryEventSink,
  NULL_EVENT_SINK,
  type TaskEvent,
  type TaskEventSink,
  type TaskEventType,
} from "./events.ts";
export {
  type AddHoldOptions,
  FileHoldStore,
  type Hold,
  type HoldStore,
  type HoldStoreOptions,
  openHoldStore,
} from "./holds.ts";
export {
  IndexedTaskStore,
  type IndexedTaskStoreOptions,
  NULL_JOURNAL,
  type TaskJournal,
} from "./indexed_store.ts";
export {
  encodeTaskLogLine,
  JsonlTaskStore,
  type JsonlTaskStoreOptions,
  openJsonlTaskStore,
  readTaskLog,
  replayTaskLog,
  TASK_LOG_VERSION,
  type TaskLogRecovery,
  type TaskLogSnapshot,
  type TornTail,
} from "./jsonl_store.ts";
export {
  createMemoryTaskStore,
  HOLDS_FILE,
  type MemoryTaskStoreOptions,
  TASK_LOG_FILE,
  taskDefaults,
} from "./open_store.ts";
export {
  applyAttachmentStamp,
  applyProgress,
  applyTransition,
  type BuildContext,
  buildTask,
  checkChange,
  checkHolder,
  checkReleaseOptions,
  checkStatus,
  compareClaimOrder,
  compareCreationOrder,
  freezeTask,
  holdsClaim,
  isoTime,
  isReady,
  isStaleClaim,
  pendingDependencies,
  refusalEvent,
  selectReady,
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
  TRANSITIONS,
} from "./state_machine.ts";
export type {
  ChangeOptions,
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
  CompletionSignalSchema,
  describeZodError,
  describeZodIssue,
  issuePath,
  type ParsedTaskDraft,
  parseTaskDraft,
  type Task,
  TASK_COMPLEXITIES,
  TASK_SCOPES,
  type TaskComplexity,
  type TaskDraft,
  TaskDraftSchema,
  type TaskEffort,
  TaskIdSchema,
  type TaskJson,
  TaskSchema,
  type TaskScope,
  validationError,
} from "./task.ts";
export { TASK_STATUSES, type TaskStatus } from "./status.ts";
export { TaskIdGenerator } from "./task_id.ts";
