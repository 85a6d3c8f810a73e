/**
 * Who is working right now: the table of live agent sessions (spawned and not yet merged,
 * refused or failed), each with its task, execution and session file, and the background work
 * (agent watches, merges, clean-ups) the loop waits for before it may stop.
 */
import type { Clock } from "../io/mod.ts";
import type { LiveAgent } from "../report/mod.ts";
import type { Task } from "../tasks/mod.ts";
import type { Execution } from "./executor.ts";
import type { AgentRow } from "./reporter.ts";
import { saveSessionFile, type SessionFile } from "./run_state.ts";

/** One agent session from spawn to merge (or refusal). */
export interface RunningSession {
  /** Session id. */
  session: string;
  /** The task as of the spawn. */
  task: Task;
  /** The live agent; absent for a session adopted on resume (its agent already finished). */
  execution?: Execution;
  /** Adapter name. */
  adapterName: string;
  /** Lineage identity of the agent (`<adapter>:<session>`). */
  agentId: string;
  /** Monotonic time of the spawn (ms). */
  startedMs: number;
  /** The persisted session file. */
  file: SessionFile;
  /** Worktree path. */
  worktree: string;
  /** Agent branch. */
  branch: string;
  /** Commit the worktree started from. */
  baseSha: string;
  /** Where it is: the agent runs, its work is checked, or it waits for / is in its merge. */
  state: "running" | "checking" | "merging";
  /** Its deadline (s) once extended; the scope's deadline until then. */
  deadlineS?: number;
  /** Wall time (ms) progress is counted from: the spawn, then each extension. */
  progressSinceMs?: number;
  /** The run's liveness check stopped it at its deadline. */
  deadlineHit?: boolean;
  /**
   * Its endpoint profile's request timeout (s) when its CLI cannot take one: the watchdog
   * stops it after that long without output (a request that never came back).
   */
  endpointTimeoutS?: number;
  /** Why the run stopped it, when the watchdog did (the attempt's failure reason). */
  stopReason?: string;
}

/** The live sessions of a run, by session id. */
export class SessionTable {
  readonly #sdd: string;
  readonly #sessions = new Map<string, RunningSession>();
  readonly #starting = new Set<Execution>();

  constructor(sdd: string) {
    this.#sdd = sdd;
  }

  /** Sessions alive now. */
  get size(): number {
    return this.#sessions.size;
  }

  /** Adds a session. */
  add(session: RunningSession): void {
    this.#sessions.set(session.session, session);
  }

  /**
   * An agent that runs but whose start is still being recorded (its session file, its task's
   * in_progress): until {@linkcode SessionTable.startRecorded} it is not in the table, yet a run
   * ended at once must still kill it ({@linkcode SessionTable.starting}).
   */
  startRecording(execution: Execution): void {
    this.#starting.add(execution);
  }

  /** The start of `execution` is recorded (it joins the table now) or was given up. */
  startRecorded(execution: Execution): void {
    this.#starting.delete(execution);
  }

  /** Agents started whose start is still being recorded. */
  starting(): Execution[] {
    return [...this.#starting];
  }

  /** Every live session, in spawn order. */
  all(): RunningSession[] {
    return [...this.#sessions.values()];
  }

  /** Ids of the tasks with a live session, sorted (the scheduler's `running`). */
  taskIds(): string[] {
    return this.all().map((s) => s.task.id).sort();
  }

  /** Ends a session: drops it and saves its file with its final state. */
  async finish(session: RunningSession, state: string): Promise<void> {
    this.#sessions.delete(session.session);
    session.execution?.release?.();
    session.file.state = state;
    await saveSessionFile(this.#sdd, session.file);
  }

  /** Lines of the live view. */
  rows(nowMonotonicMs: number): AgentRow[] {
    return this.all().map((s) => ({
      adapter: s.adapterName,
      model: s.file.model ?? "default",
      task: s.task.id,
      elapsedS: Math.round((nowMonotonicMs - s.startedMs) / 1000),
      state: s.state,
      last: s.execution?.lastText() ?? "",
    }));
  }
}

/** The live sessions as the dashboard's agent table shows them (wall-clock times). */
export function liveAgentsOf(sessions: readonly RunningSession[], clock: Clock): LiveAgent[] {
  const wall = (monotonic: number) =>
    new Date(clock.nowMs() - (clock.monotonicMs() - monotonic)).toISOString();
  return sessions.map((s) => ({
    session: s.session,
    task_id: s.task.id,
    adapter: s.adapterName,
    model: s.file.model,
    state: s.state,
    started_at: s.file.started_at,
    last_output_at: s.execution ? wall(s.execution.lastOutputMs()) : null,
    last_line: s.execution?.lastText() ?? "",
    // The CLIs report turns, tokens and cost when they exit; the model shows them then.
    turns: null,
    tokens: null,
    cost_usd: null,
  }));
}

/**
 * Background work the loop must see finish: each tracked promise is counted until it settles;
 * a failure is reported, never thrown; every settle wakes the loop.
 */
export class BackgroundWork {
  readonly #inFlight = new Set<Promise<void>>();
  #waiting = 0;
  readonly #onError: (error: Error) => void;
  readonly #onSettled: () => void;

  constructor(onError: (error: Error) => void, onSettled: () => void) {
    this.#onError = onError;
    this.#onSettled = onSettled;
  }

  /** Pieces of work not settled yet. */
  get size(): number {
    return this.#inFlight.size;
  }

  /** True while some tracked work is in progress here (not only waiting on an agent). */
  get busy(): boolean {
    return this.#inFlight.size > this.#waiting;
  }

  /** Marks tracked work as waiting on the outside world (an agent's exit) until `p` settles. */
  waiting<T>(p: Promise<T>): Promise<T> {
    this.#waiting++;
    return p.finally(() => this.#waiting--);
  }

  /** Tracks one piece of work. */
  track(work: Promise<void>): void {
    const wrapped = work.catch((error) => this.#onError(error as Error)).finally(() => {
      this.#inFlight.delete(wrapped);
      this.#onSettled();
    });
    this.#inFlight.add(wrapped);
  }

  /** Resolves when everything tracked so far has settled. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }
}
