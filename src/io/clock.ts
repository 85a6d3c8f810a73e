/** Time source. Injected everywhere so schedules and tests are deterministic. */
export interface Clock {
  /** Wall-clock milliseconds since the Unix epoch. */
  nowMs(): number;
  /** Wall-clock nanoseconds since the Unix epoch (lineage `ts_ns`). */
  nowNs(): bigint;
  /** Monotonic milliseconds, for durations and deadlines. */
  monotonicMs(): number;
  /** Resolves after `ms` milliseconds (or earlier when `signal` aborts). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** The real clock. */
export const systemClock: Clock = {
  nowMs: () => Date.now(),
  nowNs: () => {
    // Date.now() has ms resolution; performance.timeOrigin + now() gives µs-ish precision.
    const ms = performance.timeOrigin + performance.now();
    return BigInt(Math.floor(ms)) * 1_000_000n + BigInt(Math.floor((ms % 1) * 1_000_000));
  },
  monotonicMs: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        signal?.removeEventListener("abort", done);
        resolve();
      }
      signal?.addEventListener("abort", done, { once: true });
    }),
};

/** A manual clock for tests: time moves only when `advance` is called. */
export class FakeClock implements Clock {
  #ms: number;
  #sleepers: { until: number; resolve: () => void }[] = [];

  constructor(startMs = Date.UTC(2026, 0, 1)) {
    this.#ms = startMs;
  }

  nowMs(): number {
    return this.#ms;
  }

  nowNs(): bigint {
    return BigInt(this.#ms) * 1_000_000n;
  }

  monotonicMs(): number {
    return this.#ms;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (signal?.aborted) return resolve();
      this.#sleepers.push({ until: this.#ms + ms, resolve });
      signal?.addEventListener("abort", () => resolve(), { once: true });
    });
  }

  /** Moves time forward and wakes every sleeper whose deadline passed. */
  advance(ms: number): void {
    this.#ms += ms;
    const due = this.#sleepers.filter((s) => s.until <= this.#ms);
    this.#sleepers = this.#sleepers.filter((s) => s.until > this.#ms);
    for (const s of due) s.resolve();
  }
}
