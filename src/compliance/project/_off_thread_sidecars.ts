// Where the pack builder reads its window's signature sidecars and collects them into the
// pack's signature members: on a worker (`_sidecar_worker.ts`), so that the sidecar opens
// (one a window entry, each with Deno's path check: ~1.5-2.5 s of CPU per 100,000) and the
// members' hashing run beside the main thread's pass over the log instead of on it; or on
// this thread. Both run the same `SidecarCollector` over the same entries in log order: the
// verifier's `sidecarReader` (folders listed once, symlinks never opened, reads bounded), the
// same members and the same problems, whatever thread read them.
import { WorkerBacklog } from "../_worker_backlog.ts";
import { type SignatureColumns, SignatureMembers } from "../window_members.ts";
import { sidecarReader } from "../../verify/mod.ts";

/** A window entry whose sidecar could not be packed. */
export interface SidecarProblem {
  /** The entry's artefact. */
  artefact: string;
  /** The entry hash. */
  hash: string;
  /** Why it was not packed (`is a symlink (refused)` …); undefined when it is missing. */
  problem: string | undefined;
}

/** The window's signatures, in log order of their entries. */
export interface WindowSignatures {
  /** The signature members. */
  signatures: SignatureMembers;
  /** Entries without a usable sidecar, in log order. */
  problems: SidecarProblem[];
}

/**
 * Reads each window entry's sidecar from a lineage folder and keeps it as a signature member
 * (an entry hash's first signature; later ones are ignored), or its problem.
 */
export class SidecarCollector {
  #read: ReturnType<typeof sidecarReader>;
  #members = new SignatureMembers();
  #problems: SidecarProblem[] = [];

  constructor(lineageDir: string) {
    this.#read = sidecarReader(lineageDir);
  }

  /** The next window entry, in log order. */
  add(artefact: string, hash: string): void {
    const sig = this.#read(artefact, hash);
    if (sig instanceof Uint8Array) this.#members.add(hash, sig);
    else this.#problems.push({ artefact, hash, problem: sig?.problem });
  }

  /** What was collected. */
  result(): WindowSignatures {
    return { signatures: this.#members, problems: this.#problems };
  }
}

/** Collects a window's signatures, on this thread or another (see the file's note). */
export interface SidecarSignatures {
  /** The next window entry, in log order. */
  add(artefact: string, hash: string): void;
  /** A promise to wait on before adding more, when too much is queued; else undefined. */
  backlog(): Promise<void> | undefined;
  /** Every entry has been added: the signatures. */
  finish(): Promise<WindowSignatures>;
  /** Releases what it holds (the worker), finished or not. */
  close(): void;
}

/** A message to the sidecar worker. */
export type SidecarRequest =
  | { type: "open"; lineageDir: string }
  | { type: "read"; artefacts: string[]; hashes: string[] }
  | { type: "finish" };

/** A message from the sidecar worker. */
export type SidecarReply =
  | { type: "read" }
  | { type: "finished"; columns: SignatureColumns; problems: SidecarProblem[] }
  | { type: "failed"; name: string; message: string };

/** Sidecars read on this thread. */
export function inThreadSidecars(lineageDir: string): SidecarSignatures {
  const collector = new SidecarCollector(lineageDir);
  return {
    add: (artefact, hash) => collector.add(artefact, hash),
    backlog: () => undefined,
    finish: () => Promise.resolve(collector.result()),
    close: () => {},
  };
}

// Entries posted to the worker at a time, and how many batches may wait there.
const BATCH_ENTRIES = 512;
const MAX_IN_FLIGHT = 16;

/**
 * Sidecars read on a worker thread (this thread where workers do not exist). A failure there
 * is thrown from `finish` (or the next `backlog` wait) as the error the reader threw: the
 * same class for the runtime's file errors, and the same message.
 */
export function offThreadSidecars(
  lineageDir: string,
  workerUrl: URL = new URL("./_sidecar_worker.ts", import.meta.url),
): SidecarSignatures {
  if (typeof Worker === "undefined") return inThreadSidecars(lineageDir);
  return new WorkerSidecars(new Worker(workerUrl, { type: "module" }), lineageDir);
}

/** The error the worker reported, as its own class when it is one of the runtime's. */
export function rebuiltError(name: string, message: string): Error {
  const runtime: unknown = Object.getOwnPropertyDescriptor(Deno.errors, name)?.value;
  if (typeof runtime === "function" && runtime.prototype instanceof Error) {
    const error: unknown = Reflect.construct(runtime, [message]);
    if (error instanceof Error) return error;
  }
  const error = new Error(message);
  error.name = name;
  return error;
}

class WorkerSidecars implements SidecarSignatures {
  #worker: Worker | undefined;
  #artefacts: string[] = [];
  #hashes: string[] = [];
  readonly #backlog = new WorkerBacklog(MAX_IN_FLIGHT);
  #finished: ((reply: SidecarReply) => void) | undefined;
  #failure: Error | undefined;

  constructor(worker: Worker, lineageDir: string) {
    this.#worker = worker;
    worker.onmessage = (event: MessageEvent) => this.#reply(event.data as SidecarReply);
    worker.onerror = (event: ErrorEvent) => {
      event.preventDefault();
      this.#reply({ type: "failed", name: "Error", message: event.message });
    };
    this.#send({ type: "open", lineageDir });
  }

  #send(message: SidecarRequest): void {
    (this.#worker as Worker).postMessage(message);
  }

  #reply(reply: SidecarReply): void {
    if (reply.type === "read") {
      this.#backlog.answered();
      return;
    }
    if (reply.type === "failed") {
      this.#failure ??= rebuiltError(reply.name, reply.message);
      this.#backlog.failed(this.#failure);
    }
    this.#finished?.(reply);
  }

  add(artefact: string, hash: string): void {
    this.#artefacts.push(artefact);
    this.#hashes.push(hash);
    if (this.#hashes.length === BATCH_ENTRIES) this.#post();
  }

  #post(): void {
    if (this.#failure !== undefined) throw this.#failure;
    if (this.#hashes.length === 0) return;
    this.#backlog.sent();
    this.#send({ type: "read", artefacts: this.#artefacts, hashes: this.#hashes });
    this.#artefacts = [];
    this.#hashes = [];
  }

  backlog(): Promise<void> | undefined {
    if (this.#failure !== undefined) return Promise.reject(this.#failure);
    return this.#backlog.wait();
  }

  async finish(): Promise<WindowSignatures> {
    this.#post();
    const reply = new Promise<SidecarReply>((resolve) => (this.#finished = resolve));
    // A worker that failed already has said so: no finish is awaited from it.
    if (this.#failure === undefined) this.#send({ type: "finish" });
    let r: SidecarReply | undefined;
    try {
      r = this.#failure === undefined ? await reply : undefined;
    } finally {
      this.#finished = undefined;
      this.close();
    }
    if (r?.type !== "finished") throw this.#failure ?? new Error("sidecar worker: no result");
    return { signatures: SignatureMembers.fromColumns(r.columns), problems: r.problems };
  }

  close(): void {
    this.#worker?.terminate();
    this.#worker = undefined;
  }
}
