// Shares the gate's per-line checks (parse, signatures) between this thread and worker
// threads. Each worker is kept fed with a few batches; this thread checks a batch itself only
// when every worker already has its share queued, so the split follows each thread's real
// speed (this thread also frames the log and runs the in-order checks). A worker that cannot
// start or fails hands its batches back to this thread: results never depend on the pool.
import type { GateWorkerInit } from "./_gate_worker.ts";
import type { LineBatch, SignatureCheckContext } from "./_line_check.ts";
import { type CheckedBatch, checkShaped, type ResultShape } from "./_shaped_batch.ts";

/** Runs line batches somewhere. */
export interface SignatureBatchRunner {
  /** The result of one batch (synchronously when checked on this thread). */
  run(batch: LineBatch): CheckedBatch | Promise<CheckedBatch>;
  /**
   * Lets worker replies in before the next `run` (a macrotask turn; workers' messages are
   * not seen while this thread only awaits settled promises). Immediate without workers.
   */
  turn(): Promise<void> | void;
  /** Stops any workers. */
  close(): void;
}

/** Runs every batch on this thread, its results shaped as `shape` says. */
export function inlineRunner(
  ctx: SignatureCheckContext,
  shape: ResultShape,
): SignatureBatchRunner {
  return { run: (batch) => checkShaped(batch, ctx, shape, false), turn() {}, close() {} };
}

interface Pending {
  // Only bytes (external memory): a failed worker's batch is checked again here.
  batch: LineBatch;
  worker: number;
  resolve: (r: CheckedBatch) => void;
}

/**
 * Batches queued per worker before this thread takes one itself. Replies are let in only
 * between batches this thread hands out, so a worker needs a few queued not to idle while
 * this thread parses lines or checks a batch of its own.
 */
const WORKER_QUEUE_DEPTH = 6;

/** Batches checked on this thread before any worker starts (256 entries, ~25 ms of work). */
export const INLINE_FIRST_BATCHES = 2;

const DEFAULT_WORKER_URL = new URL("./_gate_worker.ts", import.meta.url);

/**
 * Gate workers started ahead of the gate, so their thread start and module load overlap the
 * caller's own work until {@linkcode pooledRunner} takes them.
 */
export interface StartedWorkers {
  /** The workers (fewer than asked, or none, when they could not start). */
  readonly workers: Worker[];
  /** True once one could not start or failed before a runner took it. */
  failed: boolean;
  /** Stops them (a runner that took them stops them too; twice is harmless). */
  close(): void;
}

/**
 * Starts `count` gate workers now. Until a runner takes them, an error in one (a module that
 * cannot load) only marks them failed: the runner then checks every batch on this thread, as
 * it does when its own workers fail.
 */
export function startGateWorkers(
  count: number,
  workerUrl: URL = DEFAULT_WORKER_URL,
): StartedWorkers {
  const workers: Worker[] = [];
  const started: StartedWorkers = {
    workers,
    failed: false,
    close: () => workers.forEach((w) => w.terminate()),
  };
  if (count < 1 || typeof Worker === "undefined") return started;
  try {
    for (let i = 0; i < count; i++) {
      const w = new Worker(workerUrl, { type: "module" });
      w.onerror = (event: ErrorEvent) => {
        event.preventDefault();
        started.failed = true;
      };
      workers.push(w);
    }
  } catch {
    started.failed = true;
  }
  return started;
}

/**
 * A runner over `count` workers plus this thread, or inline when workers cannot start. Workers
 * `started` ahead (with the same module) are taken instead of starting new ones.
 */
export function pooledRunner(
  count: number,
  ctx: SignatureCheckContext,
  init: Omit<GateWorkerInit, "type">,
  workerUrl: URL = DEFAULT_WORKER_URL,
  started?: StartedWorkers,
): SignatureBatchRunner {
  const inline = inlineRunner(ctx, init.shape);
  if (count < 1 || typeof Worker === "undefined") return inline;
  const workers: Worker[] = [];
  const queued: number[] = [];
  const pending = new Map<number, Pending>();
  let broken = false;
  let nextId = 0;
  let channel: MessageChannel | undefined;

  function failAll(): void {
    broken = true;
    for (const w of workers) w.terminate();
    for (const [id, p] of pending) {
      pending.delete(id);
      p.resolve(inline.run(p.batch) as CheckedBatch);
    }
  }

  function start(): void {
    if (started?.failed === true) return failAll();
    try {
      for (let i = 0; i < count; i++) {
        const w = started?.workers[i] ?? new Worker(workerUrl, { type: "module" });
        w.onmessage = (event: MessageEvent) => {
          const { id, ...result } = event.data as { id: number } & CheckedBatch;
          const p = pending.get(id);
          if (p === undefined) return;
          pending.delete(id);
          queued[p.worker]--;
          p.resolve(result);
        };
        w.onerror = (event: ErrorEvent) => {
          event.preventDefault();
          failAll();
        };
        w.postMessage({ type: "init", ...init } satisfies GateWorkerInit);
        workers.push(w);
        queued.push(0);
      }
    } catch {
      // No workers here (a sandbox without them): this thread checks everything.
      failAll();
    }
  }

  let batches = 0;
  return {
    run(batch) {
      // A short log is checked here: a worker costs more to start than it would save.
      if (++batches <= INLINE_FIRST_BATCHES || broken) return inline.run(batch);
      if (workers.length === 0) start();
      if (broken) return inline.run(batch);
      let slot = 0;
      for (let i = 1; i < workers.length; i++) if (queued[i] < queued[slot]) slot = i;
      if (queued[slot] >= WORKER_QUEUE_DEPTH) return inline.run(batch);
      queued[slot]++;
      return new Promise((resolve) => {
        const id = nextId++;
        workers[slot].postMessage({ type: "batch", id, batch });
        // Kept in case the worker fails and this thread must check the batch itself.
        pending.set(id, { batch, worker: slot, resolve });
      });
    },
    turn() {
      if (broken || pending.size === 0) return;
      // A MessageChannel round trip is one event-loop turn in ~10 µs (setTimeout(0): ~2 ms).
      const ch = channel ??= new MessageChannel();
      return new Promise<void>((resolve) => {
        ch.port1.onmessage = () => resolve();
        ch.port2.postMessage(0);
      });
    },
    close() {
      for (const w of workers) w.terminate();
      started?.close();
      channel?.port1.close();
      channel?.port2.close();
    },
  };
}
