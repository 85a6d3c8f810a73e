/**
 * What SIGINT and SIGTERM do to a run. The first asks it to stop: no new agents, the running
 * ones drain (`drain_timeout_s`), then are killed, and the run records its end
 * (`run.stop_requested`, `run.finished`, checkpoints, summary; exit 1). A second signal, or
 * the first one's grace ({@linkcode stopGraceMs}) running out with the run still not ended,
 * ends it at once: every agent's process group on this host is killed and the process exits
 * with 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), leaving its records as a
 * crash would — whole, the run still marked running, so the next `bernstein run` ends any
 * leftover and resumes it. The decisions live here (testable on a fake clock); the CLI wires
 * the process's signals and its exit.
 */
import type { Config } from "../config/mod.ts";
import type { Clock } from "../io/mod.ts";
import { settleGraceMs } from "./stopping.ts";

/** The signals a run answers. */
export type StopSignal = "SIGINT" | "SIGTERM";

/** What a run offers its stop handler. */
export interface RunStopControl {
  /** Asks the run to stop (drain, kill, record the end). */
  stop(reason: string): void;
  /** Kills every agent's process group on this host at once (no waiting, no records). */
  killAgentsNow(): void;
  /** How long after the first signal the run may take to end before it is ended at once. */
  graceMs: number;
}

/** What happens on a signal. */
export interface StopSignalActions {
  /** The first signal: a graceful stop. */
  stop(reason: string): void;
  /** A second signal, or the grace ran out: end now, exit with `exitCode`. */
  endNow(reason: string, exitCode: number): void;
}

const SIGNAL_NUMBERS: Readonly<Record<StopSignal, number>> = { SIGINT: 2, SIGTERM: 15 };

/** The exit code of a run ended at once by `signal`: 128 + its number, as a shell reports it. */
export function signalExitCode(signal: StopSignal): number {
  return 128 + SIGNAL_NUMBERS[signal];
}

/**
 * The longest a stopped run may take to end: the loop reaching the stop (one tick), the drain,
 * two rounds of the agents' kill grace (the second for agents whose start was being recorded),
 * the three bounded waits for their watches and for merges (kill grace + 10 s each,
 * stopping.ts), the end-of-run notifications' drain, and 30 s for the end records
 * (run.finished, checkpoints, summary). Defaults: 3 + 60 + 2 × 10 + 3 × 20 + 30 + 30 = 203 s.
 */
export function stopGraceMs(config: Pick<Config, "tuning">): number {
  const t = config.tuning;
  const seconds = t.orchestrator.tick_interval_s + t.orchestrator.drain_timeout_s +
    2 * t.agent.kill_grace_s + t.notify.drain_timeout_s + END_RECORDS_S;
  return Math.ceil(seconds * 1000) + 3 * settleGraceMs(config);
}

const END_RECORDS_S = 30;

/** Counts a run's stop signals and keeps the first one's deadline. */
export class StopSignals {
  readonly #clock: Clock;
  readonly #graceMs: number;
  readonly #actions: StopSignalActions;
  #first: StopSignal | undefined;
  #done = false;
  readonly #deadline = new AbortController();

  constructor(clock: Clock, graceMs: number, actions: StopSignalActions) {
    this.#clock = clock;
    this.#graceMs = graceMs;
    this.#actions = actions;
  }

  /** A signal arrived. */
  receive(signal: StopSignal): void {
    if (this.#done) return;
    if (this.#first !== undefined) {
      this.#end(`a second signal (${signal})`, signal);
      return;
    }
    this.#first = signal;
    this.#actions.stop(`${signal} received`);
    void this.#clock.sleep(this.#graceMs, this.#deadline.signal).then(() => {
      if (this.#done || this.#deadline.signal.aborted) return;
      this.#end(`the run did not end within ${this.#graceMs / 1000}s of ${signal}`, signal);
    });
  }

  /** The run ended by itself: later signals and the deadline do nothing. */
  close(): void {
    this.#done = true;
    this.#deadline.abort();
  }

  #end(reason: string, signal: StopSignal): void {
    this.close();
    this.#actions.endNow(reason, signalExitCode(signal));
  }
}
