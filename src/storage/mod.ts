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
export {
  describeEndpoint,
  type Endpoint,
  type Engine,
  formatAddress,
  parseEndpoint,
  scrubSecrets,
  type TlsMode,
  type UrlKey,
  type UrlSource,
} from "./endpoint.ts";
export {
  SchemaVersionError,
  StorageAuthError,
  StorageNetDeniedError,
  StorageUnreachableError,
  StorageUrlError,
} from "./errors.ts";
export {
  type ConfiguredEndpoints,
  configuredEndpoints,
  DEFAULT_NAMESPACE,
  listRunTasks,
  type OpenedTaskStore,
  openSharedTaskStore,
  openTaskStore,
  type OpenTaskStoreOptions,
  type StorageSettings,
} from "./open.ts";
export {
  ensureSchema,
  migrate,
  type Migration,
  type MigrationReport,
  MIGRATIONS,
  PG_SCHEMA,
  readSchemaVersion,
  SCHEMA_VERSION,
} from "./postgres_schema.ts";
export { PostgresTaskStore, type PostgresTaskStoreOptions } from "./postgres_store.ts";
export { checkNetGrant, checkReachable } from "./reach.ts";
export {
  checkStorageReachable,
  migrateStorage,
  type StorageCheck,
  storageDoctor,
  type StorageMigration,
} from "./checks.ts";
