// How far the pack builder may run ahead of one of its workers: messages sent and not yet
// answered, and the wait once too many are (a worker slower than the builder would otherwise
// queue the whole window's bytes in its inbox). Shared by the deflate and sidecar workers.

/** Messages in flight to a worker, and the builder's wait for room. */
export class WorkerBacklog {
  readonly #max: number;
  #inFlight = 0;
  #room: PromiseWithResolvers<void> | undefined;

  /** `max` messages may be unanswered before {@linkcode WorkerBacklog.wait} makes the caller wait. */
  constructor(max: number) {
    this.#max = max;
  }

  /** A message went to the worker. */
  sent(): void {
    this.#inFlight++;
  }

  /** The worker answered one; a waiting builder goes on once half the room is free. */
  answered(): void {
    this.#inFlight--;
    if (this.#room !== undefined && this.#inFlight <= this.#max / 2) {
      this.#room.resolve();
      this.#room = undefined;
    }
  }

  /** The worker failed: a waiting builder gets the error. */
  failed(error: Error): void {
    this.#room?.reject(error);
    this.#room = undefined;
  }

  /** Undefined while there is room; otherwise resolves once there is. */
  wait(): Promise<void> | undefined {
    if (this.#inFlight <= this.#max) return undefined;
    this.#room ??= Promise.withResolvers<void>();
    return this.#room.promise;
  }
}
