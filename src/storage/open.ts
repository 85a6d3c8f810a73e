// Picks and opens the task store the configuration asks for: the embedded JSONL log
// (`storage.backend: memory`), PostgreSQL (`postgres`), or PostgreSQL with Redis claim locks
// and wake-ups (`redis`). A shared store is scoped to `storage.namespace` and the run id, and
// an orchestrator holds the namespace for as long as its run lasts.
import { join } from "node:path";
import type { Config } from "../config/mod.ts";
import type { Clock, Random } from "../io/mod.ts";
import { VERSION } from "../meta/mod.ts";
import {
  type JsonlTaskStore,
  openJsonlTaskStore,
  readTaskLog,
  type Task,
  TASK_LOG_FILE,
  taskDefaults,
  type TaskEventSink,
} from "../tasks/mod.ts";
import { type ClaimLocks, pgWakeChannel, type WakeChannel } from "./_coordination.ts";
import { NamespaceHold } from "./_namespace_hold.ts";
import { connectPostgres, pgError } from "./_postgres.ts";
import { connectRedis, redisClaimLocks, redisWakeChannel } from "./_redis.ts";
import type { StoreScope } from "./_task_rows.ts";
import { type Endpoint, parseEndpoint, type UrlKey } from "./endpoint.ts";
import { StorageUrlError } from "./errors.ts";
import { ensureSchema } from "./postgres_schema.ts";
import { newestTaskId, PostgresTaskStore } from "./postgres_store.ts";
import { checkNetGrant } from "./reach.ts";

/** The namespace of a shared store when `storage.namespace` is not set. */
export const DEFAULT_NAMESPACE = "default";

/** The configuration a store is opened from, with the layer that set each key. */
export interface StorageSettings {
  /** `storage` and `tuning` of the effective configuration. */
  config: Pick<Config, "storage" | "tuning">;
  /** Layer that set each dotted key (`LoadedConfig.sources`), for messages. */
  sources?: ReadonlyMap<string, string>;
}

/** The engine endpoints a configuration names (none for the embedded store). */
export interface ConfiguredEndpoints {
  /** PostgreSQL (`postgres` and `redis` backends). */
  postgres?: Endpoint;
  /** Redis (`redis` backend). */
  redis?: Endpoint;
}

function endpointOf(settings: StorageSettings, key: UrlKey): Endpoint {
  const storage = settings.config.storage;
  const text = key === "storage.database_url" ? storage.database_url : storage.redis_url;
  const layer = settings.sources?.get(key) ?? "configuration";
  if (text === undefined) {
    throw new StorageUrlError(
      "storage.url_missing",
      `storage.backend is '${storage.backend}' (set by ${
        settings.sources?.get("storage.backend") ?? "configuration"
      }) but ${key} is not set`,
      {
        hint: key === "storage.database_url"
          ? "set storage.database_url: postgres://user:password@host:5432/database (or BERNSTEIN_DATABASE_URL)"
          : "set storage.redis_url: redis://host:6379 (or BERNSTEIN_REDIS_URL)",
      },
    );
  }
  return parseEndpoint(key === "storage.database_url" ? "postgres" : "redis", text, {
    key,
    layer,
  });
}

/**
 * The endpoints the configuration names, parsed (a missing or malformed URL is refused with
 * exit 2, naming the key and the layer).
 */
export function configuredEndpoints(settings: StorageSettings): ConfiguredEndpoints {
  const backend = settings.config.storage.backend;
  if (backend === "memory") return {};
  const postgres = endpointOf(settings, "storage.database_url");
  if (backend === "postgres") return { postgres };
  return { postgres, redis: endpointOf(settings, "storage.redis_url") };
}

/** Options of {@linkcode openTaskStore}. */
export interface OpenTaskStoreOptions extends StorageSettings {
  /** The project's `.sdd/runtime/` folder (embedded store). */
  runtimeDir: string;
  /** The run: a shared store keeps each run's tasks apart. */
  runId: string;
  /** Time source. */
  clock: Clock;
  /** Randomness for ids. */
  random: Random;
  /** Event recorder (the audit chain). */
  sink?: TaskEventSink;
  /**
   * The orchestrator opening it: holds the namespace until the store closes, so a second
   * orchestrator on the same shared store is refused (`task.store_locked`) naming the first.
   * The embedded store is always exclusive (a file lock).
   */
  owner?: { host: string; pid: number };
}

/** Any store {@linkcode openTaskStore} returns. */
export type OpenedTaskStore = JsonlTaskStore | PostgresTaskStore;

