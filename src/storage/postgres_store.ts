// The shared TaskStore: tasks in PostgreSQL, every change one transaction that locks the rows
// it reads (`FOR UPDATE`, claims with `SKIP LOCKED`) and applies the same pure rules as the
// embedded store, so two claimers — in this process or on another host — never both win.
// Changes of one store object run one at a time, so its events (the audit chain) arrive in
// commit order; reads share the pool. With `backend: redis`, Redis claim locks arbitrate
// between claimers and Redis pub/sub carries the wake-ups (see redis_store.ts).
import type { Clock, Random } from "../io/mod.ts";
import {
  applyAttachmentStamp,
  applyProgress,
  applyTransition,
  buildTask,
  checkChange,
  checkHolder,
  checkReleaseOptions,
  checkStatus,
  ClaimLostError,
  DuplicateTaskError,
  holdsClaim,
  isoTime,
  OrderedDelivery,
  type ParsedTaskDraft,
  parseTaskDraft,
  refusalEvent,
  type Task,
  type TaskChange,
  type TaskDefaults,
  type TaskDraft,
  type TaskEvent,
  type TaskEventSink,
  TaskIdGenerator,
  type TaskLookup,
  TaskNotFoundError,
  type TaskStatus,
  TaskStoreUnavailableError,
  TaskValidationError,
  VersionConflictError,
  wakesWork,
  WorkListeners,
} from "../tasks/mod.ts";
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
} from "../tasks/mod.ts";
import type { ClaimLocks, WakeChannel } from "./_coordination.ts";
import type { NamespaceHold } from "./_namespace_hold.ts";
import { pgError, type Sql, type Tx } from "./_postgres.ts";
import { rowOf, type StoreScope, taskOf } from "./_task_rows.ts";
import type { Endpoint } from "./endpoint.ts";

/** Options of {@linkcode PostgresTaskStore}. */
export interface PostgresTaskStoreOptions {
  /** `postgres` or `redis`. */
  backend: string;
  /** The pool (the store ends it on close). */
  sql: Sql;
  /** Where the pool points (messages; secrets scrubbed from driver errors). */
  endpoint: Endpoint;
  /** Namespace and run. */
  scope: StoreScope;
  /** Time source: every time in a record comes from it, never from the database. */
  clock: Clock;
  /** Randomness for ids and lock tokens. */
  random: Random;
  /** Event recorder (the audit chain). */
  sink?: TaskEventSink;
  /** Draft defaults (`tuning.tasks`). */
  defaults: TaskDefaults;
  /** Cross-process wake-ups. */
  wake: WakeChannel;
  /** Redis claim locks (`backend: redis`); without them claims use `SKIP LOCKED`. */
  claimLocks?: { locks: ClaimLocks; ttlMs: number };
  /** The namespace lock, when an orchestrator opened the store (see `checkOwnership`). */
  hold?: NamespaceHold;
  /** Runs once when the store closes, before the pool ends (other connections, locks). */
  onClose?: () => Promise<void>;
}

/** A change refused because its reporter lost the claim; recorded after the rollback. */
class Refused {
  constructor(
    readonly task: Task,
    readonly actor: string,
    readonly holder: string,
    readonly attempted: string,
  ) {}
}

/** A committed change: its result and the delivery of its events (already queued). */
interface Committed<T> {
  result: T | Refused;
  delivered: Promise<void>;
}

/** What a transaction body returns: the caller's result and the changes it made. */
interface ChangeOutcome<T> {
  result: T;
  changes: readonly TaskChange[];
}

interface LockedTask {
  task: Task;
  heartbeat: number | null;
}

/** Candidates fetched per round by Redis-arbitrated claims. */
const CLAIM_CANDIDATES = 8;

