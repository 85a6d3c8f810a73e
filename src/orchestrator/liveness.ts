/**
 * Liveness: an agent silent for the stall threshold (no output and no heartbeat) is stopped,
 * an agent at its deadline is given more time while it reports progress (else stopped),
 * its exit then fails the task like any other; a claim held on another host whose heartbeats
 * stopped for `stale_claim_timeout_s` is released (the task runs again elsewhere, the old
 * agent is told to stop); a manager alive past its threshold without having created a single
 * task aborts the run, leaving a diagnostic file.
 */
import { join } from "node:path";
import type { JsonObject } from "../canonical/mod.ts";
import { agentDeadlineSeconds } from "../config/mod.ts";
import { type Task, TaskStoreLockLostError } from "../tasks/mod.ts";
import { runDir } from "../io/mod.ts";
import type { Recorder } from "./recorder.ts";
import type { RunContext } from "./run_context.ts";
import type { RunningSession, SessionTable } from "./sessions.ts";

/** What the liveness checks work with. */
export interface LivenessDeps {
  /** Run context (config thresholds, server heartbeats, clock, paths). */
  ctx: Pick<RunContext, "config" | "server" | "clock" | "sdd" | "runId" | "store">;
  /** Where facts go. */
  recorder: Recorder;
  /** Live sessions. */
  sessions: SessionTable;
  /** Tasks whose spawn is under way (claimed here, agent not started yet). */
  spawning: () => ReadonlySet<string>;
}

/** A manager that created no task in time: why the run stops. */
export interface StalledManager {
  /** The outcome's reason. */
  reason: string;
}

/** Watches running agents for silence and the manager for progress. */
export class Liveness {
  readonly #deps: LivenessDeps;
  /** Sessions reported idle, until their output moves again. */
  readonly #idle = new Set<string>();
  /** Sessions stopped for stalling (each is stopped once). */
  readonly #stalled = new WeakSet<RunningSession>();
  /** The store could not say whether this run still holds it (warned once per outage). */
  #ownershipUnknown = false;

  constructor(deps: LivenessDeps) {
    this.#deps = deps;
  }

