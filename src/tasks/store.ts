// The TaskStore contract. Every backend (embedded JSONL, in-memory, PostgreSQL with
// `FOR UPDATE SKIP LOCKED`, PostgreSQL + Redis claim locks in src/storage) implements exactly
// this and passes the shared conformance suite (tests/tasks/conformance.ts).
import type { TaskStatus } from "./status.ts";
import type { Task, TaskDraft, TaskJson } from "./task.ts";

/** Who makes a change and why; every change becomes a {@linkcode TaskEvent}. */
export interface ChangeOptions {
  /** `operator`, `orchestrator`, `agent:<id>`, … */
  actor: string;
  /** Why (free text, recorded in the audit chain). */
  reason: string;
}

/** Options of {@linkcode TaskStore.create}. */
export interface CreateOptions {
  /** Who creates the task. */
  actor: string;
  /** Why; defaults to `created`. */
  reason?: string;
}

/** Filter of {@linkcode TaskStore.list}; all given conditions must hold. */
export interface TaskFilter {
  /** One status or any of several. */
  status?: TaskStatus | readonly TaskStatus[];
  /** Exact role. */
  role?: string;
  /** Children of this task (`parent_task_id`). */
  parent_task_id?: string;
  /** Only these ids. */
  ids?: readonly string[];
}

/** Options of {@linkcode TaskStore.claimNext}. */
export interface ClaimOptions extends Partial<ChangeOptions> {
  /** The agent/session that takes the task (becomes `assigned_agent`). */
  agent: string;
  /** Who claims (default: the agent). */
  actor?: string;
}

/** Options of {@linkcode TaskStore.claim}. */
export interface ClaimByIdOptions extends ClaimOptions {
  /** The version the caller read; a different current version is a conflict. */
  expectedVersion: number;
}

/** Options of {@linkcode TaskStore.transition}. */
export interface TransitionOptions extends ChangeOptions {
  /** When given, the change is refused unless the task is still at this version. */
  expectedVersion?: number;
  /** `→ claimed` only: the agent taking it. */
  agent?: string;
  /** `→ done`: the agent's summary. */
  result_summary?: string;
  /** `→ failed|blocked|cancelled|orphaned`: stored reason (default: `reason`). */
  terminal_reason?: string;
  /**
   * Keys merged into the task's `metadata` with this change (recorded in the event's details):
   * the orchestrator stamps a routed recovery step's receipt this way.
   */
  metadata?: { [key: string]: TaskJson };
  /**
   * The agent reporting this change on its own behalf (an agent token at the task server).
   * The change is refused with `task.claim_lost` — and a `task.refused` event recorded —
   * unless this agent still holds the task (`assigned_agent`): a late result from a claim
   * that expired or was released never lands.
   */
  holder?: string;
}

/** Options of {@linkcode TaskStore.progress}. */
export interface ProgressOptions {
  /** Who reports. */
  actor: string;
  /** What is happening. */
  message: string;
  /** 0–100, when known. */
  percent?: number;
  /** As in {@linkcode TransitionOptions.holder}: refused unless this agent holds the task. */
  holder?: string;
}

/** Options of {@linkcode TaskStore.heartbeat}. */
export interface HeartbeatOptions {
  /** The agent that holds the claim. */
  agent: string;
}

/** Options of {@linkcode TaskStore.stampAttachments}. */
export interface StampAttachmentsOptions {
  /** Who stamps (the orchestrator at spawn). */
  actor: string;
  /** The agent session whose prompt carried the attachments. */
  session: string;
  /** Hex SHA-256 of each attachment, in prompt order (empty: the spawn carried none). */
  digests: readonly string[];
}

/** Options of {@linkcode TaskStore.releaseStaleClaims}. */
export interface ReleaseStaleOptions extends ChangeOptions {
  /**
   * Claims with no change (`updated_at`) and no heartbeat from their holder for this long are
   * released (`tuning.orchestrator.stale_claim_timeout_s`).
   */
  olderThanMs: number;
  /** Return true to keep a claim anyway (e.g. its agent heartbeats). */
  keep?: (task: Task) => boolean;
}

