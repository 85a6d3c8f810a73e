// The audit log writer: appends HMAC-chained records under an exclusive lock with fsync,
// seals a torn tail before anything else, and commits concurrent appends as one group.
import { join } from "node:path";
import { concatBytes, type JsonObject } from "../canonical/mod.ts";
import {
  type Clock,
  closeLockFile,
  type SecretRedactor,
  syncDirectory,
  systemClock,
  writeAll,
} from "../io/mod.ts";
import { AuditError } from "./errors.ts";
import { isStorageFailure } from "../errors/mod.ts";
import type { AuditKey } from "./key.ts";
import {
  type AuditChainKeys,
  auditChainKeys,
  type AuditEventInput,
  type AuditRecord,
  buildRecord,
  checkEventInput,
  formatAuditTimestamp,
  TORN_RECORD_EVENT,
} from "./record.ts";
import { listSegmentsSync, segmentNameFor } from "./segments.ts";
import { readTailState, type TailState, type TornTail } from "./_tail.ts";
import {
  readWitnessSync,
  type WitnessedLoss,
  witnessedLoss,
  writeWitnessSync,
} from "./_witness.ts";

/** Options of one append. */
export interface AppendOptions {
  /**
   * Set `details.prev_chain_digest` to the record's own `prev_hmac`, chosen under the lock
   * (callers cannot know the tip in advance when other processes append too).
   */
  bindPrevChainDigest?: boolean;
}

/**
 * Where modules record decisions. The orchestrator and task store depend on this, not on
 * {@linkcode AuditLog}, so tests can pass {@linkcode MemoryAuditSink}.
 */
export interface AuditSink {
  /** Appends one event; resolves with the record once it is durable. */
  append(event: AuditEventInput, options?: AppendOptions): Promise<AuditRecord>;
}

/** Options of {@linkcode AuditLog}. */
export interface AuditLogOptions {
  /** Source of record timestamps and segment dates. Default: the system clock. */
  clock?: Clock;
  /** Most events committed with one write + fsync. Default 512. */
  maxBatch?: number;
  /**
   * Splits every write into pieces of this many bytes. Only for crash tests: it makes a
   * kill between two `write` calls (as on a full disk) likely.
   */
  writeChunkBytes?: number;
  /**
   * Where events go that could not be written because the disk is full or the folder became
   * read-only (outside `.sdd`, beside the audit key): {@linkcode AuditLog.replaySpill} appends
   * them to the chain later, so no event is lost.
   */
  spillPath?: string;
  /**
   * Redacts every event's details before it is chained (the run's minted connection secrets,
   * docs/FLEET.md): an agent's text quoted in a record never carries them.
   */
  redactor?: SecretRedactor;
}

interface Pending {
  event: AuditEventInput;
  options: AppendOptions;
  resolve: (record: AuditRecord) => void;
  reject: (error: unknown) => void;
}

interface TipCache {
  name: string;
  size: number;
  ino: number | null;
  tip: string;
}

/** A group's outcome per event, which write holds each record, and how many writes are durable. */
interface CommitGroup {
  /** The record of each event, or why it could not be recorded. */
  outcomes: (AuditRecord | Error)[];
  /** Index of the write holding each outcome's record (-1: none). */
  writeOf: number[];
  /** Writes fsynced so far: when a later one fails, these records are still acknowledged. */
  durable: number;
}

/** The bytes of a group for one segment. */
interface SegmentWrite {
  segment: string;
  parts: Uint8Array[];
}

/** A group's writes in order and the chain tip after them. */
interface BuiltGroup {
  writes: SegmentWrite[];
  tip: string;
}

const LOCK_FILE = ".chain.lock";
const SEGMENT_MODE = 0o600;

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/**
 * The `chain.torn_record` details: the torn bytes at the end of the newest segment, and when
 * the tip witness shows acknowledged bytes cut off, how many (`bytes_lost`) and the tip that
 * was acknowledged. A cut at a record boundary has no torn bytes: class `truncated`, or
 * `segment_lost` when the segment file is gone.
 */