/**
 * Opens the configured store. `memory` is the embedded JSONL log at
 * `.sdd/runtime/tasks.jsonl`; `postgres` and `redis` connect (within
 * `tuning.storage.connect_timeout_s`), create the schema in a database that has none, refuse
 * one of another version, and take the namespace when `owner` is given.
 *
 * @example
 * ```ts ignore
 * const store = await openTaskStore({
 *   config, sources: loaded.sources, runtimeDir, runId, clock, random, sink,
 *   owner: { host: Deno.hostname(), pid: Deno.pid },
 * });
 * ```
 */
export async function openTaskStore(options: OpenTaskStoreOptions): Promise<OpenedTaskStore> {
  const { config } = options;
  if (config.storage.backend === "memory") {
    return await openJsonlTaskStore(join(options.runtimeDir, TASK_LOG_FILE), {
      clock: options.clock,
      random: options.random,
      sink: options.sink,
      defaults: taskDefaults(config.tuning),
      compactMinRecords: config.tuning.tasks.jsonl_compact_min_records,
    });
  }
  return await openSharedTaskStore(options);
}

/** Opens a PostgreSQL (or PostgreSQL + Redis) store; see {@linkcode openTaskStore}. */
export async function openSharedTaskStore(
  options: OpenTaskStoreOptions,
): Promise<PostgresTaskStore> {
  const { config } = options;
  const endpoints = configuredEndpoints(options);
  const pg = endpoints.postgres as Endpoint;
  checkNetGrant(pg);
  if (endpoints.redis) checkNetGrant(endpoints.redis);
  const tuning = config.tuning.storage;
  const scope: StoreScope = {
    namespace: config.storage.namespace ?? DEFAULT_NAMESPACE,
    run: options.runId,
  };
  const connection = {
    connectTimeoutS: tuning.connect_timeout_s,
    statementTimeoutMs: tuning.statement_timeout_s * 1000,
  };
  const sql = await connectPostgres(pg, { poolSize: tuning.pool_size, ...connection });
  const cleanups: (() => Promise<void>)[] = [];
  try {
    await ensureSchema(sql, { appliedBy: appliedBy(options.owner) }).catch((error) => {
      throw pgError(error, pg);
    });
    let hold: NamespaceHold | undefined;
    if (options.owner !== undefined) {
      const since = new Date(options.clock.nowMs()).toISOString();
      const owner = { ...options.owner, since };
      hold = await NamespaceHold.take(pg, connection, scope, owner, options.clock);
      const taken = hold;
      cleanups.push(() => taken.release());
    }
    let wake: WakeChannel = pgWakeChannel(sql, `${scope.namespace}/${scope.run}`);
    let claimLocks: { locks: ClaimLocks; ttlMs: number } | undefined;
    if (endpoints.redis !== undefined) {
      const redis = await connectRedis(endpoints.redis, tuning.connect_timeout_s * 1000);
      cleanups.push(async () => {
        await redis.close().catch(() => redis.destroy());
      });
      wake = redisWakeChannel(
        redis,
        endpoints.redis,
        `bernstein:work:${scope.namespace}:${scope.run}`,
      );
      claimLocks = {
        locks: redisClaimLocks(redis, endpoints.redis),
        ttlMs: tuning.claim_lock_ttl_s * 1000,
      };
    }
    const store = new PostgresTaskStore({
      backend: config.storage.backend,
      sql,
      endpoint: pg,
      scope,
      clock: options.clock,
      random: options.random,
      sink: options.sink,
      defaults: taskDefaults(config.tuning),
      wake,
      claimLocks,
      hold,
      onClose: async () => {
        for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
      },
    });
    const newest = await newestTaskId(sql, scope).catch((error) => {
      throw pgError(error, pg);
    });
    if (newest !== undefined) store.observeId(newest);
    return store;
  } catch (error) {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    await sql.end({ timeout: 1 }).catch(() => {});
    throw error;
  }
}

/**
 * Every task of a run, read without taking anything (`bernstein status` beside a running
 * orchestrator): the embedded log read as it is, or the run's rows in the shared store.
 */
export async function listRunTasks(
  settings: StorageSettings & { runtimeDir: string; runId: string; clock: Clock; random: Random },
): Promise<Task[]> {
  if (settings.config.storage.backend === "memory") {
    const log = await readTaskLog(join(settings.runtimeDir, TASK_LOG_FILE));
    return [...log.tasks.values()];
  }
  const store = await openSharedTaskStore(settings);
  try {
    return await store.list();
  } finally {
    await store.close();
  }
}

function appliedBy(owner: { host: string; pid: number } | undefined): string {
  return `bernstein ${VERSION}${owner ? ` on ${owner.host}` : ""}`;
}
