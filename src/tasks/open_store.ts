// Picks and opens the task store a configuration asks for.
import { join } from "node:path";
import { type Config, DEFAULT_TUNING } from "../config/mod.ts";
import type { Clock, Random } from "../io/mod.ts";
import { BackendUnavailableError } from "./errors.ts";
import type { TaskEventSink } from "./events.ts";
import { IndexedTaskStore, NULL_JOURNAL } from "./indexed_store.ts";
import { type JsonlTaskStore, openJsonlTaskStore } from "./jsonl_store.ts";
import type { TaskDefaults } from "./rules.ts";

/** File name of the embedded task log inside `.sdd/runtime/`. */
export const TASK_LOG_FILE = "tasks.jsonl";

/** File name of the saved orchestrator holds inside `.sdd/runtime/`. */
export const HOLDS_FILE = "holds.json";

/** Task defaults from a tuning table. */
export function taskDefaults(tuning: Config["tuning"] = DEFAULT_TUNING): TaskDefaults {
  return {
    priority: tuning.tasks.default_priority,
    max_retries: tuning.tasks.default_max_retries,
  };
}

/** Options of {@linkcode createMemoryTaskStore}. */
export interface MemoryTaskStoreOptions {
  /** Time source. */
  clock: Clock;
  /** Randomness for ids. */
  random: Random;
  /** Event recorder. */
  sink?: TaskEventSink;
  /** Draft defaults (default: the built-in tuning). */
  defaults?: TaskDefaults;
}

/** A store that lives only in memory (tests, `--dry-run`); same rules as every backend. */
export function createMemoryTaskStore(options: MemoryTaskStoreOptions): IndexedTaskStore {
  return new IndexedTaskStore({
    backend: "memory",
    journal: NULL_JOURNAL,
    clock: options.clock,
    random: options.random,
    sink: options.sink,
    defaults: options.defaults ?? taskDefaults(),
  });
}

/** Options of {@linkcode openTaskStore}. */
export interface OpenTaskStoreOptions {
  /** The effective configuration (`storage`, `tuning.tasks`). */
  config: Pick<Config, "storage" | "tuning">;
  /** The project's `.sdd/runtime/` folder. */
  runtimeDir: string;
  /** Time source. */
  clock: Clock;
  /** Randomness for ids. */
  random: Random;
  /** Event recorder (the audit chain). */
  sink?: TaskEventSink;
}

/**
 * Opens the configured store: `storage.backend: memory` is the embedded JSONL log at
 * `.sdd/runtime/tasks.jsonl` with an in-memory index. PostgreSQL and Redis are refused with
 * a clear error until their backends exist.
 */
export async function openTaskStore(options: OpenTaskStoreOptions): Promise<JsonlTaskStore> {
  const backend = options.config.storage.backend;
  if (backend !== "memory") {
    throw new BackendUnavailableError(
      `storage.backend '${backend}' is not implemented yet; only 'memory' (embedded JSONL) is`,
      { location: "storage.backend", hint: "set storage.backend: memory" },
    );
  }
  return await openJsonlTaskStore(join(options.runtimeDir, TASK_LOG_FILE), {
    clock: options.clock,
    random: options.random,
    sink: options.sink,
    defaults: taskDefaults(options.config.tuning),
    compactMinRecords: options.config.tuning.tasks.jsonl_compact_min_records,
  });
}
