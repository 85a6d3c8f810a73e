/**
 * The notification manager: one bounded first-in-first-out queue per channel, drained by one
 * worker per channel so a channel sees its notifications in order. An attempt that fails in a
 * way that may pass later (5xx, timeout, no connection) is retried after a doubling backoff;
 * every delivery's outcome goes to `onDelivery` (the run records it). Nothing here blocks the
 * caller: `notify` only queues, a full queue drops and counts, and `drain` waits at most its
 * deadline. Time comes from the injected clock, so retry tests run on a fake one.
 */
import type { Clock } from "../io/mod.ts";
import type { AttemptResult, Channel, Delivery } from "./channel.ts";
import { type Notification, wants } from "./events.ts";

/** Limits of the manager (`tuning.notify`). */
export interface ManagerLimits {
  /** Deadline of one attempt, ms. */
  timeoutMs: number;
  /** Attempts per notification. */
  maxAttempts: number;
  /** First backoff, ms (doubles per attempt). */
  backoffBaseMs: number;
  /** Longest backoff (and longest `Retry-After` honoured), ms. */
  backoffMaxMs: number;
  /** Notifications waiting per channel. */
  queueSize: number;
}

/** Counts of one channel. */
// A type (not an interface) so it passes as a JSON object in the run summary.
export type ChannelTally = {
  /** Channel name. */
  channel: string;
  /** Where it goes (printable). */
  target: string;
  /** Delivered. */
  delivered: number;
  /** Failed after its attempts, or refused for good. */
  failed: number;
  /** Dropped: the queue was full, or the run ended before it was sent. */
  dropped: number;
};

/** Options of {@linkcode NotificationManager}. */
export interface ManagerOptions {
  /** Channels. */
  channels: readonly Channel[];
  /** Limits. */
  limits: ManagerLimits;
  /** Clock (backoff, attempt deadlines). */
  clock: Clock;
  /** Told about every delivery's outcome; its errors and slowness never reach the run. */
  onDelivery?: (delivery: Delivery) => void | Promise<void>;
  /** Told about each attempt as it ends (tests wait on it). */
  onAttempt?: (channel: string, id: string, attempt: number, result: AttemptResult) => void;
}

interface Lane {
  channel: Channel;
  queue: Notification[];
  running: boolean;
  tally: ChannelTally;
}

/** Backoff before attempt `attempt + 1` (attempt counts from 1): base·2^(attempt-1), capped. */
export function backoffMs(attempt: number, limits: ManagerLimits): number {
  return Math.min(limits.backoffBaseMs * 2 ** (attempt - 1), limits.backoffMaxMs);
}

/**
 * Fans notifications out to channels.
 *
 * @example
 * ```ts ignore
 * const manager = new NotificationManager({ channels, limits, clock: systemClock });
 * manager.notify(notification);
 * await manager.drain(30_000);
 * ```
 */
export class NotificationManager {
  readonly #options: ManagerOptions;
  readonly #lanes: Lane[];
  readonly #closing = new AbortController();
  readonly #recorded = new Set<Promise<void>>();
  #idle: (() => void)[] = [];

