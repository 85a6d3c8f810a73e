/**
 * When a run stops, as a pure function of a snapshot: quiescence (everything finished) or the
 * zero-terminal backstop (nothing can finish and nothing changes). The run loop carries out
 * what this decides (see stopping.ts).
 */
import { canonicalize } from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { DEAD_END_STATUSES, DEPENDENCY_SATISFIED } from "../tasks/mod.ts";

/** Fields termination reads from each task. */
export interface TerminationTask {
  /** Task id. */
  id: string;
  /** Status. */
  status: string;
  /** Optimistic-concurrency version: any change to a task bumps it. */
  version: number;
}

/** Backstop progress carried from one tick to the next. */
export interface StallState {
  /** Fingerprint of the task set when the stall began. */
  fingerprint: string;
  /** Clock time (ms) the fingerprint was first seen. */
  sinceMs: number;
  /** Ticks observed with this fingerprint. */
  ticks: number;
}

/** Input of {@linkcode decideTermination}. */
export interface TerminationInput {
  /** All tasks of the run. */
  tasks: readonly TerminationTask[];
  /** Agents alive right now. */
  runningAgents: number;
  /** Merges waiting or in progress. */
  pendingMerges: number;
  /** Tasks held back by spawn backoff this tick. */
  deferredByBackoff: number;
  /** An operator hold is active (suppresses every stop). */
  holdActive: boolean;
  /** Now (ms). */
  nowMs: number;
  /** Stall state from the previous tick. */
  stall?: StallState;
  /** `tuning.orchestrator.stalled_run_grace_s`. */
  graceS: number;
  /** `tuning.orchestrator.stalled_run_ticks`. */
  minTicks: number;
}

/** What termination decided. */
export type TerminationDecision =
  | { stop: false; stall?: StallState }
  | { stop: "quiescent"; planned: number }
  | { stop: "backstop"; failTaskIds: string[]; reason: string };

// `done` is finished for its agent; its merge is counted by `pendingMerges`.
const FINISHED: ReadonlySet<string> = new Set([DEPENDENCY_SATISFIED, "done", ...DEAD_END_STATUSES]);

/** True for a task that is merged or can never be: `closed` or a dead end. */
export function isSettledStatus(status: string): boolean {
  return status === DEPENDENCY_SATISFIED || DEAD_END.has(status);
}

const DEAD_END: ReadonlySet<string> = new Set(DEAD_END_STATUSES);

/** True when nothing more happens to a task of this status (its merge aside, for `done`). */
export function isFinishedStatus(status: string): boolean {
  return FINISHED.has(status);
}

/** A stable digest of every task's id, status and version. */
export function taskFingerprint(tasks: readonly TerminationTask[]): string {
  const rows = [...tasks].sort((a, b) => (a.id < b.id ? -1 : 1)).map((
    t,
  ) => [t.id, t.status, t.version]);
  return sha256Hex(new TextEncoder().encode(canonicalize(rows, "canon")));
}

/**
 * Decides whether the run stops. Quiescence: nothing open or running, every task finished,
 * blocked or `planned`, and at least one finished or planned. A `planned` task waits for
 * someone to open it; once no agent runs and no merge is pending nobody will, so it cannot
 * keep the run alive (it is counted, and the summary calls the run unhealthy). Zero-terminal
 * backstop: quiescent with nothing finished while some task is still unfinished, none
 * deferred by backoff, and the task fingerprint unchanged for `graceS` over at least
 * `minTicks` ticks → fail the unfinished tasks. An active hold suppresses both.
 */
export function decideTermination(input: TerminationInput): TerminationDecision {
  if (input.holdActive) return { stop: false };
  const unfinished = input.tasks.filter((t) => !FINISHED.has(t.status) && t.status !== "planned");
  const finished = input.tasks.filter((t) => FINISHED.has(t.status));
  const planned = input.tasks.filter((t) => t.status === "planned").length;
  const busy = input.runningAgents > 0 || input.pendingMerges > 0;
  if (
    !busy && (finished.length > 0 || planned > 0) &&
    input.tasks.every((t) =>
      FINISHED.has(t.status) || t.status === "blocked" || t.status === "planned"
    )
  ) {
    return { stop: "quiescent", planned };
  }
  const zeroTerminal = !busy && finished.length === 0 && unfinished.length > 0 &&
    input.deferredByBackoff === 0;
  if (!zeroTerminal) return { stop: false };
  const fingerprint = taskFingerprint(input.tasks);
  const stall = input.stall?.fingerprint === fingerprint
    ? { ...input.stall, ticks: input.stall.ticks + 1 }
    : { fingerprint, sinceMs: input.nowMs, ticks: 1 };
  if (input.nowMs - stall.sinceMs >= input.graceS * 1000 && stall.ticks >= input.minTicks) {
    return {
      stop: "backstop",
      failTaskIds: unfinished.map((t) => t.id).sort(),
      reason: `no task finished and nothing changed for ${input.graceS}s over ${stall.ticks} ticks`,
    };
  }
  return { stop: false, stall };
}
