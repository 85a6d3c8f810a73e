// Where a window's large members (the log and the evidence CSV) are compressed: on this thread,
// or on a worker (`_deflate_worker.ts`) so that deflating them overlaps the rest of the
// builder's pass over the log. Both run the same `WindowCompression` (which also reads the
// log's lines back into the CSV rows and the facts), whose bytes depend only on a member's
// content, so the pack is the same byte for byte either way. Writes to the
// worker are batched into pieces; at most a few pieces are in flight, so a slow worker holds
// the builder back instead of queueing the whole log in memory.
import { WorkerBacklog } from "./_worker_backlog.ts";
import { CompliancePackError } from "./errors.ts";
import type { LogFacts } from "../pack_format/mod.ts";
import { type CompressedWindow, WindowCompression } from "./_window_log.ts";
import type { PreparedMember } from "./zip_writer.ts";

/** A message to the deflate worker. */
export type DeflateRequest =
  | { type: "write"; name: string; bytes: Uint8Array }
  | { type: "finish"; names: string[] };

/** A message from the deflate worker. */
export type DeflateReply =
  | { type: "written" }
  | { type: "finished"; members: PreparedMember[]; facts: LogFacts }
  | { type: "failed"; message: string };

/**
 * Compresses named members fed piece by piece, in order per member; the log member's lines
 * also make the CSV member and the facts (see `WindowCompression`).
 */
export interface MembersDeflate {
  /** Appends bytes to member `name` (copied: the caller may reuse its buffer). */
  write(name: string, bytes: Uint8Array): void;
  /**
   * Appends bytes to member `name`, handing them over: a worker gets their buffer moved, not
   * copied, and the caller must not use them (or their buffer) again.
   */
  give(name: string, bytes: Uint8Array): void;
  /** A promise to wait on before writing more, when too much is queued; else undefined. */
  backlog(): Promise<void> | undefined;
  /** Ends the members and returns them in the order of `names`, with the log's facts. */
  finish(names: readonly string[]): Promise<CompressedWindow>;
  /** Releases what it holds (the worker), finished or not. */
  close(): void;
}

/** Compression on this thread. */
export function inThreadDeflate(): MembersDeflate {
  let window = new WindowCompression();
  return {
    write: (name, bytes) => window.write(name, bytes),
    give: (name, bytes) => window.write(name, bytes),
    backlog: () => undefined,
    finish: (names) =>
      Promise.resolve().then(() => {
        const done = window.finish(names);
        window = new WindowCompression();
        return done;
      }),
    close: () => (window = new WindowCompression()),
  };
}

// Pieces posted to the worker, and how many may wait there.
const PIECE_BYTES = 256 * 1024;
const MAX_IN_FLIGHT = 16;

/** Options for {@linkcode offThreadDeflate}. */
export interface OffThreadDeflateOptions {
  /**
   * Keep the worker after `finish`, for more members (the pack's manifest after its window);
   * the caller then always calls `close`. Default false: `finish` stops the worker.
   */
  reusable?: boolean;
}

/**
 * Compression on a worker thread (falls back to this thread where workers do not exist).
 * Throws {@linkcode CompliancePackError} `compliance.deflate_failed` from `finish` (or the
 * next `backlog` wait) when the worker fails.
 */
export function offThreadDeflate(
  workerUrl: URL = new URL("./_deflate_worker.ts", import.meta.url),
  options: OffThreadDeflateOptions = {},
): MembersDeflate {
  if (typeof Worker === "undefined") return inThreadDeflate();
  return new WorkerDeflate(new Worker(workerUrl, { type: "module" }), options.reusable === true);
}

/**
 * One whole member compressed by `deflate` (the same bytes as `prepareMember`): on a worker,
 * while this thread goes on with other work until it awaits the result. `bytes` are handed
 * over (see {@linkcode MembersDeflate.give}).
 */
export async function compressMember(
  deflate: MembersDeflate,
  name: string,
  bytes: Uint8Array,
): Promise<PreparedMember> {
  deflate.give(name, bytes);
  const { members: [member] } = await deflate.finish([name]);
  return member;
}

class WorkerDeflate implements MembersDeflate {
  #worker: Worker | undefined;
  #pieces = new Map<string, { bytes: Uint8Array<ArrayBuffer>; used: number }>();
  readonly #backlog = new WorkerBacklog(MAX_IN_FLIGHT);
  #finished: ((reply: DeflateReply) => void) | undefined;
  #failure: Error | undefined;
  #reusable: boolean;

  constructor(worker: Worker, reusable: boolean) {
    this.#worker = worker;
    this.#reusable = reusable;
    worker.onmessage = (event: MessageEvent) => this.#reply(event.data as DeflateReply);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#reply({ type: "failed", message: event.message });
    };
  }

  #reply(reply: DeflateReply): void {
    if (reply.type === "written") {
      this.#backlog.answered();
      return;
    }
    if (reply.type === "failed") {
      this.#failure = new CompliancePackError(
        "compliance.deflate_failed",
        `compressing the pack's log and CSV failed: ${reply.message}`,
      );
      this.#backlog.failed(this.#failure);
    }
    this.#finished?.(reply);
  }

  write(name: string, bytes: Uint8Array): void {
    let piece = this.#pieces.get(name);
    let at = 0;
    while (at < bytes.length) {
      if (piece === undefined) {
        piece = { bytes: new Uint8Array(PIECE_BYTES), used: 0 };
        this.#pieces.set(name, piece);
      }
      const n = Math.min(bytes.length - at, PIECE_BYTES - piece.used);
      piece.bytes.set(bytes.subarray(at, at + n), piece.used);
      piece.used += n;
      at += n;
      if (piece.used === PIECE_BYTES) {
        this.#post(name, piece.bytes);
        this.#pieces.delete(name);
        piece = undefined;
      }
    }
  }

  give(name: string, bytes: Uint8Array): void {
    // What was written before goes first, then these bytes as they are.
    const piece = this.#pieces.get(name);
    if (piece !== undefined) {
      this.#post(name, piece.bytes.slice(0, piece.used));
      this.#pieces.delete(name);
    }
    if (bytes.length === 0) return;
    if (bytes.buffer instanceof ArrayBuffer) this.#post(name, bytes as Uint8Array<ArrayBuffer>);
    else this.write(name, bytes);
  }

  #post(name: string, bytes: Uint8Array<ArrayBuffer>): void {
    if (this.#failure !== undefined) throw this.#failure;
    this.#backlog.sent();
    const message: DeflateRequest = { type: "write", name, bytes };
    (this.#worker as Worker).postMessage(message, [bytes.buffer]);
  }

  backlog(): Promise<void> | undefined {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return this.#backlog.wait();
  }

  async finish(names: readonly string[]): Promise<CompressedWindow> {
    for (const [name, piece] of this.#pieces) {
      this.#post(name, piece.bytes.slice(0, piece.used));
    }
    this.#pieces.clear();
    const reply = new Promise<DeflateReply>((resolve) => (this.#finished = resolve));
    const message: DeflateRequest = { type: "finish", names: [...names] };
    (this.#worker as Worker).postMessage(message);
    let r: DeflateReply | undefined;
    try {
      r = await reply;
    } finally {
      this.#finished = undefined;
      if (!this.#reusable || r?.type !== "finished") this.close();
    }
    if (r.type !== "finished") throw this.#failure ?? new Error("deflate worker: no result");
    return { members: r.members, facts: r.facts };
  }

  close(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
  }
}