/** The PostgreSQL-backed store (also the task half of `backend: redis`). */
export class PostgresTaskStore implements TaskStore {
  readonly backend: string;
  readonly #sql: Sql;
  readonly #endpoint: Endpoint;
  readonly #scope: StoreScope;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #defaults: TaskDefaults;
  readonly #ids: TaskIdGenerator;
  readonly #delivery: OrderedDelivery;
  readonly #wake: WakeChannel;
  readonly #claimLocks: { locks: ClaimLocks; ttlMs: number } | undefined;
  readonly #onClose: (() => Promise<void>) | undefined;
  readonly #hold: NamespaceHold | undefined;
  readonly #work = new WorkListeners();
  #subscription: Promise<(() => Promise<void>) | undefined> | undefined;
  #writes: Promise<unknown> = Promise.resolve();
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(options: PostgresTaskStoreOptions) {
    this.backend = options.backend;
    this.#sql = options.sql;
    this.#endpoint = options.endpoint;
    this.#scope = options.scope;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#defaults = options.defaults;
    this.#ids = new TaskIdGenerator(options.clock, options.random);
    this.#delivery = new OrderedDelivery(options.sink);
    this.#wake = options.wake;
    this.#claimLocks = options.claimLocks;
    this.#hold = options.hold;
    this.#onClose = options.onClose;
  }

  /** Continues id generation after `id` (the newest id of the run, on open). */
  observeId(id: string): void {
    this.#ids.observe(id);
  }

  #check(): void {
    if (this.#closed) throw new TaskStoreUnavailableError("task store unavailable: closed");
  }

