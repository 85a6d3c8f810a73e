// What every store does after a commit: deliver the change's events to the sink in commit
// order (a refusing sink fails the caller with `task.event_not_recorded`, the change stays),
// and wake idle claimers when work may have become ready.
import { TaskEventNotRecordedError } from "./errors.ts";
import { NULL_EVENT_SINK, type TaskEvent, type TaskEventSink } from "./events.ts";

/**
 * Delivers events to a sink one batch after another, in the order batches were handed in,
 * even when callers interleave.
 *
 * @example
 * ```ts ignore
 * const delivery = new OrderedDelivery(auditSink);
 * await delivery.deliver(changes.map((c) => c.event)); // after the changes are durable
 * ```
 */
export class OrderedDelivery {
  readonly #sink: TaskEventSink;
  #chain: Promise<void> = Promise.resolve();

  constructor(sink: TaskEventSink = NULL_EVENT_SINK) {
    this.#sink = sink;
  }

  /** Queues `events` behind every earlier batch; resolves once they are recorded. */
  deliver(events: readonly TaskEvent[]): Promise<void> {
    const delivery = this.#chain.then(() => this.#send(events));
    this.#chain = delivery.catch(() => {});
    return delivery;
  }

  /** Resolves when every batch handed in so far was delivered (or refused). */
  settled(): Promise<void> {
    return this.#chain;
  }

  async #send(events: readonly TaskEvent[]): Promise<void> {
    for (const event of events) {
      try {
        await this.#sink.append(event);
      } catch (error) {
        throw new TaskEventNotRecordedError(
          `${event.type} of ${event.resource_id} is stored but its event was not recorded: ${
            (error as Error).message
          }`,
          { cause: error },
        );
      }
    }
  }
}

/** The listeners of `TaskStore.onWork`; a throwing listener never disturbs the store. */
export class WorkListeners {
  readonly #listeners = new Set<() => void>();

  /** Adds a listener; returns its unsubscribe function. */
  add(listener: () => void): () => void {
    const entry = () => listener();
    this.#listeners.add(entry);
    return () => {
      this.#listeners.delete(entry);
    };
  }

  /** Number of listeners (a backend subscribes to its engine only while there are some). */
  get size(): number {
    return this.#listeners.size;
  }

  /** Calls every listener. */
  notify(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch {
        // A wake-up is a hint; a failing listener must not fail the change that caused it.
      }
    }
  }
}
