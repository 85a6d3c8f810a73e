// Errors of the task store: validation, unknown tasks, illegal transitions, version conflicts,
// unfinished dependencies, lost claims and locks, each with its stable code.

import { ATTACH_INVALID_ALIASES } from "../plan/mod.ts";
import { BernsteinError, type BernsteinErrorOptions } from "../errors/mod.ts";
import type { TaskStatus } from "./status.ts";

/** A task draft, filter or option failed validation; `location` is the field path. */
export class TaskValidationError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("task.invalid", message, { exitCode: 2, ...options });
  }
}

/**
 * A task's declared attachments break the attachment rules (`attach.invalid`, the agent-core
 * design's `config.user_attachment_invalid`); `location` is the field path
 * (`attachments[3].image.mime`).
 */
export class TaskAttachmentInvalidError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("attach.invalid", message, {
      exitCode: 2,
      aliases: ATTACH_INVALID_ALIASES,
      ...options,
    });
  }
}

/** No task has this id. */
export class TaskNotFoundError extends BernsteinError {
  /** The id that was asked for. */
  readonly taskId: string;

  constructor(taskId: string) {
    super("task.not_found", `no task with id '${taskId}'`);
    this.taskId = taskId;
  }
}

/** A task with this id already exists (create with an explicit id). */
export class DuplicateTaskError extends BernsteinError {
  constructor(taskId: string, options: BernsteinErrorOptions = {}) {
    super("task.duplicate_id", `a task with id '${taskId}' already exists`, options);
  }
}

/** `depends_on` or `parent_task_id` names a task that does not exist. */
export class UnknownTaskReferenceError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("task.unknown_reference", message, options);
  }
}

/** The state machine does not allow `from → to`. */
export class IllegalTransitionError extends BernsteinError {
  /** Current status. */
  readonly from: TaskStatus;
  /** Requested status. */
  readonly to: TaskStatus;

  constructor(taskId: string, from: TaskStatus, to: TaskStatus, allowed: readonly TaskStatus[]) {
    super("task.illegal_transition", `task '${taskId}' cannot go from ${from} to ${to}`, {
      hint: allowed.length === 0
        ? `${from} is final`
        : `from ${from} it can go to ${allowed.join(", ")}`,
    });
    this.from = from;
    this.to = to;
  }
}

/** Optimistic concurrency: the caller's `expectedVersion` is not the task's version. */
export class VersionConflictError extends BernsteinError {
  /** The version the caller expected. */
  readonly expected: number;
  /** The task's current version. */
  readonly actual: number;

  constructor(taskId: string, expected: number, actual: number) {
    super(
      "task.version_conflict",
      `task '${taskId}' is at version ${actual}, not ${expected} (it changed since it was read)`,
      { hint: "read the task again and retry" },
    );
    this.expected = expected;
    this.actual = actual;
  }
}

/** A claim of a task whose dependencies are not all closed. */
export class DependenciesUnfinishedError extends BernsteinError {
  /** Ids of the dependencies that are not closed yet. */
  readonly pending: readonly string[];

  constructor(taskId: string, pending: readonly string[]) {
    super(
      "task.dependencies_unfinished",
      `task '${taskId}' waits for ${pending.length} unfinished dependenc${
        pending.length === 1 ? "y" : "ies"
      }: ${pending.join(", ")}`,
    );
    this.pending = pending;
  }
}

/** A retry (failed → open) of a task that used all of its `max_retries`. */
export class RetriesExhaustedError extends BernsteinError {
  constructor(taskId: string, maxRetries: number) {
    super(
      "task.retries_exhausted",
      `task '${taskId}' has used all ${maxRetries} retr${maxRetries === 1 ? "y" : "ies"}`,
    );
  }
}

/**
 * A result, progress report or heartbeat from an agent that no longer holds the task's claim
 * (it expired or was released, and the task may be running elsewhere). Answered with 409.
 */
export class ClaimLostError extends BernsteinError {
  /** The agent that reported. */
  readonly holder: string;
  /** The agent holding the task now, or null. */
  readonly assignedAgent: string | null;

  constructor(taskId: string, holder: string, status: TaskStatus, assignedAgent: string | null) {
    super(
      "task.claim_lost",
      `agent '${holder}' does not hold task '${taskId}' (it is ${status}${
        assignedAgent === null ? "" : `, held by '${assignedAgent}'`
      })`,
      { hint: "the claim expired or was released; stop working on it: this result is refused" },
    );
    this.holder = holder;
    this.assignedAgent = assignedAgent;
  }
}

/** Progress reported for a task that is not being worked on. */
export class TaskNotActiveError extends BernsteinError {
  constructor(taskId: string, status: TaskStatus) {
    super("task.not_active", `task '${taskId}' is ${status}, not being worked on`);
  }
}

/** The task log holds a record that is not a valid task (not a torn tail: real damage). */
export class TaskLogCorruptError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("task.log_corrupt", message, options);
  }
}

/** Another process has the task store open. */
export class TaskStoreLockedError extends BernsteinError {
  /** `holder`: who has it, when known (`run …, host …, pid …, since …`). */
  constructor(path: string, holder?: string) {
    super(
      "task.store_locked",
      `the task store ${path} is open in another process${holder ? ` (${holder})` : ""}`,
      { hint: "only one orchestrator may own a task store; stop the other run first" },
    );
  }
}

/**
 * The orchestrator no longer holds its shared store: the namespace lock went with its database
 * session (a restart, a cut connection) and another orchestrator took it meanwhile.
 */
export class TaskStoreLockLostError extends BernsteinError {
  /** `holder`: who has it now, when known (`run …, host …, pid …, since …`). */
  constructor(path: string, holder?: string) {
    super(
      "task.store_lock_lost",
      `this orchestrator lost the task store ${path}: another orchestrator holds it now${
        holder ? ` (${holder})` : ""
      }`,
      { hint: "this run stops its agents and ends; run it again once the other run is done" },
    );
  }
}

/**
 * A write to the task store failed (disk full, I/O error) or the store was closed. The
 * in-memory index may be ahead of the disk, so every later call fails until it is reopened.
 */
export class TaskStoreUnavailableError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("task.store_unavailable", message, options);
  }
}

/** The change is durable but the event recorder (audit chain) refused its event. */
export class TaskEventNotRecordedError extends BernsteinError {
  constructor(message: string, options: BernsteinErrorOptions = {}) {
    super("task.event_not_recorded", message, options);
  }
}

/** An orchestrator hold was not found (or already released / expired). */
export class HoldNotFoundError extends BernsteinError {
  constructor(holdId: string) {
    super("hold.not_found", `no active hold with id '${holdId}'`);
  }
}
