// The two things a shared store needs besides rows: wake-ups that reach every process on the
// same store (PostgreSQL LISTEN/NOTIFY or Redis pub/sub), and — for `backend: redis` —
// short-lived claim locks that keep concurrent claimers off each other's candidates.
import type { Sql } from "./_postgres.ts";

/** Cross-process wake-ups of one store scope. */
export interface WakeChannel {
  /** Tells every subscriber (this process and others) that work may be ready. */
  publish(): Promise<void>;
  /** Delivers wake-ups to `listener` until the returned function is called. */
  subscribe(listener: () => void): Promise<() => Promise<void>>;
}

/** Mutual exclusion per key with an expiry, released only by the token that took it. */
export interface ClaimLocks {
  /** Takes `key` for `ttlMs` if nobody holds it; true when taken. */
  acquire(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Releases `key` if (and only if) it is still held with `token`. */
  release(key: string, token: string): Promise<void>;
}

/** The PostgreSQL channel carrying wake-ups; the payload names the scope. */
export const PG_WAKE_CHANNEL = "bernstein_work";

/** Wake-ups over LISTEN/NOTIFY (`backend: postgres`). */
export function pgWakeChannel(sql: Sql, scopeKey: string): WakeChannel {
  return {
    async publish() {
      await sql`SELECT pg_notify(${PG_WAKE_CHANNEL}, ${scopeKey})`;
    },
    async subscribe(listener) {
      const meta = await sql.listen(PG_WAKE_CHANNEL, (payload) => {
        if (payload === scopeKey) listener();
      });
      return async () => {
        await meta.unlisten();
      };
    },
  };
}
