// The PostgreSQL schema of the shared task store, versioned: every migration is a numbered
// list of statements, applied in one transaction under an advisory lock, and recorded in
// `bernstein.schema_version`. A database made by a newer bernstein is refused, naming both
// versions; an older one is upgraded by `bernstein storage migrate` (never silently).
import type { Sql } from "./_postgres.ts";
import { SchemaVersionError } from "./errors.ts";

/** The PostgreSQL schema (namespace) holding every table. */
export const PG_SCHEMA = "bernstein";

/** One schema step. */
export interface Migration {
  /** Version after this step (1, 2, …). */
  version: number;
  /** What it adds, for `storage migrate`. */
  summary: string;
  /** SQL statements, run in order in one transaction. */
  statements: readonly string[];
}

const STATUSES = "'planned','open','claimed','in_progress','done','closed','failed','blocked'," +
  "'waiting_for_subtasks','cancelled','orphaned'";

/** Every migration, oldest first. The last one's version is what this bernstein uses. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    summary: "tasks, dependencies and orchestrator ownership",
    statements: [
      `CREATE TABLE ${PG_SCHEMA}.tasks (
        namespace text NOT NULL,
        run_id text NOT NULL,
        id text NOT NULL,
        seq bigint GENERATED ALWAYS AS IDENTITY,
        status text NOT NULL CHECK (status IN (${STATUSES})),
        role text NOT NULL,
        priority integer NOT NULL,
        created_at text NOT NULL,
        updated_ms bigint NOT NULL,
        heartbeat_ms bigint,
        parent_task_id text,
        assigned_agent text,
        version integer NOT NULL CHECK (version >= 1),
        record text NOT NULL,
        PRIMARY KEY (namespace, run_id, id)
      )`,
      `CREATE INDEX tasks_ready ON ${PG_SCHEMA}.tasks (namespace, run_id, priority, created_at, seq)
        WHERE status = 'open'`,
      `CREATE INDEX tasks_by_status ON ${PG_SCHEMA}.tasks (namespace, run_id, status)`,
      `CREATE TABLE ${PG_SCHEMA}.task_deps (
        namespace text NOT NULL,
        run_id text NOT NULL,
        task_id text NOT NULL,
        dep_id text NOT NULL,
        PRIMARY KEY (namespace, run_id, task_id, dep_id)
      )`,
      `CREATE INDEX task_deps_by_dep ON ${PG_SCHEMA}.task_deps (namespace, run_id, dep_id)`,
      `CREATE TABLE ${PG_SCHEMA}.owners (
        namespace text PRIMARY KEY,
        run_id text NOT NULL,
        host text NOT NULL,
        pid integer NOT NULL,
        since text NOT NULL
      )`,
    ],
  },
];

/** The schema version this bernstein reads and writes. */
export const SCHEMA_VERSION: number = MIGRATIONS[MIGRATIONS.length - 1].version;

/** Advisory lock key serialising migrations across every host (`'bern'` + `'migr'`). */
const MIGRATION_LOCK = 0x6265726e6d696772n;

/** The version recorded in the database; 0 when bernstein never created its schema there. */
export async function readSchemaVersion(sql: Sql): Promise<number> {
  const [exists] = await sql<{ present: boolean }[]>`
    SELECT to_regclass(${`${PG_SCHEMA}.schema_version`}) IS NOT NULL AS present`;
  if (!exists.present) return 0;
  const [row] = await sql.unsafe<{ version: number | null }[]>(
    `SELECT max(version) AS version FROM ${PG_SCHEMA}.schema_version`,
  );
  return row.version ?? 0;
}

/** What {@linkcode migrate} did. */
export interface MigrationReport {
  /** Version before. */
  from: number;
  /** Version after. */
  to: number;
  /** The steps applied (empty when already current). */
  applied: { version: number; summary: string }[];
}

/**
 * Brings the database to the newest version in `migrations` (default: this bernstein's),
 * all steps in one transaction under an advisory lock, so concurrent migrations from several
 * hosts apply each step once. A database already newer is refused.
 */
export async function migrate(
  sql: Sql,
  options: { appliedBy: string; migrations?: readonly Migration[] },
): Promise<MigrationReport> {
  const migrations = options.migrations ?? MIGRATIONS;
  const target = migrations[migrations.length - 1].version;
  return await sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK.toString()}::bigint)`;
    await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${PG_SCHEMA}`);
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.schema_version (
      version integer PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now(),
      applied_by text NOT NULL
    )`);
    const [row] = await tx.unsafe<{ version: number | null }[]>(
      `SELECT max(version) AS version FROM ${PG_SCHEMA}.schema_version`,
    );
    const from = row.version ?? 0;
    if (from > target) throw new SchemaVersionError("storage.schema_too_new", from, target);
    const applied: { version: number; summary: string }[] = [];
    for (const m of migrations) {
      if (m.version <= from) continue;
      for (const statement of m.statements) await tx.unsafe(statement);
      await tx.unsafe(
        `INSERT INTO ${PG_SCHEMA}.schema_version (version, applied_by) VALUES ($1, $2)`,
        [m.version, options.appliedBy],
      );
      applied.push({ version: m.version, summary: m.summary });
    }
    return { from, to: Math.max(from, target), applied };
  });
}

/**
 * Makes sure the database can be used: a database without bernstein's schema gets it (the
 * first run creates it); the current version passes; an older one asks for
 * `bernstein storage migrate`; a newer one is refused, naming both versions.
 */
export async function ensureSchema(
  sql: Sql,
  options: { appliedBy: string; migrations?: readonly Migration[] },
): Promise<number> {
  const migrations = options.migrations ?? MIGRATIONS;
  const target = migrations[migrations.length - 1].version;
  const found = await readSchemaVersion(sql);
  if (found === target) return found;
  if (found > target) throw new SchemaVersionError("storage.schema_too_new", found, target);
  if (found > 0) throw new SchemaVersionError("storage.schema_outdated", found, target);
  return (await migrate(sql, options)).to;
}