/**
 * Where tasks live. All methods are safe to call concurrently: a backend serialises changes
 * so that two callers never claim the same task and version checks are atomic. A returned
 * promise resolves only after the change is durable and its event was recorded.
 *
 * @example
 * ```ts ignore
 * const task = await store.create({ title: "Add tests", role: "qa" }, { actor: "planner" });
 * const mine = await store.claimNext("qa", { agent: "session-1" });
 * await store.transition(mine!.id, "in_progress", { actor: "orchestrator", reason: "spawned" });
 * ```
 */
export interface TaskStore {
  /** Backend name (`jsonl`, `memory`, `postgres`). */
  readonly backend: string;
  /** Creates one task. `depends_on` and `parent_task_id` must name existing tasks. */
  create(draft: TaskDraft, options: CreateOptions): Promise<Task>;
  /**
   * Creates several tasks atomically (all or none), in order. Dependencies may name tasks
   * created earlier in the same batch (a plan's graph), never later ones, so no cycle exists.
   */
  createMany(drafts: readonly TaskDraft[], options: CreateOptions): Promise<Task[]>;
  /** One task, or undefined. */
  get(id: string): Promise<Task | undefined>;
  /** Tasks matching `filter` in creation order (creation time; same millisecond: order made). */
  list(filter?: TaskFilter): Promise<Task[]>;
  /**
   * Claims the best ready task of `role` (any role when undefined): status `open`, every
   * dependency closed; lowest priority number, then oldest (creation order). Undefined when
   * nothing is ready.
   */
  claimNext(role: string | undefined, options: ClaimOptions): Promise<Task | undefined>;
  /** Claims one task by id if it is still at `expectedVersion`, open and ready. */
  claim(id: string, options: ClaimByIdOptions): Promise<Task>;
  /** Moves a task to `to` if the state machine allows it (and the version matches). */
  transition(id: string, to: TaskStatus, options: TransitionOptions): Promise<Task>;
  /** Records progress of an active task (claimed or in progress); bumps `updated_at`. */
  progress(id: string, options: ProgressOptions): Promise<Task>;
  /**
   * Stamps the attachment digests of a spawn on an active task (claimed or in progress):
   * `metadata.attachment_digests` and `metadata.attachment_session`; bumps the version.
   */
  stampAttachments(id: string, options: StampAttachmentsOptions): Promise<Task>;
  /**
   * Renews the claim lease of a task held (`assigned_agent`) by `agent`: a heartbeat counts as
   * activity for {@linkcode releaseStaleClaims}. Records no event and keeps the version.
   * Throws `task.claim_lost` when the agent does not hold the task (any more).
   */
  heartbeat(id: string, options: HeartbeatOptions): Promise<void>;
  /**
   * Puts stale claims (no change and no heartbeat for `olderThanMs`) back to `open` and returns
   * the released tasks. A later result from the old holder is refused (`holder`).
   */
  releaseStaleClaims(options: ReleaseStaleOptions): Promise<Task[]>;
  /**
   * Calls `listener` after a change that may have made work ready (a task created open,
   * reopened, or closed so its dependents may start) — made by this store or, for shared
   * backends, by any other process on the same store. Idle claimers wait on this instead of
   * polling; a wake-up is a hint to call `claimNext`, never a promise that it succeeds.
   * Returns the unsubscribe function.
   */
  onWork(listener: () => void): () => void;
  /**
   * For a store an orchestrator holds through something it can lose (a shared store's
   * namespace lock lives on one database session): confirms it is still held, taking it again
   * when it went with its session and nobody else took it (`retaken`). Throws
   * `task.store_lock_lost` naming the new holder when another orchestrator has it now. Absent
   * where the hold cannot be lost while the process lives (the embedded store's file lock).
   */
  checkOwnership?(): Promise<"held" | "retaken">;
  /** Finishes pending writes and releases files/locks/connections. Idempotent. */
  close(): Promise<void>;
}
