// The PostgreSQL driver (npm `postgres`) behind one factory: options given explicitly (and the
// `bernstein` permission set ignores PG* variables, which the driver would otherwise read as
// defaults), a statement timeout on every connection,
// a bounded pool, and one mapping from driver failures to bernstein errors that never carry
// the password. The driver is loaded when a pool is opened: evaluating it (with node:tls and
// node:net) cost every bernstein command ~60 ms of CPU, while only `backend: postgres` uses it.
import type postgres from "postgres";
import { BernsteinError } from "../errors/mod.ts";
import { TaskStoreUnavailableError } from "../tasks/mod.ts";
import { type Endpoint, scrubSecrets } from "./endpoint.ts";
import { StorageAuthError } from "./errors.ts";
import { unreachable } from "./reach.ts";

/** A connection pool (tagged-template queries; `begin` for transactions). */
export type Sql = postgres.Sql;

/** A transaction handle inside `sql.begin`. */
export type Tx = postgres.TransactionSql;

/** Pool settings (from `tuning.storage`). */
export interface PgPoolOptions {
  /** Connections in the pool. */
  poolSize: number;
  /** Connect deadline in seconds. */
  connectTimeoutS: number;
  /** Server-side statement timeout in milliseconds. */
  statementTimeoutMs: number;
  /**
   * Keep each connection (its session) until the pool ends: no idle timeout, no recycling
   * after a lifetime. For a session that holds a lock; a pool's connections are otherwise
   * closed after 60 s idle and recycled after 30-60 min, which would free the lock.
   */
  keepSessions?: boolean;
}

const SSL: Record<Endpoint["tls"], false | "prefer" | "require" | "verify-full"> = {
  disable: false,
  prefer: "prefer",
  require: "require",
  "verify-full": "verify-full",
};

/** Opens a pool to `endpoint` (connections are made lazily, on the first query). */
export async function connectPostgres(endpoint: Endpoint, options: PgPoolOptions): Promise<Sql> {
  const timeout = Math.max(1, Math.round(options.statementTimeoutMs));
  const { default: postgres } = await import("postgres");
  return postgres({
    host: endpoint.host,
    port: endpoint.port,
    user: endpoint.user ?? "postgres",
    password: endpoint.password ?? "",
    database: endpoint.database,
    ssl: SSL[endpoint.tls],
    max: options.poolSize,
    connect_timeout: options.connectTimeoutS,
    idle_timeout: options.keepSessions ? 0 : 60,
    max_lifetime: options.keepSessions ? 0 : 30 * 60,
    keep_alive: 60,
    backoff: (attempt: number) => Math.min(0.05 * 2 ** attempt, 2),
    prepare: true,
    debug: false,
    fetch_types: true,
    publications: "alltables",
    onnotice: () => {},
    connection: {
      application_name: "bernstein",
      statement_timeout: timeout,
      // A transaction left open by a hung client must not hold its row locks for ever.
      idle_in_transaction_session_timeout: Math.max(timeout * 3, 30_000),
    },
  });
}

interface DriverFailure {
  code?: unknown;
  message?: unknown;
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "CONNECT_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);

/**
 * A driver failure as a bernstein error: credentials or database refused → `storage.auth_failed`;
 * no connection → `storage.unreachable`; anything else (statement timeout, server shutdown) →
 * `task.store_unavailable`. Bernstein errors (the task rules) pass through unchanged.
 */
export function pgError(error: unknown, endpoint: Endpoint): Error {
  if (error instanceof BernsteinError) return error;
  const failure = (typeof error === "object" && error !== null ? error : {}) as DriverFailure;
  const code = typeof failure.code === "string" ? failure.code : "";
  const message = scrubSecrets(
    typeof failure.message === "string" ? failure.message : String(error),
    endpoint,
  ).split("\n")[0].slice(0, 300);
  if (code === "28P01" || code === "28000" || code === "3D000" || code === "42501") {
    return new StorageAuthError(
      `${endpoint.source.key} (set by ${endpoint.source.layer}): PostgreSQL at ${endpoint.address} refused: ${message}`,
      {},
    );
  }
  if (UNREACHABLE.has(code)) return unreachable(endpoint, message);
  if (code === "57014") {
    return new TaskStoreUnavailableError(
      `PostgreSQL at ${endpoint.address}: statement timed out (tuning.storage.statement_timeout_s)`,
    );
  }
  return new TaskStoreUnavailableError(`PostgreSQL at ${endpoint.address}: ${message}`);
}
