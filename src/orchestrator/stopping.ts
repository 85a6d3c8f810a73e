/**
 * Stopping a run: an operator's stop request (running agents drain within the drain timeout,
 * or are killed at once with `--force`), the zero-terminal backstop (every unfinished task
 * fails), and the kill of every live agent both use. Agents killed here end their tasks as
 * abandoned in the ledger; nothing merged is undone. Every wait here is bounded: once the
 * agents are told to stop, what they leave behind (an agent watch whose exit never comes —
 * a worker host killed mid-task —, a completion stuck in a gate, a merge) gets `kill_grace_s`
 * + 10 s to settle, and the stop goes on without it, saying so (docs/DESIGN.md "Stopping a
 * run").
 */
import type { TaskStore } from "../tasks/mod.ts";
import { CLAIMED_STATUSES } from "../tasks/mod.ts";
import type { MergeQueue } from "./merge_queue.ts";
import type { Recorder } from "./recorder.ts";
import type { RunEnd } from "./outcome.ts";
import type { RunContext } from "./run_context.ts";
import type { BackgroundWork, RunningSession, SessionTable } from "./sessions.ts";
import { isSettledStatus } from "./termination.ts";
import { killProcessGroup } from "./pid_liveness.ts";

/**
 * A SIGKILLed agent still needs the CPU once to exit, which takes seconds on a loaded machine
 * (or at a low priority): the wait for what the agents leave counts that on top of their kill
 * grace, so a short `kill_grace_s` does not leave watches of agents that are merely dying.
 */
const EXIT_ALLOWANCE_S = 10;

/**
 * How long a stop waits for the agents' watches and checks, and again for merges in progress:
 * `kill_grace_s` + 10 s.
 */
export function settleGraceMs(config: Pick<RunContext["config"], "tuning">): number {
  return (config.tuning.agent.kill_grace_s + EXIT_ALLOWANCE_S) * 1000;
}

/** What stopping works with. */
export interface StoppingDeps {
  /** Run context (config timeouts, clock, run id). */
  ctx: Pick<RunContext, "config" | "clock" | "runId">;
  /** Task store. */
  store: TaskStore;
  /** Where facts go. */
  recorder: Recorder;
  /** Live sessions. */
  sessions: SessionTable;
  /** Background work (agent watches, merges). */
  work: BackgroundWork;
  /** The merge queue (a stop waits for merges in progress). */
  merges: MergeQueue;
  /** Wakes the loop. */
  wake: () => void;
}

/** How a run ended and why. */
export interface RunStop {
  /** End kind. */
  end: RunEnd;
  /** In words. */
  reason: string;
}

const ACTIVE: ReadonlySet<string> = new Set(CLAIMED_STATUSES);

/** Stop requests, draining, killing and the backstop. */
export class Stopping {
  readonly #deps: StoppingDeps;
  #requested: string | undefined;
  #force = false;
  #by: "operator" | "orchestrator" = "operator";

  constructor(deps: StoppingDeps) {
    this.#deps = deps;
  }

  /** True once a stop was requested. */
  get requested(): boolean {
    return this.#requested !== undefined;
  }