function sealDetails(torn: TornTail | undefined, lost: WitnessedLoss | undefined): JsonObject {
  const details: JsonObject = torn !== undefined
    ? {
      segment: torn.segment,
      byte_offset: torn.size,
      verified_prefix_offset: torn.regionStart,
      torn_bytes_sha256: torn.sha256,
      tear_class: torn.tearClass,
    }
    : {
      segment: lost?.segment ?? "",
      byte_offset: lost?.size ?? 0,
      verified_prefix_offset: lost?.size ?? 0,
      torn_bytes_sha256: EMPTY_SHA256,
      tear_class: lost?.segment_gone ? "segment_lost" : "truncated",
    };
  if (lost !== undefined) {
    details.bytes_lost = lost.bytes_lost;
    details.acknowledged_size = lost.expected_size;
    details.acknowledged_tip = lost.acknowledged_tip;
  }
  return details;
}

function laterName(a: string, b: string | undefined): string {
  return b !== undefined && b > a ? b : a;
}

/**
 * The HMAC-chained audit log of one `.sdd/audit/` folder (FORMATS.md §2).
 *
 * Appends hold an exclusive flock on `.chain.lock`, read the chain tip (cached while the
 * newest segment is unchanged), seal a torn tail with a `chain.torn_record` event, write and
 * fsync. Appends issued without awaiting each other are committed together: one write and one
 * fsync per group, and every promise resolves only after that fsync (durable acknowledgement).
 *
 * @example
 * ```ts ignore
 * const log = new AuditLog(".sdd/audit", await ensureAuditKey(path, systemRandom));
 * await log.append({ actor: "orchestrator", event_type: "task.transition",
 *   resource_type: "task", resource_id: "t-1", details: { to: "done" } });
 * await log.close();
 * ```
 */
export class AuditLog implements AuditSink {
  /** The audit folder (`.sdd/audit`). */
  readonly dir: string;
  readonly #keys: AuditChainKeys;
  readonly #clock: Clock;
  readonly #maxBatch: number;
  readonly #chunk: number | undefined;
  #queue: Pending[] = [];
  #draining: Promise<void> | undefined;
  #lockFile: Deno.FsFile | undefined;
  #lockIno: number | null = null;
  #segment: { name: string; file: Deno.FsFile; ino: number | null } | undefined;
  #cache: TipCache | undefined;
  readonly #listeners = new Set<(record: AuditRecord) => void>();
  #closed = false;

  constructor(dir: string, key: AuditKey, options: AuditLogOptions = {}) {
    this.dir = dir;
    this.#keys = auditChainKeys(key);
    this.#clock = options.clock ?? systemClock;
    this.#maxBatch = Math.max(1, options.maxBatch ?? 512);
    this.#chunk = options.writeChunkBytes;
    this.#spillPath = options.spillPath;
    this.#redactor = options.redactor;
  }

  readonly #redactor: SecretRedactor | undefined;

  readonly #spillPath: string | undefined;