  /** Open, and still this orchestrator's: after the namespace went to another, reads only. */
  #checkWritable(): void {
    this.#check();
    const lost = this.#hold?.lost;
    if (lost !== undefined) throw lost;
  }

  #now(): string {
    return isoTime(this.#clock.nowMs());
  }

  /** Runs a change after every earlier change of this store object (events in commit order). */
  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#writes.then(fn);
    this.#writes = run.catch(() => {});
    return run;
  }

  async #query<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof Refused) throw error;
      throw pgError(error, this.#endpoint);
    }
  }

  /** One change, after every earlier change of this store object (events in commit order). */
  async #change<T>(body: (tx: Tx) => Promise<ChangeOutcome<T>>): Promise<T> {
    this.#check();
    return await this.#settle(await this.#serial(() => this.#commit(body)));
  }

  /**
   * Runs `body` in a transaction; after the commit its events are queued for the sink (in
   * commit order) and claimers are woken. A refusal rolls back and queues its event instead.
   * Call only inside {@linkcode #serial}.
   */
  async #commit<T>(body: (tx: Tx) => Promise<ChangeOutcome<T>>): Promise<Committed<T>> {
    this.#checkWritable();
    let outcome: ChangeOutcome<T>;
    try {
      outcome = await this.#query(() => this.#sql.begin((tx) => body(tx)));
    } catch (error) {
      if (!(error instanceof Refused)) throw error;
      const { task, actor, holder, attempted } = error;
      const event = refusalEvent(task, { actor, holder, attempted }, this.#now());
      return { result: error, delivered: this.#delivery.deliver([event]) };
    }
    const events = outcome.changes.map((c) => c.event);
    if (events.some(wakesWork)) this.#wakeUp();
    return { result: outcome.result, delivered: this.#delivery.deliver(events) };
  }

  /** Waits for the change's events; a refusal becomes `task.claim_lost`. */
  async #settle<T>(committed: Committed<T>): Promise<T> {
    await committed.delivered;
    const result = committed.result;
    if (!(result instanceof Refused)) return result;
    throw new ClaimLostError(
      result.task.id,
      result.holder,
      result.task.status,
      result.task.assigned_agent,
    );
  }

  #wakeUp(): void {
    queueMicrotask(() => this.#work.notify());
    // Other processes learn of it through the engine; a failed publish only delays them to
    // their next backstop tick, so it must not fail the change that is already committed.
    this.#wake.publish().catch(() => {});
  }

  // ---- reads ----------------------------------------------------------------------------

  async #lockTask(tx: Tx, id: string): Promise<LockedTask> {
    const s = this.#scope;
    const [row] = await tx<{ record: string; heartbeat_ms: string | null }[]>`
      SELECT record, heartbeat_ms FROM bernstein.tasks
      WHERE namespace = ${s.namespace} AND run_id = ${s.run} AND id = ${id}
      FOR UPDATE`;
    if (row === undefined) throw new TaskNotFoundError(id);
    return {
      task: taskOf(s, id, row.record),
      heartbeat: row.heartbeat_ms === null ? null : Number(row.heartbeat_ms),
    };
  }

  /** The tasks `ids` names (missing ones left out), as a lookup for the rules. */
  async #lookupOf(tx: Tx, ids: readonly string[]): Promise<TaskLookup> {
    const found = new Map<string, Task>();
    if (ids.length > 0) {
      const s = this.#scope;
      const rows = await tx<{ id: string; record: string }[]>`
        SELECT id, record FROM bernstein.tasks
        WHERE namespace = ${s.namespace} AND run_id = ${s.run} AND id = ANY(${[...ids]}::text[])`;
      for (const r of rows) found.set(r.id, taskOf(s, r.id, r.record));
    }
    return (id) => found.get(id);
  }

  async get(id: string): Promise<Task | undefined> {
    this.#check();
    const s = this.#scope;
    const rows = await this.#query(() =>
      this.#sql<{ record: string }[]>`
        SELECT record FROM bernstein.tasks
        WHERE namespace = ${s.namespace} AND run_id = ${s.run} AND id = ${id}`
    );
    return rows.length === 0 ? undefined : taskOf(s, id, rows[0].record);
  }

  async list(filter: TaskFilter = {}): Promise<Task[]> {
    this.#check();
    const statuses = filter.status === undefined
      ? null
      : (typeof filter.status === "string" ? [filter.status] : [...filter.status]).map((x) =>
        checkStatus(x)
      );
    const s = this.#scope;
    const ids = filter.ids === undefined ? null : [...filter.ids];
    const rows = await this.#query(() =>
      this.#sql<{ id: string; record: string }[]>`
        SELECT id, record FROM bernstein.tasks
        WHERE namespace = ${s.namespace} AND run_id = ${s.run}
          AND (${statuses === null} OR status = ANY(${statuses ?? []}::text[]))
          AND (${filter.role === undefined} OR role = ${filter.role ?? ""})
          AND (${filter.parent_task_id === undefined}
               OR parent_task_id = ${filter.parent_task_id ?? ""})
          AND (${ids === null} OR id = ANY(${ids ?? []}::text[]))
        ORDER BY created_at, seq`
    );
    return rows.map((r) => taskOf(s, r.id, r.record));
  }

  // ---- writes ---------------------------------------------------------------------------

  async #update(tx: Tx, before: Task, after: Task): Promise<void> {
    const s = this.#scope;
    const row = rowOf(s, after);
    const result = await tx`
      UPDATE bernstein.tasks SET
        status = ${row.status}, updated_ms = ${row.updated_ms},
        assigned_agent = ${row.assigned_agent}, version = ${row.version}, record = ${row.record},
        heartbeat_ms = CASE WHEN assigned_agent IS DISTINCT FROM ${row.assigned_agent}
                            THEN NULL ELSE heartbeat_ms END
      WHERE namespace = ${s.namespace} AND run_id = ${s.run} AND id = ${before.id}
        AND version = ${before.version}`;
    if (result.count !== 1) {
      // The row is locked by this transaction, so this means someone wrote past the lock.
      throw new VersionConflictError(before.id, before.version, -1);
    }
  }

  async create(draft: TaskDraft, options: CreateOptions): Promise<Task> {
    const [task] = await this.createMany([draft], options);
    return task;
  }

  async createMany(drafts: readonly TaskDraft[], options: CreateOptions): Promise<Task[]> {
    this.#check();
    checkChange({ actor: options.actor, reason: options.reason ?? "created" });
    // Parse every draft first (pure) so the references can be looked up in one query; a bad
    // draft is reported at its place in the batch, after the ones before it.
    const parsed: (ParsedTaskDraft | Error)[] = [];
    for (let i = 0; i < drafts.length; i++) {
      try {
        parsed.push(parseTaskDraft(drafts[i], drafts.length > 1 ? i : undefined));
      } catch (error) {
        parsed.push(error as Error);
        break;
      }
    }
    const referenced = new Set<string>();
    for (const p of parsed) {
      if (p instanceof Error) continue;
      if (p.id !== undefined) referenced.add(p.id);
      for (const d of p.depends_on) referenced.add(d);
      if (p.parent_task_id !== null) referenced.add(p.parent_task_id);
    }
    return await this.#change(async (tx) => {
      const existing = await this.#lookupOf(tx, [...referenced]);
      const now = this.#now();
      const batch = new Map<string, Task>();
      const lookup = (id: string) => batch.get(id) ?? existing(id);
      const changes: TaskChange[] = [];
      parsed.forEach((draft, i) => {
        if (draft instanceof Error) throw draft;
        const at = drafts.length > 1 ? `[${i}]` : "";
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
      if (changes.length > 0) await this.#insert(tx, changes.map((c) => c.task));
      return { result: changes.map((c) => c.task), changes };
    });
  }

  async #insert(tx: Tx, tasks: readonly Task[]): Promise<void> {
    const s = this.#scope;
    const rows = tasks.map((t) => rowOf(s, t));
    try {
      await tx`INSERT INTO bernstein.tasks ${
        tx(
          rows,
          "namespace",
          "run_id",
          "id",
          "status",
          "role",
          "priority",
          "created_at",
          "updated_ms",
          "parent_task_id",
          "assigned_agent",
          "version",
          "record",
        )
      }`;
    } catch (error) {
      // Another process created the same id between the lookup and the insert.
      const detail = (error as { code?: string; detail?: string }).detail ?? "";
      if ((error as { code?: string }).code === "23505") {
        throw new DuplicateTaskError(/\(([^()]*)\)=\(.*, ([^,()]*)\)/.exec(detail)?.[2] ?? "?");
      }
      throw error;
    }
    const deps = tasks.flatMap((t) =>
      t.depends_on.map((dep) => ({
        namespace: s.namespace,
        run_id: s.run,
        task_id: t.id,
        dep_id: dep,
      }))
    );
    if (deps.length > 0) {
      await tx`INSERT INTO bernstein.task_deps ${
        tx(deps, "namespace", "run_id", "task_id", "dep_id")
      }`;
    }
  }

  /** Claims `locked` (already locked by `tx`) for `options`, with the rules' checks. */
  async #claimLocked(
    tx: Tx,
    locked: Task,
    options: TransitionOptions,
  ): Promise<{ result: Task; changes: TaskChange[] }> {
    const lookup = await this.#lookupOf(tx, locked.depends_on);
    const change = applyTransition(locked, "claimed", options, { now: this.#now(), lookup });
    await this.#update(tx, locked, change.task);
    return { result: change.task, changes: [change] };
  }

  async claimNext(role: string | undefined, options: ClaimOptions): Promise<Task | undefined> {
    if (role !== undefined && typeof role !== "string") {
      throw new TaskValidationError("role must be a string", { location: "role" });
    }
    if (this.#claimLocks !== undefined) return await this.#claimNextLocked(role, options);
    return await this.#change(async (tx) => {
      const s = this.#scope;
      const [row] = await tx<{ id: string; record: string }[]>`
        SELECT t.id, t.record FROM bernstein.tasks t
        WHERE t.namespace = ${s.namespace} AND t.run_id = ${s.run} AND t.status = 'open'
          AND (${role === undefined} OR t.role = ${role ?? ""})
          AND NOT EXISTS (
            SELECT 1 FROM bernstein.task_deps d
            LEFT JOIN bernstein.tasks x
              ON x.namespace = d.namespace AND x.run_id = d.run_id AND x.id = d.dep_id
            WHERE d.namespace = t.namespace AND d.run_id = t.run_id AND d.task_id = t.id
              AND x.status IS DISTINCT FROM 'closed')
        ORDER BY t.priority, t.created_at, t.seq
        LIMIT 1
        FOR UPDATE OF t SKIP LOCKED`;
      if (row === undefined) return { result: undefined, changes: [] };
      return await this.#claimLocked(tx, taskOf(s, row.id, row.record), claimOptions(options));
    });
  }

  /**
   * `backend: redis`: read the best ready candidates without row locks, take a Redis lock on
   * one, then claim it in a transaction that re-checks its version; the lock is released by
   * compare-and-delete. Claimers in other processes skip locked candidates instead of queueing
   * on their rows.
   */
  async #claimNextLocked(
    role: string | undefined,
    options: ClaimOptions,
  ): Promise<Task | undefined> {
    this.#check();
    const committed = await this.#serial(async (): Promise<Committed<Task | undefined>> => {
      for (;;) {
        const candidates = await this.#readyCandidates(role);
        if (candidates.length === 0) break;
        let contended = 0;
        for (const c of candidates) {
          const outcome = await this.#claimUnderLock(c, options);
          if (outcome === "contended") contended++;
          else if (outcome !== "changed") return outcome;
        }
        // Every candidate is being claimed by someone else right now: none will be open when
        // this claimer asks again, and a wake-up follows any that is released.
        if (contended === candidates.length) break;
      }
      return { result: undefined, delivered: Promise.resolve() };
    });
    return await this.#settle(committed);
  }

  async #readyCandidates(role: string | undefined): Promise<{ id: string; version: number }[]> {
    this.#check();
    const s = this.#scope;
    return await this.#query(() =>
      this.#sql<{ id: string; version: number }[]>`
        SELECT t.id, t.version FROM bernstein.tasks t
        WHERE t.namespace = ${s.namespace} AND t.run_id = ${s.run} AND t.status = 'open'
          AND (${role === undefined} OR t.role = ${role ?? ""})
          AND NOT EXISTS (
            SELECT 1 FROM bernstein.task_deps d
            LEFT JOIN bernstein.tasks x
              ON x.namespace = d.namespace AND x.run_id = d.run_id AND x.id = d.dep_id
            WHERE d.namespace = t.namespace AND d.run_id = t.run_id AND d.task_id = t.id
              AND x.status IS DISTINCT FROM 'closed')
        ORDER BY t.priority, t.created_at, t.seq
        LIMIT ${CLAIM_CANDIDATES}`
    );
  }

  /** Takes the Redis lock of one candidate and claims it if it is still what was read. */
  async #claimUnderLock(
    candidate: { id: string; version: number },
    options: ClaimOptions,
  ): Promise<Committed<Task | undefined> | "contended" | "changed"> {
    const { locks, ttlMs } = this.#claimLocks as { locks: ClaimLocks; ttlMs: number };
    const s = this.#scope;
    const key = `bernstein:claim:${s.namespace}:${s.run}:${candidate.id}`;
    const token = Array.from(this.#random.bytes(12), (b) => b.toString(16).padStart(2, "0"))
      .join("");
    if (!(await this.#query(() => locks.acquire(key, token, ttlMs)))) return "contended";
    try {
      const committed = await this.#commit(async (tx) => {
        const locked = (await this.#lockTask(tx, candidate.id)).task;
        if (locked.status !== "open" || locked.version !== candidate.version) {
          return { result: undefined, changes: [] };
        }
        return await this.#claimLocked(tx, locked, claimOptions(options));
      });
      return committed.result === undefined ? "changed" : committed;
    } finally {
      await locks.release(key, token).catch(() => {});
    }
  }

  async claim(id: string, options: ClaimByIdOptions): Promise<Task> {
    if (!Number.isInteger(options.expectedVersion)) {
      throw new TaskValidationError("expectedVersion must be an integer", {
        location: "expected_version",
      });
    }
    return await this.#change(async (tx) => {
      const locked = (await this.#lockTask(tx, id)).task;
      return await this.#claimLocked(tx, locked, {
        ...claimOptions(options),
        expectedVersion: options.expectedVersion,
      });
    });
  }

  async transition(id: string, to: TaskStatus, options: TransitionOptions): Promise<Task> {
    this.#check();
    checkChange(options);
    return await this.#change(async (tx) => {
      const { task } = await this.#lockTask(tx, id);
      if (!holdsClaim(task, options.holder)) {
        throw new Refused(task, options.actor, options.holder ?? "", to);
      }
      const lookup = to === "claimed" ? await this.#lookupOf(tx, task.depends_on) : () => undefined;
      const change = applyTransition(task, to, options, { now: this.#now(), lookup });
      await this.#update(tx, task, change.task);
      return { result: change.task, changes: [change] };
    });
  }

  async progress(id: string, options: ProgressOptions): Promise<Task> {
    this.#check();
    return await this.#change(async (tx) => {
      const { task } = await this.#lockTask(tx, id);
      if (!holdsClaim(task, options.holder)) {
        checkChange({ actor: options.actor, reason: "progress" });
        throw new Refused(task, options.actor, options.holder ?? "", "progress");
      }
      const change = applyProgress(task, options, { now: this.#now() });
      await this.#update(tx, task, change.task);
      return { result: change.task, changes: [change] };
    });
  }

  async stampAttachments(id: string, options: StampAttachmentsOptions): Promise<Task> {
    return await this.#change(async (tx) => {
      const { task } = await this.#lockTask(tx, id);
      const change = applyAttachmentStamp(task, options, { now: this.#now() });
      await this.#update(tx, task, change.task);
      return { result: change.task, changes: [change] };
    });
  }

  async heartbeat(id: string, options: HeartbeatOptions): Promise<void> {
    this.#checkWritable();
    const s = this.#scope;
    const now = this.#clock.nowMs();
    const renewed = await this.#query(() =>
      this.#sql`
        UPDATE bernstein.tasks SET heartbeat_ms = ${now}
        WHERE namespace = ${s.namespace} AND run_id = ${s.run} AND id = ${id}
          AND assigned_agent = ${options.agent}`
    );
    if (renewed.count === 1) return;
    const task = await this.get(id);
    if (task === undefined) throw new TaskNotFoundError(id);
    checkHolder(task, options.agent);
  }

  async releaseStaleClaims(options: ReleaseStaleOptions): Promise<Task[]> {
    this.#check();
    checkReleaseOptions(options);
    return await this.#change(async (tx) => {
      const s = this.#scope;
      const nowMs = this.#clock.nowMs();
      const cutoff = nowMs - options.olderThanMs;
      const rows = await tx<{ id: string; record: string }[]>`
        SELECT id, record FROM bernstein.tasks
        WHERE namespace = ${s.namespace} AND run_id = ${s.run}
          AND status IN ('claimed', 'in_progress')
          AND GREATEST(updated_ms, COALESCE(heartbeat_ms, updated_ms)) <= ${cutoff}
        ORDER BY created_at, seq
        FOR UPDATE SKIP LOCKED`;
      const now = isoTime(nowMs);
      const changes: TaskChange[] = [];
      for (const r of rows) {
        const task = taskOf(s, r.id, r.record);
        if (options.keep?.(task) === true) continue;
        const change = applyTransition(task, "open", {
          actor: options.actor,
          reason: options.reason,
        }, { now, lookup: () => undefined });
        await this.#update(tx, task, change.task);
        changes.push(change);
      }
      return { result: changes.map((c) => c.task), changes };
    });
  }

  onWork(listener: () => void): () => void {
    const unsubscribe = this.#work.add(listener);
    this.#subscription ??= this.#wake.subscribe(() => this.#work.notify()).catch(() => undefined);
    return () => {
      unsubscribe();
      if (this.#work.size > 0 || this.#subscription === undefined) return;
      const stopping = this.#subscription;
      this.#subscription = undefined;
      stopping.then((stop) => stop?.()).catch(() => {});
    };
  }

  /**
   * Resolves once wake-ups from other processes reach this store's `onWork` listeners (true),
   * or false when there is no listener or the subscription failed (claimers then fall back to
   * their backstop tick).
   */
  async listening(): Promise<boolean> {
    return (await this.#subscription) !== undefined;
  }

  /**
   * The namespace lock is still this orchestrator's (taken again after a lost session when
   * nobody else took it); `task.store_lock_lost` when another orchestrator has it. A store
   * opened without an owner (a worker's, `status`) holds nothing and is always `held`.
   */
  async checkOwnership(): Promise<"held" | "retaken"> {
    if (this.#hold === undefined || this.#closed) return "held";
    return await this.#hold.check();
  }

  close(): Promise<void> {
    this.#closing ??= (async () => {
      await this.#writes;
      this.#closed = true;
      const stop = await this.#subscription;
      await stop?.().catch(() => {});
      await this.#onClose?.().catch(() => {});
      await this.#sql.end({ timeout: 5 }).catch(() => {});
      await this.#delivery.settled();
    })();
    return this.#closing;
  }
}

function claimOptions(options: ClaimOptions): TransitionOptions {
  return {
    actor: options.actor ?? `agent:${options.agent}`,
    reason: options.reason ?? "claimed",
    agent: options.agent,
  };
}

/** The newest generated id of a run (ids keep increasing after a reopen). */
export async function newestTaskId(sql: Sql, scope: StoreScope): Promise<string | undefined> {
  const [row] = await sql<{ id: string }[]>`
    SELECT id FROM bernstein.tasks
    WHERE namespace = ${scope.namespace} AND run_id = ${scope.run} AND id LIKE 't-%'
    ORDER BY id DESC LIMIT 1`;
  return row?.id;
}

export type { TaskEvent };