  /**
   * Reports an agent whose log has not grown for `idle_log_age_threshold_s` (once, until it
   * writes again); stops agents with no output and no heartbeat for the stall threshold.
   */
  async checkAgents(): Promise<void> {
    const { ctx } = this.#deps;
    const thresholdMs = ctx.config.tuning.agent.stall_threshold_s * 1000;
    const idleMs = ctx.config.tuning.agent.idle_log_age_threshold_s * 1000;
    const beats = new Map(ctx.server.agents().map((a) => [a.agent_id, a]));
    for (const s of this.#deps.sessions.all()) {
      if (s.state !== "running" || s.execution === undefined) continue;
      const beat = beats.get(s.session);
      const beatAge = beat ? ctx.clock.nowMs() - Date.parse(beat.last_heartbeat_at) : Infinity;
      const outputAge = ctx.clock.monotonicMs() - s.execution.lastOutputMs();
      if (s.endpointTimeoutS !== undefined && outputAge > s.endpointTimeoutS * 1000) {
        await this.#endpointTimeout(s, s.endpointTimeoutS);
        continue;
      }
      if (outputAge > thresholdMs && beatAge > thresholdMs) {
        await this.#stop(s, outputAge);
        continue;
      }
      if (outputAge <= idleMs) this.#idle.delete(s.session);
      else if (!this.#idle.has(s.session)) {
        this.#idle.add(s.session);
        await this.#deps.recorder.record({
          kind: "agent.idle",
          taskId: s.task.id,
          session: s.session,
          idleS: Math.round(outputAge / 1000),
        });
      }
    }
  }

  /**
   * The endpoint's request timeout: nothing came back for that long, so the request is given
   * up (a provider failure: it fails over, never escalates).
   */
  async #endpointTimeout(s: RunningSession, timeoutS: number): Promise<void> {
    if (s.stopReason !== undefined) return;
    s.stopReason = `endpoint timeout: no answer from the model for ${timeoutS}s ` +
      "(local_endpoints timeout); request timed out";
    await this.#deps.recorder.warn(`${s.task.id}: ${s.stopReason}`);
    void s.execution?.terminate(this.#deps.ctx.config.tuning.agent.kill_grace_s * 1000);
  }

  async #stop(s: RunningSession, silentMs: number): Promise<void> {
    // Once: the agent stays silent while it dies (up to the kill grace), and every tick in
    // between would report and signal it again.
    if (this.#stalled.has(s)) return;
    this.#stalled.add(s);
    const { ctx, recorder } = this.#deps;
    // Signalled first: a record the disk refuses must not leave it running.
    void s.execution?.terminate(ctx.config.tuning.agent.kill_grace_s * 1000);
    await recorder.record({
      kind: "agent.stalled",
      taskId: s.task.id,
      session: s.session,
      silentS: Math.round(silentMs / 1000),
    });
  }

  /**
   * The task store is still this run's (a shared store's namespace lock lives on one database
   * session, which a restart or a cut connection ends). A lock taken again is reported; the
   * lock in another orchestrator's hands is why the run must stop (its message returned). A
   * store that cannot be asked now is asked again next tick.
   */
  async checkOwnership(): Promise<string | undefined> {
    const { ctx, recorder } = this.#deps;
    try {
      const state = await ctx.store.checkOwnership?.();
      this.#ownershipUnknown = false;
      if (state === "retaken") {
        await recorder.warn(
          "the task store's namespace lock went with its database session; nobody else took " +
            "it, and this run holds it again",
        );
      }
    } catch (error) {
      if (error instanceof TaskStoreLockLostError) return error.message;
      if (!this.#ownershipUnknown) {
        this.#ownershipUnknown = true;
        await recorder.warn(
          `cannot confirm this run still holds the task store: ${(error as Error).message}`,
        );
      }
    }
    return undefined;
  }

  /**
   * Releases claims with no change and no heartbeat for `stale_claim_timeout_s` (claims of
   * agents on this host are vouched for by their live process) and stops their agents.
   */
  async expireClaims(): Promise<void> {
    const { ctx, recorder, sessions } = this.#deps;
    const timeoutS = ctx.config.tuning.orchestrator.stale_claim_timeout_s;
    const here = new Set(
      sessions.all().filter((s) => s.execution?.host === undefined).map((s) => s.session),
    );
    const spawning = this.#deps.spawning();
    const released = await ctx.store.releaseStaleClaims({
      olderThanMs: timeoutS * 1000,
      actor: "orchestrator",
      reason: `claim expired: no heartbeat for ${timeoutS}s`,
      // A spawn under way is vouched for too: a worker may take a while to start the agent.
      keep: (task) => here.has(task.assigned_agent ?? "") || spawning.has(task.id),
    });
    const ids = new Set(released.map((t) => t.id));
    for (const s of sessions.all()) {
      if (!ids.has(s.task.id)) continue;
      await recorder.record({
        kind: "claim.expired",
        taskId: s.task.id,
        session: s.session,
        host: s.execution?.host ?? null,
        timeoutS,
      });
      void s.execution?.terminate(ctx.config.tuning.agent.kill_grace_s * 1000);
    }
  }

  /**
   * Deadlines, checked each tick: an agent past its deadline that reported progress (a task
   * change or a heartbeat) since the last check gets `deadline_extension_s` more, up to
   * `deadline_max_s` in all, each extension audited; otherwise it is stopped as timed out.
   */
  async checkDeadlines(tasks: readonly Task[]): Promise<void> {
    const { ctx, recorder } = this.#deps;
    const o = ctx.config.tuning.orchestrator;
    const byId = new Map(tasks.map((t) => [t.id, t]));
    const beats = new Map(ctx.server.agents().map((a) => [a.agent_id, a]));
    for (const s of this.#deps.sessions.all()) {
      if (s.state !== "running" || s.execution === undefined || s.deadlineHit) continue;
      const deadlineS = s.deadlineS ?? agentDeadlineSeconds(ctx.config.tuning, s.task.scope);
      if (ctx.clock.monotonicMs() - s.startedMs < deadlineS * 1000) continue;
      const since = s.progressSinceMs ?? Date.parse(s.file.started_at);
      const changed = Date.parse(byId.get(s.task.id)?.updated_at ?? "") > since;
      const beat = beats.get(s.session);
      const beaten = beat !== undefined && Date.parse(beat.last_heartbeat_at) > since;
      if ((changed || beaten) && deadlineS < o.deadline_max_s) {
        s.deadlineS = Math.min(deadlineS + o.deadline_extension_s, o.deadline_max_s);
        s.progressSinceMs = ctx.clock.nowMs();
        await recorder.record({
          kind: "agent.deadline_extended",
          taskId: s.task.id,
          session: s.session,
          fromS: deadlineS,
          toS: s.deadlineS,
        });
        continue;
      }
      s.deadlineS = deadlineS;
      s.deadlineHit = true;
      void s.execution.terminate(ctx.config.tuning.agent.kill_grace_s * 1000);
    }
  }

  /** A manager alive past the threshold with no child task: recorded; why the run stops. */
  async stalledManager(tasks: readonly Task[]): Promise<StalledManager | undefined> {
    const { ctx } = this.#deps;
    const limitMs = ctx.config.tuning.orchestrator.stalled_manager_threshold_s * 1000;
    for (const s of this.#deps.sessions.all()) {
      if (s.task.role !== "manager" || s.state !== "running") continue;
      const children = tasks.filter((t) => t.parent_task_id === s.task.id).length;
      const aliveMs = ctx.clock.monotonicMs() - s.startedMs;
      if (children === 0 && aliveMs >= limitMs) return await this.#abort(s, aliveMs);
    }
    return undefined;
  }

  async #abort(s: RunningSession, aliveMs: number): Promise<StalledManager> {
    const { ctx, recorder } = this.#deps;
    const dir = runDir(ctx.sdd, ctx.runId);
    const diagnostic = join(dir, "manager_stalled.json");
    await Deno.mkdir(dir, { recursive: true });
    const aliveS = Math.round(aliveMs / 1000);
    const report: JsonObject = {
      run_id: ctx.runId,
      task_id: s.task.id,
      session: s.session,
      adapter: s.adapterName,
      alive_s: aliveS,
      threshold_s: ctx.config.tuning.orchestrator.stalled_manager_threshold_s,
      children: 0,
      last_output: s.execution?.lastText() ?? "",
      log: s.execution?.logPath ?? "",
    };
    await Deno.writeTextFile(diagnostic, JSON.stringify(report, null, 2) + "\n");
    await recorder.record({
      kind: "run.manager_stalled",
      runId: ctx.runId,
      report,
      aliveS,
      diagnostic,
    });
    return { reason: `manager stalled: no child task after ${aliveS}s; see ${diagnostic}` };
  }
}
