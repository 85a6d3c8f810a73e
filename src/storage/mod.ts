/**
 * Shared task stores: PostgreSQL (claims with `FOR UPDATE SKIP LOCKED`, a versioned schema, a
 * connection pool with statement timeouts) and PostgreSQL + Redis (claim locks, pub/sub
 * wake-ups), `openTaskStore` for every backend, and the checks `doctor`, `config validate`
 * and `run --dry-run` make before anything starts. URLs are parsed once; only `host:port` and
 * the password-free form ever reach output.
 *
 * @example
 * ```ts ignore
 * import { openTaskStore } from "./mod.ts";
 * const store = await openTaskStore({ config, sources, runtimeDir, runId, clock, random, sink });
 * const next = await store.claimNext("backend", { agent: "session-1" });
 * ```
 *
 * @module
 */
export { parseEndpoint, scrubSecrets, type UrlSource } from "./endpoint.ts";

export { listRunTasks, openSharedTaskStore, openTaskStore } from "./open.ts";
export {
  ensureSchema,
  migrate,
  type Migration,
  MIGRATIONS,
  readSchemaVersion,
  SCHEMA_VERSION,
} from "./postgres_schema.ts";
export { PostgresTaskStore } from "./postgres_store.ts";

export { checkStorageReachable, migrateStorage, storageDoctor } from "./checks.ts";
