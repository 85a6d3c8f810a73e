// The embedded default backend: an append-only JSONL log (one line per committed change,
// holding the new versions of the changed tasks) replayed into an in-memory index on open.
// Each acknowledged change is fsynced; concurrent changes share one write + fsync (group
// commit). A torn last line (crash mid-write, never acknowledged) is set aside and reported.
import { dirname } from "node:path";
import { z } from "zod";
import type { Clock, Random } from "../io/mod.ts";
import {
  closeLockFile,
  readFileIfExists,
  syncDirectory,
  writeAll,
  writeFileAtomic,
} from "../io/mod.ts";
import { TaskLogCorruptError, TaskStoreLockedError } from "./errors.ts";
import type { TaskEventSink } from "./events.ts";
import {
  IndexedTaskStore,
  type IndexedTaskStoreOptions,
  type TaskJournal,
} from "./indexed_store.ts";
import type { TaskDefaults } from "./rules.ts";
import { describeZodIssue, issuePath, type Task, TaskSchema } from "./task.ts";
import { concatBytes } from "../canonical/mod.ts";

/** Format version of a task log line. */
export const TASK_LOG_VERSION = 1;

const LineSchema = z.object({
  v: z.literal(TASK_LOG_VERSION),
  tasks: z.array(TaskSchema).min(1),
}).strict();

/** A torn last line found when the log was opened. */
export interface TornTail {
  /** Byte offset where the torn line starts (the log is cut back to it). */
  offset: number;
  /** Length of the torn fragment. */
  bytes: number;
  /** Where the fragment was saved (read-write open only). */
  savedTo: string | null;
}

/** What replaying the log found. */
export interface TaskLogRecovery {
  /** Complete records (lines) replayed. */
  records: number;
  /** Distinct tasks after replay. */
  tasks: number;
  /** The torn last line, if any. */
  torn: TornTail | null;
  /** The log was rewritten as a snapshot on open. */
  compacted: boolean;
}

/** Result of {@linkcode readTaskLog}. */
export interface TaskLogSnapshot {
  /** Latest version of every task. */
  tasks: Map<string, Task>;
  /** What was found. */
  recovery: TaskLogRecovery;
}

const decoder = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** Encodes one log record: the new versions of the tasks one commit changed. */
export function encodeTaskLogLine(tasks: readonly Task[]): Uint8Array {
  return encoder.encode(JSON.stringify({ v: TASK_LOG_VERSION, tasks }) + "\n");
}

/**
 * Replays log bytes: the last version of each task wins. A final fragment without `\n` is a
 * torn write and is reported, not applied; any other bad line is real damage and throws
 * {@linkcode TaskLogCorruptError} naming `file:line` and the field.
 */
export function replayTaskLog(bytes: Uint8Array, shownPath: string): TaskLogSnapshot {
  const tasks = new Map<string, Task>();
  let records = 0;
  let start = 0;
  let line = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) break;
    line++;
    const raw = bytes.subarray(start, nl);
    start = nl + 1;
    let value: unknown;
    try {
      value = JSON.parse(decoder.decode(raw));
    } catch (error) {
      throw new TaskLogCorruptError(`not a JSON record: ${(error as Error).message}`, {
        location: `${shownPath}:${line}`,
      });
    }
    const parsed = LineSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new TaskLogCorruptError(
        `${issuePath(issue.path) || "record"}: ${describeZodIssue(issue)}`,
        { location: `${shownPath}:${line}` },
      );
    }
    for (const task of parsed.data.tasks) tasks.set(task.id, task);
    records++;
  }
  const torn = start < bytes.length
    ? { offset: start, bytes: bytes.length - start, savedTo: null }
    : null;
  return { tasks, recovery: { records, tasks: tasks.size, torn, compacted: false } };
}

/** Reads a task log without changing it (no lock, torn tail left in place): for read commands. */
export async function readTaskLog(path: string): Promise<TaskLogSnapshot> {
  const bytes = await readFileIfExists(path) ?? new Uint8Array();
  return replayTaskLog(bytes, path);
}

/** Options of {@linkcode openJsonlTaskStore}. */
export interface JsonlTaskStoreOptions {
  /** Time source. */
  clock: Clock;
  /** Randomness for ids. */
  random: Random;
  /** Event recorder (the audit chain). */
  sink?: TaskEventSink;
  /** Draft defaults (`tuning.tasks`). */
  defaults: TaskDefaults;
  /** Rewrite the log as a snapshot past this many records (`tuning.tasks.jsonl_compact_min_records`). */
  compactMinRecords: number;
}

/** The JSONL-backed store, with what recovery found when it was opened. */
export class JsonlTaskStore extends IndexedTaskStore {
  /** What opening the log found (records, torn tail, compaction). */
  readonly recovery: TaskLogRecovery;
  /** The log file. */
  readonly path: string;

  constructor(options: IndexedTaskStoreOptions & { recovery: TaskLogRecovery; path: string }) {
    super(options);
    this.recovery = options.recovery;
    this.path = options.path;
  }
}

