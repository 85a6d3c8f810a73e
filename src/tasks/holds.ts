// Orchestrator holds: while one is active the run does not stop for quiescence or the
// zero-terminal backstop (an operator or manager is about to add work). Every hold expires,
// so a forgotten one cannot keep a run alive for ever.
import { z } from "zod";
import { toHex } from "../canonical/mod.ts";
import type { Clock, Random } from "../io/mod.ts";
import { readFileIfExists, writeFileAtomic } from "../io/mod.ts";
import { HoldNotFoundError, TaskLogCorruptError, TaskValidationError } from "./errors.ts";
import { NULL_EVENT_SINK, type TaskEvent, type TaskEventSink } from "./events.ts";
import { checkChange, isoTime } from "./rules.ts";

/** An active hold. */
export interface Hold {
  /** `h-` + 16 hex. */
  id: string;
  /** Why the run must not stop. */
  reason: string;
  /** Who placed it. */
  actor: string;
  /** ISO time it was placed. */
  created_at: string;
  /** ISO time it lapses by itself. */
  expires_at: string;
}

/** Options of {@linkcode HoldStore.add}. */
export interface AddHoldOptions {
  /** Who places it. */
  actor: string;
  /** Why. */
  reason: string;
  /** Lifetime in milliseconds (> 0). */
  ttlMs: number;
}

/** Where holds live. */
export interface HoldStore {
  /** Places a hold. */
  add(options: AddHoldOptions): Promise<Hold>;
  /** Active holds, oldest first; expired ones are dropped (and recorded as released). */
  list(): Promise<Hold[]>;
  /** Releases a hold before it expires. */
  release(id: string, options: { actor: string; reason: string }): Promise<Hold>;
}

const HoldSchema = z.object({
  id: z.string().regex(/^h-[0-9a-f]{16}$/),
  reason: z.string().min(1),
  actor: z.string().min(1),
  created_at: z.string().datetime(),
  expires_at: z.string().datetime(),
}).strict();

const HoldFileSchema = z.object({ v: z.literal(1), holds: z.array(HoldSchema) }).strict();

/** Options of {@linkcode openHoldStore}. */
export interface HoldStoreOptions {
  /** Time source (expiry). */
  clock: Clock;
  /** Randomness for ids. */
  random: Random;
  /** Event recorder. */
  sink?: TaskEventSink;
}

/**
 * A hold store kept in memory and, when `path` is given (`.sdd/runtime/holds.json`), saved
 * atomically on every change so a resumed run keeps the holds placed before a crash.
 */
export class FileHoldStore implements HoldStore {
  readonly #path: string | undefined;
  readonly #clock: Clock;
  readonly #random: Random;
  readonly #sink: TaskEventSink;
  #holds: Hold[];
  #writes: Promise<void> = Promise.resolve();

  constructor(path: string | undefined, holds: Hold[], options: HoldStoreOptions) {
    this.#path = path;
    this.#holds = holds;
    this.#clock = options.clock;
    this.#random = options.random;
    this.#sink = options.sink ?? NULL_EVENT_SINK;
  }

  async #save(events: TaskEvent[]): Promise<void> {
    const path = this.#path;
    const bytes = JSON.stringify({ v: 1, holds: this.#holds }) + "\n";
    const write = this.#writes.then(async () => {
      if (path !== undefined) await writeFileAtomic(path, bytes, { mode: 0o600 });
      for (const e of events) await this.#sink.append(e);
    });
    this.#writes = write.catch(() => {});
    await write;
  }

  #event(type: "hold.added" | "hold.released", hold: Hold, actor: string, reason: string) {
    return {
      type,
      resource_type: "hold" as const,
      resource_id: hold.id,
      actor,
      reason,
      from: null,
      to: null,
      version: null,
      at: isoTime(this.#clock.nowMs()),
      details: { expires_at: hold.expires_at },
    };
  }

  async add(options: AddHoldOptions): Promise<Hold> {
    checkChange(options);
    if (!(Number.isFinite(options.ttlMs) && options.ttlMs > 0)) {
      throw new TaskValidationError("ttl must be a positive number of seconds", {
        location: "ttl_s",
      });
    }
    const now = this.#clock.nowMs();
    const hold: Hold = {
      id: `h-${toHex(this.#random.bytes(8))}`,
      reason: options.reason,
      actor: options.actor,
      created_at: isoTime(now),
      expires_at: isoTime(now + options.ttlMs),
    };
    const expired = this.#prune();
    this.#holds.push(hold);
    await this.#save([
      ...expired,
      this.#event("hold.added", hold, options.actor, options.reason),
    ]);
    return hold;
  }

  #prune(): TaskEvent[] {
    const now = isoTime(this.#clock.nowMs());
    const expired = this.#holds.filter((h) => h.expires_at <= now);
    if (expired.length === 0) return [];
    this.#holds = this.#holds.filter((h) => h.expires_at > now);
    return expired.map((h) => this.#event("hold.released", h, "orchestrator", "expired"));
  }

  async list(): Promise<Hold[]> {
    const expired = this.#prune();
    if (expired.length > 0) await this.#save(expired);
    return this.#holds.map((h) => ({ ...h }));
  }

  async release(id: string, options: { actor: string; reason: string }): Promise<Hold> {
    checkChange(options);
    const expired = this.#prune();
    const hold = this.#holds.find((h) => h.id === id);
    if (hold === undefined) {
      if (expired.length > 0) await this.#save(expired);
      throw new HoldNotFoundError(id);
    }
    this.#holds = this.#holds.filter((h) => h.id !== id);
    await this.#save([
      ...expired,
      this.#event("hold.released", hold, options.actor, options.reason),
    ]);
    return { ...hold };
  }
}

/**
 * Opens the hold store saved at `path` (missing file: no holds), or a memory-only one when
 * `path` is undefined. A damaged file is an error naming it, never silently emptied.
 */
export async function openHoldStore(
  path: string | undefined,
  options: HoldStoreOptions,
): Promise<FileHoldStore> {
  let holds: Hold[] = [];
  if (path !== undefined) {
    const bytes = await readFileIfExists(path);
    if (bytes !== undefined) {
      let parsed;
      try {
        parsed = HoldFileSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
      } catch (error) {
        throw new TaskLogCorruptError(`not JSON: ${(error as Error).message}`, { location: path });
      }
      if (!parsed.success) {
        throw new TaskLogCorruptError(`not a holds file: ${parsed.error.issues[0].message}`, {
          location: path,
        });
      }
      holds = parsed.data.holds;
    }
  }
  return new FileHoldStore(path, holds, options);
}