  /**
   * Keeps events a storage failure kept out of the chain: one JSON line each in the spill
   * file, fsynced. Returns how many could not be kept either.
   */
  #spill(items: readonly Pending[], error: unknown): number {
    if (this.#spillPath === undefined || items.length === 0) return items.length;
    const at = formatAuditTimestamp(this.#clock.nowNs());
    const reason = (error as Error).message?.split("\n")[0] ?? String(error);
    try {
      const text = items.map((i) => JSON.stringify({ event: i.event, at, reason }) + "\n").join("");
      const file = Deno.openSync(this.#spillPath, { append: true, create: true, mode: 0o600 });
      try {
        file.writeSync(new TextEncoder().encode(text));
        file.syncSync();
      } finally {
        file.close();
      }
      return 0;
    } catch {
      return items.length;
    }
  }

  /**
   * Appends the events a storage failure spilled (each with `details.spilled` = when and why
   * it could not be written then), then removes the spill file. Returns how many.
   */
  async replaySpill(): Promise<number> {
    if (this.#spillPath === undefined) return 0;
    let text: string;
    try {
      text = await Deno.readTextFile(this.#spillPath);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return 0;
      throw error;
    }
    let count = 0;
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      let parsed: { event: AuditEventInput; at: string; reason: string };
      try {
        parsed = JSON.parse(line);
      } catch {
        continue; // a line torn by the failure itself: nothing to replay
      }
      const e = parsed.event;
      await this.append({
        ...e,
        details: { ...(e.details ?? {}), spilled: { at: parsed.at, reason: parsed.reason } },
      });
      count++;
    }
    await Deno.remove(this.#spillPath);
    return count;
  }

  /** Appends one event; resolves with its record after the fsync that made it durable. */
  append(event: AuditEventInput, options: AppendOptions = {}): Promise<AuditRecord> {
    if (this.#closed) {
      return Promise.reject(new AuditError("audit.closed", "the audit log is closed"));
    }
    try {
      checkEventInput(event);
      if (event.event_type === TORN_RECORD_EVENT) {
        throw new AuditError(
          "audit.reserved_event",
          `'${TORN_RECORD_EVENT}' is written only by the log itself when it seals a torn tail`,
        );
      }
    } catch (error) {
      return Promise.reject(error);
    }
    const redactor = this.#redactor;
    const clean = redactor === undefined || redactor.size === 0 || event.details === undefined
      ? event
      : { ...event, details: redactor.json(event.details) };
    return new Promise<AuditRecord>((resolve, reject) => {
      this.#queue.push({ event: clean, options, resolve, reject });
      this.#draining ??= this.#drain();
    });
  }

  /**
   * Calls `listener` with each record this log appends, in chain order, once it is durable
   * (a live view follows the run this way); returns the unsubscribe function. A listener that
   * throws is ignored: it never fails an append.
   */
  onAppend(listener: (record: AuditRecord) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #durable(record: AuditRecord): AuditRecord {
    for (const listener of this.#listeners) {
      try {
        listener(record);
      } catch {
        // An observer's failure is its own; the record is written and the append succeeds.
      }
    }
    return record;
  }

  /** Waits for pending appends, then releases the lock file. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#draining;
    this.#segment?.file.close();
    this.#segment = undefined;
    if (this.#lockFile !== undefined) closeLockFile(this.#lockFile);
    this.#lockFile = undefined;
  }

  async #drain(): Promise<void> {
    // Let every append issued in the current task join the first group.
    await Promise.resolve();
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, this.#maxBatch);
        await this.#commit(batch);
      }
    } finally {
      this.#draining = undefined;
    }
  }

  async #lock(): Promise<Deno.FsFile> {
    const path = join(this.dir, LOCK_FILE);
    for (;;) {
      if (this.#lockFile === undefined) {
        await Deno.mkdir(this.dir, { recursive: true, mode: 0o700 });
        const file = await Deno.open(path, { read: true, write: true, create: true, mode: 0o600 });
        this.#lockFile = file;
        this.#lockIno = (await file.stat()).ino;
      }
      await this.#lockFile.lock(true);
      // A lock on a file that was deleted or replaced excludes nobody: reopen and retry.
      let current: number | null | undefined;
      try {
        current = Deno.statSync(path).ino;
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
      }
      if (current !== undefined && current === this.#lockIno) return this.#lockFile;
      closeLockFile(this.#lockFile);
      this.#lockFile = undefined;
    }
  }

  async #tail(): Promise<TailState> {
    // Metadata calls are synchronous here: each takes microseconds, while an async call
    // costs a thread hop that dominated the time of an append.
    const segments = listSegmentsSync(this.dir);
    const newest = segments.at(-1);
    const cache = this.#cache;
    if (cache !== undefined && newest !== undefined && newest.name === cache.name) {
      if (newest.regular) {
        const info = Deno.statSync(newest.path);
        if (info.size === cache.size && info.ino === cache.ino) {
          return {
            tip: cache.tip,
            newest: { name: newest.name, path: newest.path, size: info.size, ino: info.ino },
          };
        }
      }
    }
    const state = await readTailState(segments, this.#keys);
    // Only when the cache could not vouch for the tail: was an acknowledged tail cut off?
    const lost = witnessedLoss(readWitnessSync(this.dir), segments);
    return lost === undefined ? state : { ...state, lost };
  }

  #timestampNs(): bigint {
    return this.#clock.nowNs();
  }

  async #commit(batch: Pending[]): Promise<void> {
    const group: CommitGroup = { outcomes: [], writeOf: [], durable: 0 };
    try {
      const lock = await this.#lock();
      try {
        const state = await this.#tail();
        // Until this group is durable, the next one must read the tail again.
        this.#cache = undefined;
        const built = this.#buildGroup(state, batch, group);
        await this.#writeGroup(state, built, group);
      } finally {
        lock.unlockSync();
      }
    } catch (error) {
      this.#cache = undefined;
      this.#settleFailed(batch, group, error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = group.outcomes[i];
      if (outcome instanceof Error) item.reject(outcome);
      else item.resolve(this.#durable(outcome));
    });
  }

  /**
   * The lines of a group, by segment: first a seal when the tail was torn or lost, then each
   * event's record (an event that cannot be recorded gets its error as its outcome).
   */
  #buildGroup(state: TailState, batch: readonly Pending[], group: CommitGroup): BuiltGroup {
    let tip = state.tip;
    const writes: SegmentWrite[] = [];
    const push = (segment: string, bytes: Uint8Array) => {
      const last = writes.at(-1);
      if (last?.segment === segment) last.parts.push(bytes);
      else writes.push({ segment, parts: [bytes] });
    };
    const { torn, lost } = state;
    let floor = state.newest?.name;
    if (torn !== undefined || lost !== undefined) {
      const segment = torn?.segment ?? lost?.segment ?? "";
      const seal = buildRecord({
        actor: "bernstein",
        event_type: TORN_RECORD_EVENT,
        resource_type: "audit_segment",
        resource_id: segment,
        details: sealDetails(torn, lost),
      }, { prevHmac: tip, timestamp: formatAuditTimestamp(this.#timestampNs()), keys: this.#keys });
      if (torn !== undefined && !torn.terminated) push(segment, new Uint8Array([0x0a]));
      // A segment that is gone gets the seal as its first line, under its own name.
      push(segment, seal.line);
      floor = laterName(segment, floor);
      tip = seal.record.hmac;
    }
    for (const item of batch) {
      try {
        const ns = this.#timestampNs();
        // Never append to a segment older than the newest: the chain runs in name order.
        const segment = laterName(segmentNameFor(ns), floor);
        const details = this.#details(item, tip);
        const built = buildRecord({ ...item.event, details }, {
          prevHmac: tip,
          timestamp: formatAuditTimestamp(ns),
          keys: this.#keys,
        });
        push(segment, built.line);
        floor = segment;
        tip = built.record.hmac;
        group.outcomes.push(built.record);
        group.writeOf.push(writes.length - 1);
      } catch (error) {
        group.outcomes.push(error as Error);
        group.writeOf.push(-1);
      }
    }
    return { writes, tip };
  }

  /** Writes a group's segments in order (each fsynced), then the tip cache and witness. */
  async #writeGroup(state: TailState, built: BuiltGroup, group: CommitGroup): Promise<void> {
    const { writes, tip } = built;
    let written: TipCache | undefined =
      state.newest === undefined || state.torn !== undefined || state.lost !== undefined
        ? undefined
        : { name: state.newest.name, size: state.newest.size, ino: state.newest.ino, tip };
    for (const w of writes) {
      const known = w.segment === state.newest?.name ? state.newest : undefined;
      const info = await this.#writeSegment(w.segment, concatBytes(w.parts), known);
      written = { name: w.segment, size: info.size, ino: info.ino, tip };
      group.durable++;
    }
    this.#cache = written;
    if (written !== undefined) {
      writeWitnessSync(this.dir, { segment: written.name, size: written.size, tip });
    }
  }

  /**
   * A group that failed part way: records already fsynced are acknowledged, the rest are
   * refused; on a storage failure (disk full, read-only) the unwritten events are spilled.
   */
  #settleFailed(batch: readonly Pending[], group: CommitGroup, error: unknown): void {
    const lost: Pending[] = [];
    batch.forEach((item, i) => {
      const outcome = group.outcomes[i];
      if (
        outcome !== undefined && !(outcome instanceof Error) && group.writeOf[i] < group.durable
      ) {
        item.resolve(this.#durable(outcome));
      } else {
        if (!(outcome instanceof Error) && isStorageFailure(error)) lost.push(item);
        item.reject(outcome instanceof Error ? outcome : error);
      }
    });
    // Disk full or read-only: the unwritten events go to the spill file, written later.
    this.#spill(lost, error);
  }

  #details(item: Pending, tip: string): JsonObject {
    const details = item.event.details ?? {};
    if (item.options.bindPrevChainDigest) return { ...details, prev_chain_digest: tip };
    const claim = details.prev_chain_digest;
    if (claim !== undefined && claim !== "" && claim !== tip) {
      throw new AuditError(
        "audit.false_predecessor_claim",
        `details.prev_chain_digest ${String(claim).slice(0, 16)}… is not the chain tip ${
          tip.slice(0, 16)
        }…; refusing to write a false predecessor claim`,
        { hint: "use the bindPrevChainDigest append option" },
      );
    }
    return details;
  }

  /**
   * Appends `bytes` to segment `name` and fsyncs. `known` is the segment as the tail read saw
   * it under this lock (absent for a segment this group creates); its handle is kept open
   * between groups while the path still names the same file.
   */
  async #writeSegment(
    name: string,
    bytes: Uint8Array,
    known: { size: number; ino: number | null } | undefined,
  ): Promise<{ size: number; ino: number | null }> {
    const path = join(this.dir, name);
    let open = this.#segment;
    if (
      open !== undefined &&
      (open.name !== name || known === undefined || known.ino === null || open.ino !== known.ino)
    ) {
      open.file.close();
      open = this.#segment = undefined;
    }
    let created = false;
    if (open === undefined) {
      let file: Deno.FsFile;
      try {
        file = await Deno.open(path, { append: true });
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) throw error;
        file = await Deno.open(path, { append: true, createNew: true, mode: SEGMENT_MODE });
        created = true;
      }
      const ino = known?.ino ?? (await file.stat()).ino;
      open = this.#segment = { name, file, ino };
    }
    try {
      if (this.#chunk !== undefined && this.#chunk > 0) {
        for (let at = 0; at < bytes.length; at += this.#chunk) {
          await writeAll(open.file, bytes.subarray(at, at + this.#chunk));
        }
      } else {
        // A copy into the page cache; the slow, durable part (fsync) stays async.
        let written = 0;
        while (written < bytes.length) written += open.file.writeSync(bytes.subarray(written));
      }
      await open.file.sync();
      if (created) await syncDirectory(this.dir);
    } catch (error) {
      open.file.close();
      this.#segment = undefined;
      throw error;
    }
    // Appends happen only under the lock, so the size is the known size plus what we wrote.
    return { size: (created ? 0 : known?.size ?? 0) + bytes.length, ino: open.ino };
  }
}

/** Options of {@linkcode appendAuditEvent}. */
export interface AppendAuditEventOptions extends AuditLogOptions, AppendOptions {}

/**
 * Appends one event to the audit log in `dir` (lock, tip, seal if torn, write, fsync) and
 * returns its record. For many events keep one {@linkcode AuditLog} instead.
 */
export async function appendAuditEvent(
  dir: string,
  key: AuditKey,
  event: AuditEventInput,
  deps: AppendAuditEventOptions = {},
): Promise<AuditRecord> {
  const log = new AuditLog(dir, key, deps);
  try {
    return await log.append(event, { bindPrevChainDigest: deps.bindPrevChainDigest });
  } finally {
    await log.close();
  }
}