  /**
   * Asks the run to stop: no new spawns; running agents drain (or are killed with `force`).
   * `by` says who asked (the operator, or the run itself: a spent error budget).
   */
  request(reason: string, force = false, by: "operator" | "orchestrator" = "operator"): void {
    if (this.#requested === undefined) this.#by = by;
    this.#requested ??= reason;
    this.#force ||= force;
    this.#deps.wake();
  }

  /** Carries out the requested stop: drain (or kill), wait for merges in progress. */
  async drain(): Promise<RunStop> {
    const { ctx, recorder, sessions, work } = this.#deps;
    const reason = this.#requested ?? "stop";
    await recorder.record({
      kind: "run.stop_requested",
      runId: ctx.runId,
      reason,
      force: this.#force,
      running: sessions.size,
      by: this.#by,
    });
    if (this.#force) {
      await this.killAll(`stopped: ${reason}`);
    } else if (sessions.size + work.size > 0) {
      await this.#drainAgents(reason);
    }
    await this.settleWithinGrace("merges in progress", this.#deps.merges.drained());
    return { end: "stopped", reason: `stopped: ${reason}` };
  }

  async #drainAgents(reason: string): Promise<void> {
    const { ctx, sessions, work } = this.#deps;
    const drainMs = ctx.config.tuning.orchestrator.drain_timeout_s * 1000;
    const deadline = ctx.clock.monotonicMs() + drainMs;
    while (sessions.size + work.size > 0 && ctx.clock.monotonicMs() < deadline) {
      await Promise.race([work.settled(), ctx.clock.sleep(500)]);
    }
    // A spawn still under way counts too: its agent joins the table only once its start is
    // recorded, and would run on after the run ended.
    if (sessions.size + work.size > 0) {
      await this.killAll(`stopped after the ${drainMs / 1000}s drain: ${reason}`);
    }
  }

  /**
   * Kills every live agent, waits for their exits, and abandons what is still active. An agent
   * whose start was still being recorded joins the table while the others die: it is stopped
   * in a second round, so no agent of the run outlives it.
   */
  async killAll(reason: string): Promise<void> {
    const { ctx, store, recorder, sessions, work } = this.#deps;
    const grace = ctx.config.tuning.agent.kill_grace_s * 1000;
    const told = new Set<RunningSession>();
    const stopUntold = async () => {
      const untold = sessions.all().filter((s) => !told.has(s));
      for (const s of untold) told.add(s);
      await Promise.all(untold.map((s) => s.execution?.terminate(grace).catch(() => {})));
      return untold.length;
    };
    await stopUntold();
    await this.settleWithinGrace("agent watches and checks", work.settled());
    if (await stopUntold() > 0) {
      await this.settleWithinGrace("agent watches and checks", work.settled());
    }
    for (const s of sessions.all()) {
      const task = await store.get(s.task.id);
      if (task && ACTIVE.has(task.status)) {
        await store.transition(task.id, "failed", {
          actor: "orchestrator",
          reason,
          terminal_reason: reason,
        }).catch(() => {});
        await recorder.record({ kind: "task.abandoned", taskId: task.id, reason });
      }
      await sessions.finish(s, "abandoned");
    }
  }

  /**
   * Waits for `work` at most {@linkcode settleGraceMs} (the run's clock); what has not settled
   * by then is left behind, recorded as `run.stop_unsettled` unless `record` is false (a run
   * halted by a storage failure writes nothing more). A stop that waited for it would never
   * end when it never settles. True when it settled.
   */
  async settleWithinGrace(what: string, work: Promise<unknown>, record = true): Promise<boolean> {
    const { ctx, recorder } = this.#deps;
    const graceMs = settleGraceMs(ctx.config);
    const timer = new AbortController();
    let settled = false;
    await Promise.race([
      work.then(() => (settled = true), () => (settled = true)),
      ctx.clock.sleep(graceMs, timer.signal),
    ]);
    timer.abort();
    if (!settled && record) {
      await recorder.record({
        kind: "run.stop_unsettled",
        runId: ctx.runId,
        what,
        waitedS: graceMs / 1000,
      });
    }
    return settled;
  }

  /**
   * SIGKILLs the process group of every agent running on this host, at once and without
   * waiting or recording: for a run that must end now (a second stop signal, stop_signals.ts).
   * Agents whose start is still being recorded are killed too: not yet in the table, they
   * would outlive the run. Agents on worker hosts are theirs to stop; the next run ends any
   * leftover.
   */
  killNow(): void {
    const { sessions } = this.#deps;
    const executions = [...sessions.all().map((s) => s.execution), ...sessions.starting()];
    for (const execution of executions) {
      if (execution !== undefined && execution.host === undefined) {
        killProcessGroup(execution.pid);
      }
    }
  }

  /** The zero-terminal backstop: fail every unfinished task and stop. */
  async backstop(taskIds: readonly string[], reason: string): Promise<RunStop> {
    const { ctx, store, recorder } = this.#deps;
    await this.killAll(`backstop: ${reason}`);
    for (const id of taskIds) {
      const task = await store.get(id);
      if (!task || isSettledStatus(task.status)) continue;
      await store.transition(id, "failed", {
        actor: "orchestrator",
        reason: `backstop: ${reason}`,
        terminal_reason: `backstop: ${reason}`,
      }).catch(() => {});
      await recorder.record({
        kind: "task.abandoned",
        taskId: id,
        reason: "backstop",
        detail: reason,
      });
    }
    await recorder.record({ kind: "run.backstop", runId: ctx.runId, reason, tasks: [...taskIds] });
    return { end: "backstop", reason: `backstop: ${reason}` };
  }
}
