// Opens shared stores (PostgreSQL, PostgreSQL + Redis) on the throw-away servers for tests:
// every store gets a namespace of its own, so tests never see each other's tasks.
import { DEFAULT_TUNING } from "../../src/config/mod.ts";
import { type Clock, type Random, systemClock, systemRandom } from "../../src/io/mod.ts";
import { openSharedTaskStore, type PostgresTaskStore } from "../../src/storage/mod.ts";
import type { TaskEventSink } from "../../src/tasks/mod.ts";
import type { CrashWriter } from "../tasks/conformance.ts";

/** A fresh namespace name. */
export function freshNamespace(prefix = "t"): string {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  return `${prefix}-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** What a shared test store is opened with. */
export interface SharedStoreOptions {
  /** PostgreSQL URL. */
  databaseUrl: string;
  /** Redis URL (`backend: redis`), or none (`backend: postgres`). */
  redisUrl?: string;
  /** Namespace (default: a fresh one). */
  namespace?: string;
  /** Run id (default `r1`). */
  runId?: string;
  /** Time. */
  clock: Clock;
  /** Ids. */
  random: Random;
  /** Events. */
  sink?: TaskEventSink;
  /** Take the namespace as an orchestrator. */
  owner?: { host: string; pid: number };
  /** Tuning overrides of `tuning.storage`. */
  storage?: Partial<typeof DEFAULT_TUNING.storage>;
}

/** Opens a shared store for a test. */
export function openTestStore(options: SharedStoreOptions): Promise<PostgresTaskStore> {
  return openSharedTaskStore({
    config: {
      storage: {
        backend: options.redisUrl === undefined ? "postgres" : "redis",
        database_url: options.databaseUrl,
        redis_url: options.redisUrl,
        namespace: options.namespace ?? freshNamespace(),
      },
      tuning: { ...DEFAULT_TUNING, storage: { ...DEFAULT_TUNING.storage, ...options.storage } },
    },
    sources: new Map([["storage.database_url", "test"], ["storage.redis_url", "test"]]),
    runtimeDir: "/nonexistent",
    runId: options.runId ?? "r1",
    clock: options.clock,
    random: options.random,
    sink: options.sink,
    owner: options.owner,
  });
}

const WRITER = new URL("./_pg_crash_writer.ts", import.meta.url).pathname;
const CONFIG = new URL("../../deno.json", import.meta.url).pathname;

/** The kill -9 writer of the conformance suite for a shared store. */
export function crashWriterFactory(
  databaseUrl: string,
  redisUrl?: string,
): () => Promise<CrashWriter> {
  return () => {
    const namespace = freshNamespace("crash");
    return Promise.resolve({
      argv: [
        Deno.execPath(),
        "run",
        "-q",
        "--frozen",
        `--config=${CONFIG}`,
        "-P=dev",
        WRITER,
        databaseUrl,
        namespace,
        redisUrl ?? "",
      ],
      reopen: () =>
        openTestStore({
          databaseUrl,
          redisUrl,
          namespace,
          clock: systemClock,
          random: systemRandom,
        }),
      cleanup: () => Promise.resolve(),
    });
  };
}