  constructor(options: ManagerOptions) {
    this.#options = options;
    this.#lanes = options.channels.map((channel) => ({
      channel,
      queue: [],
      running: false,
      tally: { channel: channel.name, target: channel.target, delivered: 0, failed: 0, dropped: 0 },
    }));
  }

  /** Channel names. */
  get channels(): string[] {
    return this.#lanes.map((l) => l.channel.name);
  }

  /** Queues `notification` on every channel that wants it; never waits. */
  notify(notification: Notification): void {
    for (const lane of this.#lanes) {
      if (!wants(lane.channel.events, notification.event)) continue;
      if (lane.channel.accepts?.(notification) === false) continue;
      if (this.#closing.signal.aborted) {
        this.#finish(lane, notification, "dropped", 0, null, "the run had ended");
      } else if (lane.queue.length >= this.#options.limits.queueSize) {
        this.#finish(lane, notification, "dropped", 0, null, "queue full");
      } else {
        lane.queue.push(notification);
        if (!lane.running) this.#run(lane);
      }
    }
  }

  /** Counts per channel so far. */
  tally(): ChannelTally[] {
    return this.#lanes.map((l) => ({ ...l.tally }));
  }

  /**
   * Waits until every queue is empty and every outcome recorded, or `timeoutMs` passed; then
   * stops: what is still queued is dropped (and recorded), an attempt in flight is aborted.
   */
  async drain(timeoutMs: number): Promise<ChannelTally[]> {
    const settled = new AbortController();
    const deadline = this.#options.clock.sleep(timeoutMs, settled.signal);
    await Promise.race([this.#allIdle(), deadline]);
    settled.abort();
    this.#closing.abort();
    for (const lane of this.#lanes) {
      for (const n of lane.queue.splice(0)) {
        this.#finish(lane, n, "dropped", 0, null, "not sent before the run ended");
      }
    }
    await this.#allIdle();
    await Promise.allSettled([...this.#recorded]);
    return this.tally();
  }

  #allIdle(): Promise<void> {
    if (this.#lanes.every((l) => !l.running && l.queue.length === 0)) {
      return Promise.allSettled([...this.#recorded]).then(() => {});
    }
    return new Promise<void>((resolve) => this.#idle.push(resolve)).then(() => this.#allIdle());
  }

  async #run(lane: Lane): Promise<void> {
    lane.running = true;
    try {
      while (lane.queue.length > 0) {
        const next = lane.queue.shift() as Notification;
        await this.#deliver(lane, next);
      }
    } finally {
      lane.running = false;
      const waiting = this.#idle;
      this.#idle = [];
      for (const wake of waiting) wake();
    }
  }

  async #deliver(lane: Lane, n: Notification): Promise<void> {
    const { limits, clock } = this.#options;
    let last: AttemptResult = { ok: false, retryable: true, status: null, error: "not sent" };
    for (let attempt = 1; attempt <= limits.maxAttempts; attempt++) {
      if (this.#closing.signal.aborted) {
        this.#finish(lane, n, "dropped", attempt - 1, statusOf(last), "the run had ended");
        return;
      }
      last = await this.#attempt(lane.channel, n);
      this.#options.onAttempt?.(lane.channel.name, n.id, attempt, last);
      if (last.ok) {
        this.#finish(lane, n, "delivered", attempt, last.status, null);
        return;
      }
      if (!last.retryable || attempt === limits.maxAttempts) {
        this.#finish(lane, n, "failed", attempt, last.status, last.error);
        return;
      }
      const wait = Math.min(
        Math.max(backoffMs(attempt, limits), last.retryAfterMs ?? 0),
        limits.backoffMaxMs,
      );
      await clock.sleep(wait, this.#closing.signal);
    }
  }

  /** One attempt under its deadline (the clock's), aborted when the run ends. */
  async #attempt(channel: Channel, n: Notification): Promise<AttemptResult> {
    const abort = new AbortController();
    const stop = () => abort.abort();
    this.#closing.signal.addEventListener("abort", stop, { once: true });
    const timer = new AbortController();
    const timeoutMs = this.#options.limits.timeoutMs;
    const timedOut = this.#options.clock.sleep(timeoutMs, timer.signal).then(
      (): AttemptResult => {
        if (!timer.signal.aborted) abort.abort();
        return {
          ok: false,
          retryable: true,
          status: null,
          error: `no answer within ${timeoutMs / 1000} s`,
        };
      },
    );
    try {
      const sent = channel.send(n, abort.signal).catch((error): AttemptResult => ({
        ok: false,
        retryable: true,
        status: null,
        error: error instanceof Error ? error.message : String(error),
      }));
      return await Promise.race([sent, timedOut]);
    } finally {
      timer.abort();
      this.#closing.signal.removeEventListener("abort", stop);
    }
  }

  #finish(
    lane: Lane,
    n: Notification,
    outcome: Delivery["outcome"],
    attempts: number,
    status: string | null,
    error: string | null,
  ): void {
    lane.tally[outcome]++;
    const delivery: Delivery = {
      channel: lane.channel.name,
      id: n.id,
      event: n.event,
      outcome,
      attempts,
      status,
      error,
    };
    const told = (async () => {
      try {
        await this.#options.onDelivery?.(delivery);
      } catch {
        // Recording a delivery must not stop the next one; the run reports its own failures.
      }
    })();
    this.#recorded.add(told);
    told.finally(() => this.#recorded.delete(told));
  }
}

function statusOf(result: AttemptResult): string | null {
  return result.status;
}
