// One orchestrator per namespace of a shared store: a session advisory lock on a connection
// of its own, and a row in bernstein.owners saying who holds it. The lock lives exactly as long
// as that database session, so a server restart, a cut connection or an administrator's
// pg_terminate_backend frees it while the orchestrator runs on. `check()` notices: it takes the
// lock again when nobody else did (a blip), and refuses — naming the new holder — when another
// orchestrator has it now. Once lost, nothing here writes again (the owners row is the other
// orchestrator's).
//
// The lock's connection is a one-connection client of its own (no idle timeout, no recycling),
// never a reserved connection of the store's pool: postgres 3.4 crashes the process (a write to
// a closed socket, thrown outside any promise) when a reserved connection whose session ended
// is used or goes back to the pool. A one-connection client reconnects instead: the new session
// simply does not hold the lock, which the check sees by the holder's backend pid and start time.
import type { Clock } from "../io/mod.ts";
import { TaskStoreLockedError, TaskStoreLockLostError } from "../tasks/mod.ts";
import { connectPostgres, pgError, type PgPoolOptions, type Sql } from "./_postgres.ts";
import type { StoreScope } from "./_task_rows.ts";
import type { Endpoint } from "./endpoint.ts";

/** Who holds a namespace. */
export interface NamespaceOwner {
  /** Host name. */
  host: string;
  /** Process id. */
  pid: number;
  /** When it took the namespace (ISO time). */
  since: string;
}

/** What {@linkcode NamespaceHold.check} found: still held, or held again after a loss. */
export type OwnershipCheck = "held" | "retaken";

/** A row of bernstein.owners. */
interface OwnerRow {
  run_id: string;
  host: string;
  pid: number;
  since: string;
}

/** The database session holding the lock. */
interface LockSession {
  pid: number;
  start: string;
}

/** Checks closer together than this reuse the last answer (a tick may run many times a second). */
const CHECK_EVERY_MS = 1000;

/** The namespace lock of one orchestrator. */
export class NamespaceHold {
  readonly #sql: Sql;
  readonly #endpoint: Endpoint;
  readonly #scope: StoreScope;
  readonly #owner: NamespaceOwner;
  readonly #clock: Clock;
  readonly #key: string;
  #session: LockSession | undefined;
  #lost: TaskStoreLockLostError | undefined;
  #checkedMs = Number.NEGATIVE_INFINITY;
  #checking: Promise<OwnershipCheck> | undefined;

  private constructor(
    sql: Sql,
    endpoint: Endpoint,
    scope: StoreScope,
    owner: NamespaceOwner,
    clock: Clock,
  ) {
    this.#sql = sql;
    this.#endpoint = endpoint;
    this.#scope = scope;
    this.#owner = owner;
    this.#clock = clock;
    this.#key = `bernstein:namespace:${scope.namespace}`;
  }

  /** Takes the namespace, or refuses (`task.store_locked`) naming who has it. */
  static async take(
    endpoint: Endpoint,
    pool: Omit<PgPoolOptions, "poolSize" | "keepSessions">,
    scope: StoreScope,
    owner: NamespaceOwner,
    clock: Clock,
  ): Promise<NamespaceHold> {
    const sql = await connectPostgres(endpoint, { ...pool, poolSize: 1, keepSessions: true });
    const hold = new NamespaceHold(sql, endpoint, scope, owner, clock);
    try {
      const holder = await hold.#acquire();
      if (holder !== "taken") throw new TaskStoreLockedError(hold.#where(), describe(holder));
    } catch (error) {
      await sql.end({ timeout: 1 }).catch(() => {});
      throw error;
    }
    hold.#checkedMs = clock.monotonicMs();
    return hold;
  }

  /** Why writes are refused: another orchestrator took the namespace (once seen, for good). */
  get lost(): TaskStoreLockLostError | undefined {
    return this.#lost;
  }

  /**
   * Confirms the lock is still held; takes it again when its session ended and nobody else
   * took it. Throws `task.store_lock_lost` when another orchestrator holds it now (and every
   * later call), `task.store_unavailable` when the server cannot be asked.
   */
  check(): Promise<OwnershipCheck> {
    if (this.#lost !== undefined) return Promise.reject(this.#lost);
    if (this.#clock.monotonicMs() - this.#checkedMs < CHECK_EVERY_MS) {
      return this.#checking ?? Promise.resolve("held");
    }
    this.#checking ??= this.#check().finally(() => {
      this.#checkedMs = this.#clock.monotonicMs();
      this.#checking = undefined;
    });
    return this.#checking;
  }

