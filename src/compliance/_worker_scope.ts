// The global scope of the pack builder's workers (the deflate and sidecar workers), checked
// rather than cast: a worker file loaded as a plain module refuses to start.

/** What a worker uses of its global scope. */
export interface WorkerScope {
  onmessage: ((event: MessageEvent) => void) | null;
  postMessage(message: unknown, transfer?: Transferable[]): void;
}

function isWorkerScope(g: unknown): g is WorkerScope {
  return typeof g === "object" && g !== null && "postMessage" in g &&
    typeof g.postMessage === "function";
}

/** This worker's scope; throws (naming `what`) when the file is not running as a worker. */
export function workerScope(what: string): WorkerScope {
  const scope: unknown = globalThis;
  if (!isWorkerScope(scope)) throw new Error(`the ${what} runs only as a worker`);
  return scope;
}
