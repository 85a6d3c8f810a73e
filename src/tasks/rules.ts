// The task rules as pure functions over values: building a task from a draft, every
// transition and its side effects, readiness and claim order. Every backend calls these, so
// the semantics cannot drift between the embedded store and a database.
import {
  ClaimLostError,
  DependenciesUnfinishedError,
  IllegalTransitionError,
  RetriesExhaustedError,
  TaskNotActiveError,
  TaskValidationError,
  UnknownTaskReferenceError,
  VersionConflictError,
} from "./errors.ts";
import type { TaskEvent } from "./events.ts";
import {
  canTransition,
  CLAIMED_STATUSES,
  DEPENDENCY_SATISFIED,
  nextStatuses,
} from "./state_machine.ts";
import type { ProgressOptions, StampAttachmentsOptions, TransitionOptions } from "./store.ts";
import { TASK_STATUSES, type TaskStatus } from "./status.ts";
import { type ParsedTaskDraft, type Task, TaskDraftSchema, type TaskJson } from "./task.ts";

/** Defaults for draft fields that come from configuration (`tuning.tasks`). */
export interface TaskDefaults {
  /** Priority when the draft has none. */
  priority: number;
  /** `max_retries` when the draft has none. */
  max_retries: number;
}

/** Looks a task up by id (the store's index, or rows already locked by a database). */
export type TaskLookup = (id: string) => Task | undefined;

/** A computed change: the new task record and the event describing it. */
export interface TaskChange {
  /** The task after the change. */
  task: Task;
  /** The event to record. */
  event: TaskEvent;
}

/** Freezes a task and everything in it, so records shared from an index cannot be edited. */
export function freezeTask(task: Task): Task {
  deepFreeze(task);
  return task;
}