  /** Gives the namespace back (only while it is this orchestrator's) and disconnects. */
  async release(): Promise<void> {
    try {
      if (this.#lost === undefined && await this.#stillHeld().catch(() => false)) {
        await this.#sql`
          DELETE FROM bernstein.owners WHERE namespace = ${this.#scope.namespace}
            AND run_id = ${this.#scope.run} AND host = ${this.#owner.host}
            AND pid = ${this.#owner.pid}`;
        await this.#sql`SELECT pg_advisory_unlock(hashtextextended(${this.#key}, 0))`;
      }
    } finally {
      this.#session = undefined;
      await this.#sql.end({ timeout: 5 }).catch(() => {});
    }
  }

  async #check(): Promise<OwnershipCheck> {
    if (await this.#stillHeld()) return "held";
    this.#session = undefined;
    // Once more when the first try meets the old connection failing (the client reconnects).
    const holder = await this.#acquire().catch(() => this.#acquire());
    if (holder === "taken") return "retaken";
    // Still held by this orchestrator's own old session (the server has not noticed the cut
    // connection yet): nobody else can take it either; asked again at the next check.
    if (holder !== undefined && this.#isMine(holder)) return "held";
    this.#lost = new TaskStoreLockLostError(this.#where(), describe(holder));
    throw this.#lost;
  }

  /**
   * True when the session that took the lock (its backend pid and start time, so a recycled
   * pid is not taken for it) still holds it.
   */
  async #stillHeld(): Promise<boolean> {
    const session = this.#session;
    if (session === undefined) return false;
    try {
      const [row] = await this.#sql<{ held: boolean }[]>`
        SELECT EXISTS (
          SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
            AND ((l.classid::bigint << 32) | l.objid::bigint) = hashtextextended(${this.#key}, 0)
            AND l.pid = ${session.pid} AND a.backend_start::text = ${session.start}
        ) AS held`;
      return row.held;
    } catch {
      // The lock's connection failed under the query (closed, reset): that session is gone, or
      // cannot vouch for itself. Taking the lock again answers: on a fresh session it is taken
      // or refused; with the server down it fails as unavailable.
      return false;
    }
  }

  /** Takes the lock (on the session the client has now); else who holds it (when recorded). */
  async #acquire(): Promise<"taken" | OwnerRow | undefined> {
    try {
      const [lock] = await this.#sql<{ taken: boolean; pid: number; start: string }[]>`
        SELECT pg_try_advisory_lock(hashtextextended(${this.#key}, 0)) AS taken,
          pg_backend_pid() AS pid,
          (SELECT backend_start::text FROM pg_stat_activity WHERE pid = pg_backend_pid()) AS start`;
      if (!lock.taken) return await this.#holder();
      const { namespace, run } = this.#scope;
      const { host, pid, since } = this.#owner;
      await this.#sql`
        INSERT INTO bernstein.owners (namespace, run_id, host, pid, since)
        VALUES (${namespace}, ${run}, ${host}, ${pid}, ${since})
        ON CONFLICT (namespace) DO UPDATE SET run_id = EXCLUDED.run_id, host = EXCLUDED.host,
          pid = EXCLUDED.pid, since = EXCLUDED.since`;
      this.#session = { pid: lock.pid, start: lock.start };
      return "taken";
    } catch (error) {
      throw pgError(error, this.#endpoint);
    }
  }

  async #holder(): Promise<OwnerRow | undefined> {
    const [holder] = await this.#sql<OwnerRow[]>`
      SELECT run_id, host, pid, since FROM bernstein.owners
      WHERE namespace = ${this.#scope.namespace}`;
    return holder;
  }

  #isMine(row: OwnerRow): boolean {
    return row.run_id === this.#scope.run && row.host === this.#owner.host &&
      row.pid === this.#owner.pid;
  }

  #where(): string {
    return `${this.#endpoint.shown} (namespace ${this.#scope.namespace})`;
  }
}

function describe(row: OwnerRow | undefined): string | undefined {
  return row === undefined
    ? undefined
    : `run ${row.run_id} on ${row.host}, pid ${row.pid}, since ${row.since}`;
}