interface Pending {
  bytes: Uint8Array;
  resolve: () => void;
  reject: (error: Error) => void;
}

class JsonlJournal implements TaskJournal {
  readonly #path: string;
  readonly #compactMin: number;
  #file: Deno.FsFile;
  #records: number;
  #queue: Pending[] = [];
  #flushing: Promise<void> | undefined;
  #failed: Error | undefined;
  #closed = false;
  /** Set once the store exists: the current tasks, for compaction. */
  snapshot: (() => Task[]) | undefined;

  constructor(path: string, file: Deno.FsFile, records: number, compactMin: number) {
    this.#path = path;
    this.#file = file;
    this.#records = records;
    this.#compactMin = compactMin;
  }

  commit(tasks: readonly Task[]): Promise<void> {
    if (this.#failed !== undefined) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(new Error("the task log is closed"));
    const bytes = encodeTaskLogLine(tasks);
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ bytes, resolve, reject });
      this.#flushing ??= this.#flush();
    });
  }

  async #flush(): Promise<void> {
    while (this.#queue.length > 0 && this.#failed === undefined) {
      const batch = this.#queue.splice(0);
      try {
        await writeAll(this.#file, concatBytes(batch.map((p) => p.bytes)));
        await this.#file.syncData();
      } catch (error) {
        this.#fail(error as Error, batch);
        break;
      }
      this.#records += batch.length;
      for (const p of batch) p.resolve();
      const live = this.snapshot?.().length ?? 0;
      if (this.#records >= this.#compactMin && this.#records > 2 * live) {
        try {
          await this.compact();
        } catch (error) {
          this.#fail(error as Error, []);
        }
      }
    }
    this.#flushing = undefined;
  }

  #fail(error: Error, batch: Pending[]): void {
    this.#failed = error;
    for (const p of [...batch, ...this.#queue.splice(0)]) p.reject(error);
  }

  /** Rewrites the log as one line per task (temp file, fsync, rename, fsync the folder). */
  async compact(): Promise<void> {
    const tasks = this.snapshot?.() ?? [];
    const parts = tasks.map((t) => encodeTaskLogLine([t]));
    await writeFileAtomic(this.#path, concatBytes(parts), { mode: 0o600 });
    this.#file.close();
    this.#file = await Deno.open(this.#path, { append: true });
    this.#records = tasks.length;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#flushing;
    this.#file.close();
  }
}

/**
 * Opens (or creates) the task log at `path` — by convention `.sdd/runtime/tasks.jsonl` — for
 * exclusive use by this process: takes `<path>.lock`, replays the log, sets a torn last line
 * aside in `<path>.torn-<offset>` and cuts it off, and compacts an oversized log.
 *
 * @example
 * ```ts ignore
 * const store = await openJsonlTaskStore(".sdd/runtime/tasks.jsonl", {
 *   clock: systemClock, random: systemRandom, defaults: { priority: 2, max_retries: 2 },
 *   compactMinRecords: 10000,
 * });
 * if (store.recovery.torn) console.warn("ignored a torn record");
 * ```
 */
export async function openJsonlTaskStore(
  path: string,
  options: JsonlTaskStoreOptions,
): Promise<JsonlTaskStore> {
  const dir = dirname(path);
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const lock = await Deno.open(`${path}.lock`, {
    read: true,
    write: true,
    create: true,
    mode: 0o600,
  });
  let file: Deno.FsFile | undefined;
  try {
    if (!(await lock.tryLock(true))) throw new TaskStoreLockedError(path);
    const existing = await readFileIfExists(path);
    const { tasks, recovery } = replayTaskLog(existing ?? new Uint8Array(), path);
    if (recovery.torn !== null && existing !== undefined) {
      const savedTo = `${path}.torn-${recovery.torn.offset}`;
      await writeFileAtomic(savedTo, existing.subarray(recovery.torn.offset), { mode: 0o600 });
      await Deno.truncate(path, recovery.torn.offset);
      recovery.torn = { ...recovery.torn, savedTo };
    }
    file = await Deno.open(path, { append: true, create: true, mode: 0o600 });
    await file.sync();
    if (existing === undefined) await syncDirectory(dir);
    const journal = new JsonlJournal(path, file, recovery.records, options.compactMinRecords);
    const store = new JsonlTaskStore({
      backend: "jsonl",
      recovery,
      path,
      journal: {
        commit: (t) => journal.commit(t),
        close: async () => {
          await journal.close();
          closeLockFile(lock);
        },
      },
      clock: options.clock,
      random: options.random,
      sink: options.sink,
      defaults: options.defaults,
      initial: tasks.values(),
    });
    journal.snapshot = () => store.snapshot();
    if (
      recovery.records >= options.compactMinRecords && recovery.records > 2 * tasks.size
    ) {
      await journal.compact();
      recovery.compacted = true;
    }
    return store;
  } catch (error) {
    file?.close();
    closeLockFile(lock);
    throw error;
  }
}
