/**
 * Signed checkpoints during a run (FORMATS.md §8): after every `tuning.checkpoints.every_entries`
 * entries the run appended to the lineage log (or to the audit log) since the last, and at the
 * end of the run, the operator key signs a checkpoint of that log. A checkpoint that cannot be
 * written (a log whose committed history changed, a damaged checkpoints file) is a run warning,
 * never a silent skip; the gate then names what changed.
 */
import type { JsonObject } from "../canonical/mod.ts";
import { type AuditLog, checkpointAuditLog } from "../audit/mod.ts";
import type { CheckpointSigner } from "../crypto/mod.ts";
import type { Clock } from "../io/mod.ts";
import type { LineageStore } from "../lineage/store/mod.ts";
import type { CheckpointWriteResult } from "../tlog/mod.ts";

/** The two logs a run checkpoints. */
export type RunCheckpointLog = "lineage" | "audit";

/** What the end of a run recorded about one log's checkpoint (summary.json `checkpoints`). */
export interface RunCheckpointRecord extends JsonObject {
  /** Which log. */
  log: RunCheckpointLog;
  /** Lines the latest checkpoint covers. */
  size: number;
  /** Its RFC 9162 root, hex. */
  root: string;
  /** Its 1-based line in the log folder's checkpoints.jsonl. */
  line: number;
  /** False when the log had not grown since the latest checkpoint (nothing was written). */
  created: boolean;
}

/** What {@linkcode RunCheckpoints} is built from. */
export interface RunCheckpointsOptions {
  /** The run's lineage store. */
  lineage: LineageStore;
  /** The run's audit chain. */
  audit: AuditLog;
  /** The operator signing key, resolved on first need. */
  signer: () => Promise<CheckpointSigner>;
  /** `tuning.checkpoints.every_entries` (0: only at the end). */
  everyEntries: number;
  /** Source of the checkpoints' `ts`. */
  clock: Clock;
  /** A checkpoint that could not be written. */
  warn: (message: string) => void;
}

/** Checkpoints of the lineage and audit logs a run writes to. */
export class RunCheckpoints {
  readonly #options: RunCheckpointsOptions;
  readonly #counts: Record<RunCheckpointLog, number> = { lineage: 0, audit: 0 };
  readonly #unsubscribe: (() => void)[] = [];
  #signer: Promise<CheckpointSigner> | undefined;
  #queue: Promise<unknown> = Promise.resolve();

  constructor(options: RunCheckpointsOptions) {
    this.#options = options;
    if (options.everyEntries > 0) {
      this.#unsubscribe.push(
        options.audit.onAppend(() => this.#count("audit")),
        options.lineage.onAppend(() => this.#count("lineage")),
      );
    }
  }

  #count(log: RunCheckpointLog): void {
    if (++this.#counts[log] < this.#options.everyEntries) return;
    this.#counts[log] = 0;
    // Queued, not awaited: the append that crossed the threshold is not held up by it (the
    // audit checkpoint waits for the chain lock that append still holds).
    this.#enqueue(log).catch(() => {});
  }

  #enqueue(log: RunCheckpointLog): Promise<CheckpointWriteResult | undefined> {
    const next = this.#queue.then(() => this.#write(log));
    this.#queue = next.catch(() => {});
    return next;
  }

  async #write(log: RunCheckpointLog): Promise<CheckpointWriteResult | undefined> {
    try {
      this.#signer ??= this.#options.signer();
      const signer = await this.#signer;
      if (log === "audit") {
        return await checkpointAuditLog(this.#options.audit.dir, signer, {
          clock: this.#options.clock,
        });
      }
      if (!await exists(this.#options.lineage.paths.logPath)) return undefined;
      return await this.#options.lineage.checkpoint(signer);
    } catch (error) {
      this.#signer = undefined;
      this.#options.warn(
        `no checkpoint of the ${log} log was signed: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
      return undefined;
    }
  }

  /**
   * Stops counting, waits for queued checkpoints, then checkpoints both logs: what the run
   * appended is covered when it ends. A log without entries (no lineage written) is left out.
   */
  async finish(): Promise<RunCheckpointRecord[]> {
    this.close();
    const out: RunCheckpointRecord[] = [];
    for (const log of ["lineage", "audit"] as const) {
      const r = await this.#enqueue(log);
      if (r === undefined) continue;
      out.push({
        log,
        size: r.checkpoint.size,
        root: r.checkpoint.root,
        line: r.line,
        created: r.created,
      });
    }
    return out;
  }

  /** Stops counting (a run that ends early is checkpointed by the next one). */
  close(): void {
    for (const u of this.#unsubscribe.splice(0)) u();
  }

  /** Resolves when queued checkpoints are written. */
  async settled(): Promise<void> {
    await this.#queue;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}
