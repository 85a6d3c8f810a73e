// Shares the gate's line batches between this thread and worker threads (directory input
// only). This thread takes every (workers+1)-th batch itself, so a 2-core machine runs one
// worker and keeps both cores busy with a single extra isolate. A worker that cannot start or
// fails hands its batches back to this thread: results never depend on the pool.
import type { GateWorkerInit } from "./_gate_worker.ts";
import {
  checkLines,
  type LineCheckContext,
  type LineSummary,
  type RawBatch,
} from "./_line_check.ts";

/** Runs line batches somewhere. */
export interface LineBatchRunner {
  /** The summaries of one batch, in line order. */
  run(batch: RawBatch): Promise<LineSummary[]>;
  /** Stops any workers. */
  close(): void;
}

/** Runs every batch on this thread. */
export function inlineLineRunner(ctx: LineCheckContext): LineBatchRunner {
  return { run: (batch) => checkLines(batch, ctx), close() {} };
}

interface Pending {
  batch: RawBatch;
  resolve: (r: LineSummary[]) => void;
  reject: (e: unknown) => void;
}

/** A runner over `count` workers plus this thread, or inline when workers cannot start. */
export function pooledLineRunner(
  count: number,
  ctx: LineCheckContext,
  init: Omit<GateWorkerInit, "type">,
  workerUrl: URL = new URL("./_gate_worker.ts", import.meta.url),
): LineBatchRunner {
  const inline = inlineLineRunner(ctx);
  if (count < 1 || typeof Worker === "undefined") return inline;
  const workers: Worker[] = [];
  const pending = new Map<number, Pending>();
  let broken = false;
  let next = 0;
  let nextId = 0;

  function failAll(): void {
    broken = true;
    for (const w of workers) w.terminate();
    for (const [id, p] of pending) {
      pending.delete(id);
      checkLines(p.batch, ctx).then(p.resolve, p.reject);
    }
  }

  try {
    for (let i = 0; i < count; i++) {
      const w = new Worker(workerUrl, { type: "module" });
      w.onmessage = (event: MessageEvent) => {
        const { id, summaries } = event.data as { id: number; summaries: LineSummary[] };
        const p = pending.get(id);
        if (p === undefined) return;
        pending.delete(id);
        p.resolve(summaries);
      };
      w.onerror = (event: ErrorEvent) => {
        event.preventDefault();
        failAll();
      };
      w.postMessage({ type: "init", ...init } satisfies GateWorkerInit);
      workers.push(w);
    }
  } catch {
    for (const w of workers) w.terminate();
    return inline;
  }

  return {
    run(batch) {
      const slot = next++ % (workers.length + 1);
      if (broken || slot === workers.length) return inline.run(batch);
      return new Promise((resolve, reject) => {
        const id = nextId++;
        // Posted by copy, not transfer: the batch stays here in case the worker fails.
        pending.set(id, { batch, resolve, reject });
        workers[slot].postMessage({ type: "batch", id, batch });
      });
    },
    close() {
      for (const w of workers) w.terminate();
    },
  };
}
