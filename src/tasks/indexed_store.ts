// A TaskStore over an in-memory index and a pluggable journal. Every change is computed and
// applied synchronously (no await between reading and writing the index), so concurrent async
// callers are serialised by the event loop: no double claims, atomic version checks. The
// change is then made durable by the journal and its events recorded, in commit order, before
// the caller's promise resolves. Claim leases (heartbeats) live in memory only: after a restart
// the orchestrator releases every claim of the dead run anyway.
import type { Clock, Random } from "../io/mod.ts";
import { OrderedDelivery, WorkListeners } from "./delivery.ts";
import {
  ClaimLostError,
  DuplicateTaskError,
  TaskNotFoundError,
  TaskStoreUnavailableError,
  TaskValidationError,
} from "./errors.ts";
import type { TaskEventSink } from "./events.ts";
import {
  applyAttachmentStamp,
  applyProgress,
  applyTransition,
  buildTask,
  checkChange,
  checkHolder,
  checkReleaseOptions,
  checkStatus,
  compareClaimOrder,
  compareCreationOrder,
  holdsClaim,
  isoTime,
  isReady,
  isStaleClaim,
  refusalEvent,
  type TaskChange,
  type TaskDefaults,
  wakesWork,
} from "./rules.ts";
import { CLAIMED_STATUSES } from "./state_machine.ts";
import type {
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
import type { TaskStatus } from "./status.ts";
import { parseTaskDraft, type Task, type TaskDraft } from "./task.ts";
import { TaskIdGenerator } from "./task_id.ts";

/** Makes changes durable. `commit` resolves once the records survive a crash. */
export interface TaskJournal {
  /** Persists the new versions of the changed tasks atomically (all or none). */
  commit(tasks: readonly Task[]): Promise<void>;
  /** Waits for pending commits and releases resources. */
  close(): Promise<void>;
}

/** A journal that keeps nothing (the pure in-memory backend). */
export const NULL_JOURNAL: TaskJournal = {
  commit: () => Promise.resolve(),
  close: () => Promise.resolve(),
};

/** Options of {@linkcode IndexedTaskStore}. */
export interface IndexedTaskStoreOptions {
  /** Backend name reported by `backend`. */
  backend: string;
  /** Durability. */
  journal: TaskJournal;
  /** Time source for `created_at`/`updated_at` and generated ids. */
  clock: Clock;
  /** Randomness for generated ids. */
  random: Random;
  /** Receives every event after its change is durable. */
  sink?: TaskEventSink;
  /** Defaults for drafts without priority / max_retries. */
  defaults: TaskDefaults;
  /** Tasks recovered from the journal. */
  initial?: Iterable<Task>;
}

/** The index-and-journal store shared by the in-memory and JSONL backends. */
export class IndexedTaskStore implements TaskStore {
  readonly backend: string;
  readonly #journal: TaskJournal;
  readonly #clock: Clock;
  readonly #delivery: OrderedDelivery;
  readonly #work = new WorkListeners();
  readonly #defaults: TaskDefaults;
  readonly #ids: TaskIdGenerator;
  readonly #tasks = new Map<string, Task>();
  readonly #byStatus = new Map<TaskStatus, Set<string>>();
  /** Creation sequence of every id: breaks ties between tasks made in the same millisecond. */
  readonly #seq = new Map<string, number>();
  /**
   * Open tasks in claim order (priority, creation time, creation sequence — none of which ever
   * changes), so `claimNext` stops at the first ready task instead of scanning them all.
   */
  readonly #open: Task[] = [];
  /** Last heartbeat of each claim, by task id (valid while that agent holds the task). */
  readonly #leases = new Map<string, { agent: string; atMs: number }>();
  #unavailable: Error | undefined;
  #closing: Promise<void> | undefined;

  constructor(options: IndexedTaskStoreOptions) {
    this.backend = options.backend;
    this.#journal = options.journal;
    this.#clock = options.clock;
    this.#delivery = new OrderedDelivery(options.sink);
    this.#defaults = options.defaults;
    this.#ids = new TaskIdGenerator(options.clock, options.random);
    for (const task of options.initial ?? []) {
      this.#put(task);
      this.#ids.observe(task.id);
    }
  }

  /** Every task, unordered and without copying (for snapshots by the journal owner). */
  snapshot(): Task[] {
    return [...this.#tasks.values()];
  }

  /** Number of tasks. */
  get size(): number {
    return this.#tasks.size;
  }

  #order(a: Task, b: Task): number {
    return (this.#seq.get(a.id) ?? 0) - (this.#seq.get(b.id) ?? 0);
  }

  #lookup = (id: string): Task | undefined => this.#tasks.get(id);

  #claimOrder = (a: Task, b: Task): number => compareClaimOrder(a, b) || this.#order(a, b);

  /** Where `task` is, or would go, in the open list (binary search on the claim order). */
  #openIndex(task: Task): number {
    let lo = 0;
    let hi = this.#open.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.#claimOrder(this.#open[mid], task) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  #put(task: Task): void {
    const old = this.#tasks.get(task.id);
    if (old !== undefined) this.#byStatus.get(old.status)?.delete(task.id);
    else this.#seq.set(task.id, this.#seq.size);
    if (old?.status === "open") this.#open.splice(this.#openIndex(old), 1);
    if (task.status === "open") this.#open.splice(this.#openIndex(task), 0, task);
    this.#tasks.set(task.id, task);
    let set = this.#byStatus.get(task.status);
    if (set === undefined) this.#byStatus.set(task.status, set = new Set());
    set.add(task.id);
  }

  #check(): void {
    if (this.#unavailable !== undefined) {
      throw new TaskStoreUnavailableError(`task store unavailable: ${this.#unavailable.message}`, {
        cause: this.#unavailable,
      });
    }
  }

  #now(): string {
    return isoTime(this.#clock.nowMs());
  }

  #require(id: string): Task {
    const task = this.#tasks.get(id);
    if (task === undefined) throw new TaskNotFoundError(id);
    return task;
  }

  /** Applies changes to the index now, then waits for durability and event delivery. */
  async #commit(changes: readonly TaskChange[]): Promise<void> {
    for (const c of changes) this.#put(c.task);
    try {
      await this.#journal.commit(changes.map((c) => c.task));
    } catch (error) {
      // The index is now ahead of the disk: refuse everything until the store is reopened.
      this.#unavailable ??= error as Error;
      throw new TaskStoreUnavailableError(
        `could not persist the change: ${(error as Error).message}`,
        { cause: error },
      );
    }
    const events = changes.map((c) => c.event);
    if (events.some(wakesWork)) queueMicrotask(() => this.#work.notify());
    await this.#delivery.deliver(events);
  }

  /** Records the refusal of a change from an agent that lost the claim, then throws it. */
  async #refuse(task: Task, actor: string, holder: string, attempted: string): Promise<never> {
    await this.#delivery.deliver([refusalEvent(task, { actor, holder, attempted }, this.#now())]);
    throw new ClaimLostError(task.id, holder, task.status, task.assigned_agent);
  }

  async create(draft: TaskDraft, options: CreateOptions): Promise<Task> {
    const [task] = await this.createMany([draft], options);
    return task;
  }

  async createMany(drafts: readonly TaskDraft[], options: CreateOptions): Promise<Task[]> {
    this.#check();
    checkChange({ actor: options.actor, reason: options.reason ?? "created" });
    const now = this.#now();
    const batch = new Map<string, Task>();
    const lookup = (id: string) => batch.get(id) ?? this.#tasks.get(id);
    const changes: TaskChange[] = [];
    drafts.forEach((raw, i) => {
      const at = drafts.length > 1 ? `[${i}]` : "";
      const draft = parseTaskDraft(raw, drafts.length > 1 ? i : undefined);
      const id = draft.id ?? this.#ids.next();
      if (lookup(id) !== undefined) {
        throw new DuplicateTaskError(id, { location: at === "" ? "id" : `${at}.id` });
      }
      const change = buildTask(draft, {
        id,
        now,
        defaults: this.#defaults,
        lookup,
        actor: options.actor,
        at,
      });
      if (options.reason !== undefined) change.event.reason = options.reason;
      batch.set(id, change.task);
      changes.push(change);
    });
    if (changes.length === 0) return [];
    await this.#commit(changes);
    return changes.map((c) => c.task);
  }

  // deno-lint-ignore require-await
  async get(id: string): Promise<Task | undefined> {
    this.#check();
    return this.#tasks.get(id);
  }

  // deno-lint-ignore require-await
  async list(filter: TaskFilter = {}): Promise<Task[]> {
    this.#check();
    const statuses = filter.status === undefined
      ? undefined
      : (typeof filter.status === "string" ? [filter.status] : filter.status).map((s) =>
        checkStatus(s)
      );
    let candidates: Iterable<Task>;
    if (filter.ids !== undefined) {
      candidates = filter.ids.map((id) => this.#tasks.get(id)).filter((t) => t !== undefined);
    } else if (statuses !== undefined) {
      candidates = statuses.flatMap((s) =>
        [...(this.#byStatus.get(s) ?? [])].map((id) => this.#require(id))
      );
    } else {
      candidates = this.#tasks.values();
    }
    const out: Task[] = [];
    for (const t of candidates) {
      if (statuses !== undefined && !statuses.includes(t.status)) continue;
      if (filter.role !== undefined && t.role !== filter.role) continue;
      if (filter.parent_task_id !== undefined && t.parent_task_id !== filter.parent_task_id) {
        continue;
      }
      out.push(t);
    }
    return out.sort((a, b) => compareCreationOrder(a, b) || this.#order(a, b));
  }

  async claimNext(role: string | undefined, options: ClaimOptions): Promise<Task | undefined> {
    this.#check();
    const best = this.#open.find((t) =>
      (role === undefined || t.role === role) && isReady(t, this.#lookup)
    );
    if (best === undefined) return undefined;
    const change = applyTransition(best, "claimed", claimOptions(options), {
      now: this.#now(),
      lookup: this.#lookup,
    });
    await this.#commit([change]);
    return change.task;
  }

  async claim(id: string, options: ClaimByIdOptions): Promise<Task> {
    this.#check();
    if (!Number.isInteger(options.expectedVersion)) {
      throw new TaskValidationError("expectedVersion must be an integer", {
        location: "expected_version",
      });
    }
    const change = applyTransition(this.#require(id), "claimed", {
      ...claimOptions(options),
      expectedVersion: options.expectedVersion,
    }, { now: this.#now(), lookup: this.#lookup });
    await this.#commit([change]);
    return change.task;
  }

  async transition(id: string, to: TaskStatus, options: TransitionOptions): Promise<Task> {
    this.#check();
    checkChange(options);
    const task = this.#require(id);
    if (!holdsClaim(task, options.holder)) {
      await this.#refuse(task, options.actor, options.holder ?? "", to);
    }
    const change = applyTransition(task, to, options, {
      now: this.#now(),
      lookup: this.#lookup,
    });
    await this.#commit([change]);
    return change.task;
  }

  async progress(id: string, options: ProgressOptions): Promise<Task> {
    this.#check();
    const task = this.#require(id);
    if (!holdsClaim(task, options.holder)) {
      checkChange({ actor: options.actor, reason: "progress" });
      await this.#refuse(task, options.actor, options.holder ?? "", "progress");
    }
    const change = applyProgress(task, options, { now: this.#now() });
    await this.#commit([change]);
    return change.task;
  }

  async stampAttachments(id: string, options: StampAttachmentsOptions): Promise<Task> {
    this.#check();
    const change = applyAttachmentStamp(this.#require(id), options, { now: this.#now() });
    await this.#commit([change]);
    return change.task;
  }

  // deno-lint-ignore require-await
  async heartbeat(id: string, options: HeartbeatOptions): Promise<void> {
    this.#check();
    const task = this.#require(id);
    checkHolder(task, options.agent);
    this.#leases.set(id, { agent: options.agent, atMs: this.#clock.nowMs() });
  }

  #heartbeatOf(task: Task): number | undefined {
    const lease = this.#leases.get(task.id);
    return lease !== undefined && lease.agent === task.assigned_agent ? lease.atMs : undefined;
  }

  async releaseStaleClaims(options: ReleaseStaleOptions): Promise<Task[]> {
    this.#check();
    checkReleaseOptions(options);
    const nowMs = this.#clock.nowMs();
    const now = isoTime(nowMs);
    const stale: Task[] = [];
    for (const status of CLAIMED_STATUSES) {
      for (const id of this.#byStatus.get(status) ?? []) {
        const t = this.#require(id);
        if (!isStaleClaim(t, nowMs, options.olderThanMs, this.#heartbeatOf(t))) continue;
        if (options.keep?.(t) === true) continue;
        stale.push(t);
      }
    }
    stale.sort((a, b) => compareCreationOrder(a, b) || this.#order(a, b));
    const changes = stale.map((t) =>
      applyTransition(t, "open", { actor: options.actor, reason: options.reason }, {
        now,
        lookup: this.#lookup,
      })
    );
    for (const t of stale) this.#leases.delete(t.id);
    if (changes.length > 0) await this.#commit(changes);
    return changes.map((c) => c.task);
  }

  onWork(listener: () => void): () => void {
    return this.#work.add(listener);
  }

  async close(): Promise<void> {
    if (this.#closing !== undefined) return await this.#closing;
    this.#closing = (async () => {
      await this.#journal.close();
      await this.#delivery.settled();
      this.#unavailable ??= new Error("closed");
    })();
    await this.#closing;
  }
}

function claimOptions(options: ClaimOptions): TransitionOptions {
  return {
    actor: options.actor ?? `agent:${options.agent}`,
    reason: options.reason ?? "claimed",
    agent: options.agent,
  };
}