function deepFreeze(value: unknown): void {
  if (typeof value !== "object" || value === null || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

function requireText(value: unknown, field: string, max = 10_000): string {
  if (typeof value !== "string" || value.trim() === "") {
    throw new TaskValidationError(`${field} must be a non-empty string`, { location: field });
  }
  if (value.length > max) {
    throw new TaskValidationError(`${field} is longer than ${max} characters`, {
      location: field,
    });
  }
  return value;
}

/** Checks `actor` and `reason` of a change (both required, non-empty). */
export function checkChange(options: { actor: unknown; reason: unknown }): void {
  requireText(options.actor, "actor", 200);
  requireText(options.reason, "reason");
}

/** Checks a status name from outside (filters, CLI flags). */
export function checkStatus(value: string, field = "status"): TaskStatus {
  if (!(TASK_STATUSES as readonly string[]).includes(value)) {
    throw new TaskValidationError(
      `'${value}' is not a task status (one of ${TASK_STATUSES.join(", ")})`,
      { location: field },
    );
  }
  return value as TaskStatus;
}

/** Inputs of {@linkcode buildTask}. */
export interface BuildContext {
  /** The new task's id. */
  id: string;
  /** Creation time (ISO). */
  now: string;
  /** Defaults from configuration. */
  defaults: TaskDefaults;
  /** Existing tasks (and earlier tasks of the same batch). */
  lookup: TaskLookup;
  /** Who creates it. */
  actor: string;
  /** Field-path prefix for errors (`[3]` for the fourth draft of a batch). */
  at?: string;
}

/**
 * Builds a new task from a validated draft. `lookup` resolves references to existing tasks;
 * a dependency or parent that does not exist is an error naming the field.
 */
export function buildTask(
  draft: ParsedTaskDraft,
  context: BuildContext,
): TaskChange {
  const at = (field: string) => (context.at ? `${context.at}.${field}` : field);
  draft.depends_on.forEach((dep, i) => {
    if (dep === context.id) {
      throw new TaskValidationError(`a task cannot depend on itself`, {
        location: at(`depends_on[${i}]`),
      });
    }
    if (context.lookup(dep) === undefined) {
      throw new UnknownTaskReferenceError(`dependency '${dep}' does not exist`, {
        location: at(`depends_on[${i}]`),
      });
    }
  });
  if (draft.parent_task_id !== null && context.lookup(draft.parent_task_id) === undefined) {
    throw new UnknownTaskReferenceError(`parent task '${draft.parent_task_id}' does not exist`, {
      location: at("parent_task_id"),
    });
  }
  const task: Task = {
    id: context.id,
    title: draft.title,
    description: draft.description,
    role: draft.role,
    priority: draft.priority ?? context.defaults.priority,
    scope: draft.scope,
    complexity: draft.complexity,
    depends_on: [...new Set(draft.depends_on)],
    parent_task_id: draft.parent_task_id,
    owned_files: draft.owned_files,
    completion_signals: draft.completion_signals,
    cli: draft.cli,
    model: draft.model,
    effort: draft.effort,
    attachments: draft.attachments,
    max_retries: draft.max_retries ?? context.defaults.max_retries,
    retry_count: 0,
    assigned_agent: null,
    result_summary: null,
    terminal_reason: null,
    created_at: context.now,
    version: 1,
    metadata: draft.metadata,
    status: draft.status,
    updated_at: context.now,
  };
  const details: { [key: string]: TaskJson } = { title: task.title, role: task.role };
  if (task.parent_task_id !== null) details.parent_task_id = task.parent_task_id;
  if (task.depends_on.length > 0) details.depends_on = task.depends_on;
  return {
    task: freezeTask(task),
    event: {
      type: "task.created",
      resource_type: "task",
      resource_id: task.id,
      actor: context.actor,
      reason: "created",
      from: null,
      to: task.status,
      version: 1,
      at: context.now,
      details,
    },
  };
}

/** Ids of `task`'s dependencies that are not closed yet (missing ones count as unfinished). */
export function pendingDependencies(task: Task, lookup: TaskLookup): string[] {
  return task.depends_on.filter((id) => lookup(id)?.status !== DEPENDENCY_SATISFIED);
}

/** True when `task` can be claimed now: open and every dependency closed. */
export function isReady(task: Task, lookup: TaskLookup): boolean {
  return task.status === "open" && pendingDependencies(task, lookup).length === 0;
}

/**
 * Claim order: lower priority number first, then older. Ties (same millisecond) keep creation
 * order: every backend lists tasks in creation order and sorts stably.
 */
export function compareClaimOrder(
  a: Pick<Task, "priority" | "created_at">,
  b: Pick<Task, "priority" | "created_at">,
): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  return compareCreationOrder(a, b);
}

/** Creation time order; ties keep creation order (stable sort over creation-ordered input). */
export function compareCreationOrder(
  a: Pick<Task, "created_at">,
  b: Pick<Task, "created_at">,
): number {
  return a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0;
}

/**
 * Applies `task → to` with its side effects, or throws: illegal transition, version conflict,
 * unfinished dependencies (`→ claimed`), exhausted retries (`failed → open`).
 *
 * Side effects: `→ claimed` sets `assigned_agent`; `→ open` clears the agent, summary and
 * reason (and counts a retry when leaving `failed`); `→ done` stores `result_summary`;
 * `→ failed|blocked|cancelled|orphaned` stores `terminal_reason`.
 */
export function applyTransition(
  task: Task,
  to: TaskStatus,
  options: TransitionOptions,
  context: { now: string; lookup: TaskLookup },
): TaskChange {
  checkChange(options);
  checkStatus(to, "to");
  if (options.expectedVersion !== undefined && options.expectedVersion !== task.version) {
    throw new VersionConflictError(task.id, options.expectedVersion, task.version);
  }
  const from = task.status;
  if (!canTransition(from, to)) {
    throw new IllegalTransitionError(task.id, from, to, nextStatuses(from));
  }
  const next: Task = { ...task, status: to, version: task.version + 1, updated_at: context.now };
  const details: { [key: string]: TaskJson } = {};
  switch (to) {
    case "claimed": {
      const agent = requireText(options.agent, "agent", 200);
      const pending = pendingDependencies(task, context.lookup);
      if (pending.length > 0) throw new DependenciesUnfinishedError(task.id, pending);
      next.assigned_agent = agent;
      details.agent = agent;
      break;
    }
    case "open": {
      if (from === "failed") {
        if (task.retry_count >= task.max_retries) {
          throw new RetriesExhaustedError(task.id, task.max_retries);
        }
        next.retry_count = task.retry_count + 1;
        details.retry_count = next.retry_count;
      }
      if (task.assigned_agent !== null) details.released_agent = task.assigned_agent;
      next.assigned_agent = null;
      next.result_summary = null;
      next.terminal_reason = null;
      break;
    }
    case "done": {
      if (options.result_summary !== undefined) {
        next.result_summary = requireText(options.result_summary, "result_summary", 100_000);
        details.result_summary = next.result_summary;
      }
      break;
    }
    case "failed":
    case "blocked":
    case "cancelled":
    case "orphaned": {
      next.terminal_reason = options.terminal_reason === undefined
        ? options.reason
        : requireText(options.terminal_reason, "terminal_reason", 100_000);
      break;
    }
    default:
      break;
  }
  if (options.metadata !== undefined) {
    const parsed = TaskDraftSchema.shape.metadata.safeParse(options.metadata);
    if (!parsed.success) {
      throw new TaskValidationError("metadata must be a JSON object", { location: "metadata" });
    }
    const patch = parsed.data;
    next.metadata = { ...task.metadata, ...patch };
    details.metadata = patch;
  }
  return {
    task: freezeTask(next),
    event: {
      type: "task.transition",
      resource_type: "task",
      resource_id: task.id,
      actor: options.actor,
      reason: options.reason,
      from,
      to,
      version: next.version,
      at: context.now,
      details,
    },
  };
}

/** Records progress of an active task: bumps version and `updated_at`, keeps the status. */
export function applyProgress(
  task: Task,
  options: ProgressOptions,
  context: { now: string },
): TaskChange {
  requireText(options.actor, "actor", 200);
  const message = requireText(options.message, "message");
  if (
    options.percent !== undefined &&
    (typeof options.percent !== "number" || !Number.isFinite(options.percent) ||
      options.percent < 0 || options.percent > 100)
  ) {
    throw new TaskValidationError("percent must be a number from 0 to 100", {
      location: "percent",
    });
  }
  if (!CLAIMED_STATUSES.includes(task.status)) throw new TaskNotActiveError(task.id, task.status);
  const next: Task = { ...task, version: task.version + 1, updated_at: context.now };
  const details: { [key: string]: TaskJson } = { message };
  if (options.percent !== undefined) details.percent = options.percent;
  return {
    task: freezeTask(next),
    event: {
      type: "task.progress",
      resource_type: "task",
      resource_id: task.id,
      actor: options.actor,
      reason: "progress",
      from: task.status,
      to: task.status,
      version: next.version,
      at: context.now,
      details,
    },
  };
}

const DIGEST = /^[0-9a-f]{64}$/;

/**
 * Stamps a spawn's attachment digests on an active task (`metadata.attachment_digests`,
 * `metadata.attachment_session`): bumps version and `updated_at`, keeps the status.
 */
export function applyAttachmentStamp(
  task: Task,
  options: StampAttachmentsOptions,
  context: { now: string },
): TaskChange {
  requireText(options.actor, "actor", 200);
  const session = requireText(options.session, "session", 200);
  if (!Array.isArray(options.digests) || options.digests.some((d) => !DIGEST.test(d))) {
    throw new TaskValidationError("digests must be 64 lowercase hex characters each", {
      location: "digests",
    });
  }
  if (!CLAIMED_STATUSES.includes(task.status)) throw new TaskNotActiveError(task.id, task.status);
  const digests = [...options.digests];
  const next: Task = {
    ...task,
    metadata: { ...task.metadata, attachment_digests: digests, attachment_session: session },
    version: task.version + 1,
    updated_at: context.now,
  };
  return {
    task: freezeTask(next),
    event: {
      type: "task.attachments",
      resource_type: "task",
      resource_id: task.id,
      actor: options.actor,
      reason: `attachments of ${session}`,
      from: task.status,
      to: task.status,
      version: next.version,
      at: context.now,
      details: { session, attachment_digests: digests },
    },
  };
}

/**
 * Refuses a change reported by `holder` (an agent on its own behalf) unless that agent still
 * holds the task. Without a holder (the orchestrator, the operator) nothing is checked.
 */
export function checkHolder(task: Task, holder: string | undefined): void {
  if (holdsClaim(task, holder)) return;
  throw new ClaimLostError(task.id, holder ?? "", task.status, task.assigned_agent);
}

/** True when no holder is named, or the named agent is the task's `assigned_agent`. */
export function holdsClaim(task: Task, holder: string | undefined): boolean {
  return holder === undefined || task.assigned_agent === holder;
}

/**
 * The event recording a refused late result: what was attempted (`done`, `progress`, …), by
 * whom, and who holds the task now. The task itself is unchanged.
 */
export function refusalEvent(
  task: Task,
  options: { actor: string; holder: string; attempted: string },
  now: string,
): TaskEvent {
  return {
    type: "task.refused",
    resource_type: "task",
    resource_id: task.id,
    actor: options.actor,
    reason: "reported by an agent that no longer holds the claim",
    from: task.status,
    to: task.status,
    version: task.version,
    at: now,
    details: {
      attempted: options.attempted,
      holder: options.holder,
      assigned_agent: task.assigned_agent,
    },
  };
}

/**
 * True when the event may have made work claimable: a task created open, a task reopened, or
 * a task closed (its dependents may now be ready). Claimers are woken on these only.
 */
export function wakesWork(event: TaskEvent): boolean {
  if (event.type === "task.created") return event.to === "open";
  return event.type === "task.transition" &&
    (event.to === "open" || event.to === DEPENDENCY_SATISFIED);
}

/** Checks the options of `releaseStaleClaims` (actor, reason, a non-negative age). */
export function checkReleaseOptions(options: {
  actor: unknown;
  reason: unknown;
  olderThanMs: unknown;
}): void {
  checkChange(options);
  if (!(typeof options.olderThanMs === "number" && options.olderThanMs >= 0)) {
    throw new TaskValidationError("olderThanMs must be a non-negative number", {
      location: "olderThanMs",
    });
  }
}

/**
 * True when a claim counts as stale at `nowMs`: claimed or in progress, and neither changed
 * (`updated_at`) nor renewed by its holder's heartbeat (`heartbeatMs`) for `olderThanMs`.
 */
export function isStaleClaim(
  task: Task,
  nowMs: number,
  olderThanMs: number,
  heartbeatMs?: number,
): boolean {
  if (!CLAIMED_STATUSES.includes(task.status)) return false;
  const active = Math.max(Date.parse(task.updated_at), heartbeatMs ?? -Infinity);
  return nowMs - active >= olderThanMs;
}

/** ISO-8601 UTC with milliseconds, the time format of task records. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString();
}
