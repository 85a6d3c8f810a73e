// The embedded store's names and defaults, and the memory-only store. Choosing a backend from
// the configuration (`openTaskStore`) lives in src/storage, which also knows the shared ones.
import { type Config, DEFAULT_TUNING } from "../config/mod.ts";
import { type Clock, type Random, RUNTIME_ENTRIES } from "../io/mod.ts";
import type { TaskEventSink } from "./events.ts";
import { IndexedTaskStore, NULL_JOURNAL } from "./indexed_store.ts";
import type { TaskDefaults } from "./rules.ts";

/** File name of the embedded task log inside `.sdd/runtime/`. */
export const TASK_LOG_FILE = RUNTIME_ENTRIES.tasks;

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
