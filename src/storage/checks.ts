// What the CLI asks of the configured engines without opening a task store: the preflight of
// `config validate` and `run` (is every URL well-formed, allowed and answering?), the rows of
// `bernstein doctor` (version, latency, schema version), and `bernstein storage migrate`.
import { VERSION } from "../meta/mod.ts";
import { connectPostgres, pgError, type Sql } from "./_postgres.ts";
import { connectRedis, redisError } from "./_redis.ts";
import type { Endpoint } from "./endpoint.ts";
import { configuredEndpoints, type StorageSettings } from "./open.ts";
import {
  migrate,
  type MigrationReport,
  readSchemaVersion,
  SCHEMA_VERSION,
} from "./postgres_schema.ts";
import { checkNetGrant, checkReachable } from "./reach.ts";

/**
 * Refuses, before anything starts, a configuration whose storage URLs are missing, malformed,
 * outside the network grant or not answering (one line naming the key, the layer and
 * `host:port`; exit 2). The embedded store needs nothing.
 */
export async function checkStorageReachable(settings: StorageSettings): Promise<void> {
  const endpoints = configuredEndpoints(settings);
  const timeoutMs = settings.config.tuning.storage.connect_timeout_s * 1000;
  for (const endpoint of [endpoints.postgres, endpoints.redis]) {
    if (endpoint !== undefined) await checkReachable(endpoint, timeoutMs);
  }
}

/** One `bernstein doctor` row (the shape of the orchestrator's `DoctorCheck`). */
export interface StorageCheck {
  /** `storage`, `postgres`, `redis`. */
  name: string;
  /** Verdict. */
  status: "OK" | "WARN" | "FAIL";
  /** What was found (never a password). */
  detail: string;
  /** How to fix it. */
  hint?: string;
}

/** Median of a few round trips, in milliseconds with one decimal. */
async function latency(roundTrip: () => Promise<unknown>): Promise<string> {
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    await roundTrip();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return `${samples[2].toFixed(1)} ms`;
}

function failed(name: string, error: unknown): StorageCheck {
  const e = error as { message?: string; hint?: string };
  return { name, status: "FAIL", detail: e.message ?? String(error), hint: e.hint };
}

function poolOf(settings: StorageSettings, endpoint: Endpoint): Promise<Sql> {
  const tuning = settings.config.tuning.storage;
  return connectPostgres(endpoint, {
    poolSize: 1,
    connectTimeoutS: tuning.connect_timeout_s,
    statementTimeoutMs: tuning.statement_timeout_s * 1000,
  });
}

async function postgresCheck(
  settings: StorageSettings,
  endpoint: Endpoint,
): Promise<StorageCheck[]> {
  try {
    checkNetGrant(endpoint);
  } catch (error) {
    return [failed("postgres", error)];
  }
  const sql = await poolOf(settings, endpoint);
  try {
    const [{ server_version }] = await sql<{ server_version: string }[]>`SHOW server_version`;
    const took = await latency(() => sql`SELECT 1`);
    const schema = await readSchemaVersion(sql);
    const where = `${endpoint.address}/${endpoint.database}`;
    const rows: StorageCheck[] = [{
      name: "postgres",
      status: "OK",
      detail: `PostgreSQL ${server_version.split(" ")[0]} at ${where}, latency ${took}`,
    }];
    if (schema === SCHEMA_VERSION) {
      rows.push({ name: "schema", status: "OK", detail: `version ${schema} (current)` });
    } else if (schema === 0) {
      rows.push({
        name: "schema",
        status: "WARN",
        detail: "no bernstein schema in this database yet",
        hint: "the first run creates it, or run 'bernstein storage migrate' now",
      });
    } else if (schema > SCHEMA_VERSION) {
      rows.push({
        name: "schema",
        status: "FAIL",
        detail: `version ${schema}, newer than this bernstein supports (version ${SCHEMA_VERSION})`,
        hint: "upgrade bernstein on this host",
      });
    } else {
      rows.push({
        name: "schema",
        status: "FAIL",
        detail: `version ${schema}; this bernstein needs version ${SCHEMA_VERSION}`,
        hint: "run 'bernstein storage migrate'",
      });
    }
    return rows;
  } catch (error) {
    return [failed("postgres", pgError(error, endpoint))];
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

async function redisCheck(settings: StorageSettings, endpoint: Endpoint): Promise<StorageCheck> {
  try {
    checkNetGrant(endpoint);
    const client = await connectRedis(
      endpoint,
      settings.config.tuning.storage.connect_timeout_s * 1000,
    );
    try {
      const info = await client.info("server");
      const version = /redis_version:(\S+)/.exec(info)?.[1] ?? "?";
      const took = await latency(() => client.ping());
      return {
        name: "redis",
        status: "OK",
        detail: `Redis ${version} at ${endpoint.address}/${endpoint.database}, latency ${took}`,
      };
    } catch (error) {
      return failed("redis", redisError(error, endpoint));
    } finally {
      client.destroy();
    }
  } catch (error) {
    return failed("redis", error);
  }
}

/**
 * The storage rows of `bernstein doctor`: the backend, then per configured engine its version,
 * address, median round-trip latency and (PostgreSQL) schema version. Never throws.
 */
export async function storageDoctor(settings: StorageSettings): Promise<StorageCheck[]> {
  const backend = settings.config.storage.backend;
  if (backend === "memory") {
    return [{
      name: "storage",
      status: "OK",
      detail: "embedded JSONL task store (.sdd/runtime/tasks.jsonl)",
    }];
  }
  let endpoints;
  try {
    endpoints = configuredEndpoints(settings);
  } catch (error) {
    return [failed("storage", error)];
  }
  const rows: StorageCheck[] = [{
    name: "storage",
    status: "OK",
    detail: backend === "postgres"
      ? "PostgreSQL task store"
      : "PostgreSQL task store with Redis claim locks and wake-ups",
  }];
  if (endpoints.postgres) rows.push(...await postgresCheck(settings, endpoints.postgres));
  if (endpoints.redis) rows.push(await redisCheck(settings, endpoints.redis));
  return rows;
}

/** What `bernstein storage migrate` did. */
export interface StorageMigration extends MigrationReport {
  /** `host:port/database` of the migrated database. */
  database: string;
}

/**
 * Brings the configured PostgreSQL database to this bernstein's schema version (see
 * `migrate`). Undefined for the embedded store, which has no schema.
 */
export async function migrateStorage(
  settings: StorageSettings,
  host: string,
): Promise<StorageMigration | undefined> {
  const endpoint = configuredEndpoints(settings).postgres;
  if (endpoint === undefined) return undefined;
  await checkReachable(endpoint, settings.config.tuning.storage.connect_timeout_s * 1000);
  const sql = await poolOf(settings, endpoint);
  try {
    const report = await migrate(sql, { appliedBy: `bernstein ${VERSION} on ${host}` });
    return { ...report, database: `${endpoint.address}/${endpoint.database}` };
  } catch (error) {
    throw pgError(error, endpoint);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}
