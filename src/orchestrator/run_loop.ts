/**
 * The run loop: each tick checks liveness, asks the pure scheduler what to do with the task
 * snapshot (spawn, fail a dependent, defer), carries that out through dispatch, and asks the
 * pure termination rule whether the run is over (quiescence, backstop) — or carries out an
 * operator's stop. Events (a task changed over HTTP, an agent exited, a merge landed) wake it
 * at once; the tick interval is only a backstop. The parts it drives — dispatch, the executor,
 * agent exits, completion and gates, the merge queue, liveness, stopping — live in their own
 * files and record through one recorder.
 */
import type { ResolvedCli } from "../adapters/mod.ts";
import { readAuditKey, resolveAuditKeyPath } from "../audit/mod.ts";
import { isStorageFailure } from "../errors/mod.ts";
import { isCasDamage } from "../cas/mod.ts";
import type { LiveAgent } from "../report/mod.ts";
import { type Task, TaskStoreLockLostError } from "../tasks/mod.ts";
import { AdapterResolver, escalationFor } from "./adapter_choice.ts";
import { applyReloadable } from "./config_reload.ts";
import { AgentExits } from "./agent_exit.ts";
import { Completion } from "./completion.ts";
import { sessionPaths } from "./agent_session.ts";
import { probeStorage } from "./run_stores.ts";
import { Dispatcher } from "./dispatch.ts";
import { ErrorBudget, spentBudget } from "./error_budget.ts";
import { type Executor, processExecutor } from "./executor.ts";
import { Liveness } from "./liveness.ts";
import { MergeQueue } from "./merge_queue.ts";
import { emptyOutcome, type RunOutcome } from "./outcome.ts";
import { Recorder, tallyOutcome } from "./recorder.ts";
import { Retries } from "./retries.ts";
import { failoverListener, routerFor } from "./provider_routing.ts";
import { RecoveryRouter } from "./routing.ts";
import type { AttachmentProvider, RunContext } from "./run_context.ts";
import type { SessionFile } from "./run_state.ts";
import { schedulable, scheduleTick, type TickDecision, type TickInput } from "./scheduler.ts";
import { BackgroundWork, liveAgentsOf, type RunningSession, SessionTable } from "./sessions.ts";
import { type RunStop, Stopping } from "./stopping.ts";
import { decideTermination, isSettledStatus, type StallState } from "./termination.ts";

/** One scheduling tick as recorded in `.sdd/runs/<run-id>/decisions.json`. */
export interface DecisionRecord {
  /** Tick number. */
  tick: number;
  /** The exact input of `scheduleTick` (`notBefore` as entries). */
  input: Omit<TickInput, "notBefore"> & { notBefore: [string, number][] };
  /** What it decided. */
  decisions: TickDecision[];
}

/** The executor of this host: agents in worktrees of the project root. */
function localExecutor(ctx: RunContext): Executor {
  const { root, sdd, git, env, selfCommand, selfEnv, clock, spawnPath, worktreesDir, redactor } =
    ctx;
  return processExecutor({
    root,
    sdd,
    git,
    env,
    selfCommand,
    selfEnv,
    clock,
    spawnPath,
    redactor,
    ...(worktreesDir !== undefined ? { worktreesDir } : {}),
  });
}

/**
 * The run loop: schedules ready tasks (pure `scheduleTick`), spawns agents in worktrees,
 * reaps them, checks completion signals and gates, merges one at a time, retries with failure
 * context and model ladders, watches liveness, and stops on quiescence, the zero-terminal
 * backstop, a stalled manager or an operator stop.
 */
export class RunLoop {
  readonly #ctx: RunContext;
  readonly #recorder: Recorder;
  readonly #sessions: SessionTable;
  readonly #work: BackgroundWork;
  readonly #adapters: AdapterResolver;
  readonly #retries: Retries;
  readonly #router: RecoveryRouter;
  readonly #merges: MergeQueue;
  readonly #completion: Completion;
  readonly #exits: AgentExits;
  readonly #dispatch: Dispatcher;
  /** Final outcomes of this run attempt, for the error budget. */
  readonly #budget = new ErrorBudget();
  readonly #liveness: Liveness;
  readonly #stopping: Stopping;
  readonly #executor: Executor;
  #wake: (() => void) | undefined;
  /** Fake-or-real clock time the current sleep ends, while the loop sleeps. */
  #sleepingUntil: number | undefined;
  #idleWaiters: (() => void)[] = [];
  #stall: StallState | undefined;
  #tick = 0;
  /** Tasks whose spawn is under way (claimed, agent not started yet). */
  readonly #spawning = new Set<string>();
  #toldNoSlots = false;
  #decisionLog: DecisionRecord[] = [];
  /** How the run ended, what merged, was refused or kept, and what it cost. */
  readonly outcome: RunOutcome = emptyOutcome();

  constructor(ctx: RunContext) {
    this.#ctx = ctx;
    const wake = () => this.#wakeUp();
    const recorder = ctx.recorder ??
      new Recorder({ audit: ctx.audit, ledger: ctx.ledger, reporter: ctx.reporter, sdd: ctx.sdd });
    this.#recorder = recorder;
    recorder.on((fact) => tallyOutcome(this.outcome, fact));
    const sessions = this.#sessions = new SessionTable(ctx.sdd);
    const work = this.#work = new BackgroundWork(
      (error) => {
        // A store another orchestrator took refuses every write: the run ends for that reason.
        if (error instanceof TaskStoreLockLostError) return;
        if (!this.#noteStorageFailure(error)) {
          // Work a stop left behind may fail after the run's records closed: never unhandled.
          recorder.warn(`internal error: ${error.message}`).catch(() => {});
        }
      },
      wake,
    );
    this.#adapters = new AdapterResolver(ctx);
    const retries = this.#retries = new Retries({
      store: ctx.store,
      clock: ctx.clock,
      config: ctx.config,
      recorder,
      isStopping: () => this.#stopping.requested,
      escalation: escalationFor(() => ctx.config),
    });
    // provider_availability chains: probes before dispatch, failover on provider errors.
    const providers = routerFor(ctx);
    if (providers !== undefined) recorder.on(failoverListener(providers));
    recorder.on((fact) => this.#budget.observe(fact));
    this.#router = new RecoveryRouter({
      runId: ctx.runId,
      root: ctx.root,
      store: ctx.store,
      recorder,
      lineage: ctx.lineage.paths,
      auditKey: async () =>
        (ctx.auditKey ?? await readAuditKey(resolveAuditKeyPath(ctx.env).path)).bytes,
    });
    const merges = this.#merges = new MergeQueue({
      runId: ctx.runId,
      git: ctx.git,
      store: ctx.store,
      lineage: ctx.lineage,
      clock: ctx.clock,
      recorder,
      sessions,
      retries,
      work,
      wake,
    });
    const isolation = ctx.commandIsolation;
    this.#completion = new Completion({
      config: ctx.config,
      git: ctx.git,
      env: ctx.env,
      store: ctx.store,
      recorder,
      sessions,
      retries,
      merges,
      isolate: isolation === undefined
        ? undefined
        : (s) => isolation(s.session, sessionPaths(ctx.sdd, s.session).home),
      secrets: ctx.secrets,
      gitState: ctx.gitState,
      gitDir: ctx.gitDir,
    });
    this.#exits = new AgentExits({
      config: ctx.config,
      store: ctx.store,
      tokens: ctx.tokens,
      recorder,
      sessions,
      retries,
      completion: this.#completion,
      checkStorage: () => probeStorage(ctx.sdd),
    });
    this.#dispatch = new Dispatcher({
      ctx,
      adapters: this.#adapters,
      executor: this.#executor = ctx.executor ?? localExecutor(ctx),
      recorder,
      sessions,
      retries,
      merges,
      providers,
    });
    this.#liveness = new Liveness({ ctx, recorder, sessions, spawning: () => this.#spawning });
    this.#stopping = new Stopping({
      ctx,
      store: ctx.store,
      recorder,
      sessions,
      work,
      merges,
      wake,
    });
  }

  /** Every scheduling decision so far, tick by tick (for replay tests and the run record). */
  get decisions(): readonly DecisionRecord[] {
    return this.#decisionLog;
  }

  /** The run's facts as they are recorded: the event seam (notifications, dashboards). */
  get recorder(): Recorder {
    return this.#recorder;
  }

  /** The agents alive now, for the live dashboard. */
  liveAgents(): LiveAgent[] {
    return liveAgentsOf(this.#sessions.all(), this.#ctx.clock);
  }

  /** Asks the loop to stop: no new spawns; running agents drain (or are killed with `force`). */
  requestStop(reason: string, force = false): void {
    this.#stopping.request(reason, force);
  }

  /** Kills every agent's process group on this host at once: for a run that must end now. */
  killAgentsNow(): void {
    this.#stopping.killNow();
  }

  /** Resolves (and caches) the adapter of a task; see {@linkcode resolveTaskCli}. */
  async resolveAdapter(task: Pick<Task, "cli" | "role" | "id">): Promise<ResolvedCli> {
    return await this.#adapters.resolve(task);
  }

  /** Sets the attachment provider (built once the run's stores exist). */
  setAttachments(provider: AttachmentProvider): void {
    this.#ctx.attachments = provider;
  }

  /**
   * Resume: a task whose agent finished (`done`) before the crash goes through the same checks
   * and merge as if its agent had just exited — it never runs again.
   */
  adoptDone(task: Task, file: SessionFile): void {
    const s: RunningSession = {
      session: file.session,
      task,
      adapterName: file.adapter,
      agentId: file.agent_id,
      startedMs: this.#ctx.clock.monotonicMs(),
      file,
      worktree: file.worktree,
      branch: file.branch,
      baseSha: file.base_sha,
      state: "checking",
    };
    this.#sessions.add(s);
    this.#work.track(this.#completion.complete(s, task, null));
  }

  /** Runs until the run ends; returns how it ended. */
  async run(): Promise<RunOutcome> {
    const unsubscribe = this.#ctx.server.events.on(() => this.#wakeUp());
    const offExecutor = this.#executor.onChange?.(() => this.#wakeUp());
    try {
      for (;;) {
        if (this.#storageFailure !== undefined) {
          await this.#haltOnStorage(this.#storageFailure);
          break;
        }
        let ended: boolean;
        try {
          ended = await this.#step();
        } catch (error) {
          if (!this.#noteStorageFailure(error)) throw error;
          continue;
        }
        if (ended) break;
        await this.#sleep();
      }
      // Git's auto maintenance, which the run's own commits and merges skip (merge_queue.ts).
      if (this.#storageFailure === undefined) await this.#merges.maintain();
    } finally {
      unsubscribe();
      offExecutor?.();
      this.#ctx.reporter.close?.();
    }
    return this.outcome;
  }

  /** The first storage failure (disk full, read-only `.sdd`): the run stops on it. */
  #storageFailure: Error | undefined;

  /** Records a storage failure and wakes the loop; false for any other error. */
  #noteStorageFailure(error: unknown): boolean {
    if (!isStorageFailure(error) && !isCasDamage(error)) return false;
    this.#storageFailure ??= error as Error;
    this.#wakeUp();
    return true;
  }

  /**
   * Stops on a storage failure as a crash would: agents are stopped (their work stays in their
   * worktrees), no task changes state (they stay claimed or in progress, so the resume picks
   * them up), and nothing more is written.
   */
  async #haltOnStorage(error: Error): Promise<void> {
    const grace = this.#ctx.config.tuning.agent.kill_grace_s * 1000;
    await Promise.all(
      this.#sessions.all().map((s) => s.execution?.terminate(grace).catch(() => {})),
    );
    // Bounded like a stop's wait (stopping.ts): a watch whose agent's exit never comes must not
    // keep a halted run alive.
    await this.#stopping.settleWithinGrace("agent watches and checks", this.#work.settled(), false);
    this.#end({
      end: "storage-failed",
      reason: isCasDamage(error)
        ? `a stored input is damaged: ${error.message.split("\n")[0]} ` +
          "('bernstein cas verify' lists the damage, 'bernstein cas repair' restores blobs " +
          "whose source is unchanged)"
        : `storage failed: ${error.message.split("\n")[0]}`,
    });
  }

  /** One tick; true when the run ended. */
  async #step(): Promise<boolean> {
    const { store } = this.#ctx;
    this.#tick++;
    await this.#reloadConfig();
    const lost = await this.#liveness.checkOwnership();
    if (lost !== undefined) {
      // Another orchestrator owns the store now: stop the agents (the store takes no more writes).
      this.#end({ end: "store-lock-lost", reason: lost });
      await this.#stopping.killAll(lost);
      return true;
    }
    await this.#liveness.checkAgents();
    await this.#liveness.expireClaims();
    const tasks = await store.list({});
    await this.#liveness.checkDeadlines(tasks);
    const stalled = await this.#liveness.stalledManager(tasks);
    if (stalled !== undefined) {
      this.#end({ end: "manager-stalled", reason: stalled.reason });
      await this.#stopping.killAll("manager stalled");
      return true;
    }
    await this.#checkErrorBudget(tasks);
    if (this.#stopping.requested) {
      this.#end(await this.#stopping.drain());
      return true;
    }
    const decisions = this.#schedule(tasks);
    await this.#carryOut(decisions, tasks);
    const changed = decisions.some((d) => d.kind !== "defer");
    const fresh = changed ? await store.list({}) : tasks;
    return await this.#terminate(fresh, decisions);
  }

  /**
   * The error budget (error_budget.ts): once final failures reach it and work is still waiting
   * to start, the run pauses — no new agents, the running ones drain, the rest resumes later.
   * With nothing left to start there is nothing to pause: the run ends as it would.
   */
  async #checkErrorBudget(tasks: readonly Task[]): Promise<void> {
    if (this.#stopping.requested) return;
    const minFailures = this.#ctx.config.tuning.slo.error_budget_min_failures;
    const spent = spentBudget(this.#budget.counts(), minFailures);
    if (spent === undefined || !tasks.some((t) => t.status === "open")) return;
    await this.#recorder.record({
      kind: "run.error_budget_spent",
      runId: this.#ctx.runId,
      finished: spent.finished,
      failed: spent.failed,
      budget: spent.budget,
      minFailures,
      reason: spent.reason,
    });
    this.#stopping.request(spent.reason, false, "orchestrator");
  }

  /** Hot reload: a changed configuration takes effect on this tick, audited with its hashes. */
  async #reloadConfig(): Promise<void> {
    const ctx = this.#ctx;
    const outcome = await ctx.configWatch?.check();
    if (outcome === undefined) return;
    if (outcome.kind === "refused") {
      await this.#recorder.record({
        kind: "config.reload_refused",
        code: outcome.problem.code,
        message: outcome.problem.message +
          (outcome.errors > 1 ? ` (and ${outcome.errors - 1} more)` : ""),
        location: outcome.problem.location ?? null,
      });
      return;
    }
    applyReloadable(ctx.config, outcome.config);
    ctx.maxAgents = ctx.config.max_agents;
    this.#adapters.clear();
    await this.#recorder.record({
      kind: "config.reloaded",
      oldHash: outcome.oldHash,
      newHash: outcome.newHash,
      applied: outcome.applied,
      pending: outcome.pending,
    });
  }

  /** The pure scheduler over this tick's snapshot; non-trivial ticks are logged. */
  #schedule(tasks: readonly Task[]): TickDecision[] {
    const input: TickInput = {
      tasks: tasks.map(schedulable),
      running: [...new Set([...this.#sessions.taskIds(), ...this.#spawning])].sort(),
      maxAgents: Math.min(this.#ctx.maxAgents, this.#executor.slots?.() ?? Infinity),
      notBefore: this.#retries.notBefore(),
      nowMs: this.#ctx.clock.nowMs(),
      failurePending: this.#failurePending(tasks),
      ...(Array.isArray(this.#ctx.config.cells) ? { cells: this.#ctx.config.cells } : {}),
    };
    const decisions = scheduleTick(input);
    if (decisions.some((d) => d.kind !== "defer")) {
      this.#decisionLog.push({
        tick: this.#tick,
        input: { ...input, notBefore: [...input.notBefore] },
        decisions,
      });
    }
    return decisions;
  }

  /**
   * Routes recovery steps, fails and skips dependents, then starts this tick's spawns (each
   * independent, in the background).
   */
  async #carryOut(decisions: readonly TickDecision[], tasks: readonly Task[]): Promise<void> {
    for (const d of decisions) {
      if (d.kind === "route") await this.#route(d.taskId, tasks);
      if (d.kind === "fail_dependent") await this.#retries.failDependent(d.taskId, d.reason);
      if (d.kind === "skip_dependent") await this.#router.skipDependent(d.taskId, d.reason);
    }
    const byId = new Map(tasks.map((t) => [t.id, t]));
    for (const d of decisions) {
      const task = byId.get(d.taskId);
      if (d.kind === "spawn" && task !== undefined) this.#work.track(this.#spawn(task));
    }
  }

  /**
   * Failed tasks not final yet: a retry still to be decided, an outcome being recorded, or an
   * agent that reported failure and has not been reaped.
   */
  #failurePending(tasks: readonly Task[]): string[] {
    const live = new Set(this.#sessions.taskIds());
    const reported = tasks.filter((t) => t.status === "failed" && live.has(t.id)).map((t) => t.id);
    return [...new Set([...this.#retries.failurePending(tasks), ...reported])].sort();
  }

  /** Routes one recovery step; a receipt that cannot be recorded fails the step, loudly. */
  async #route(taskId: string, tasks: readonly Task[]): Promise<void> {
    try {
      await this.#router.route(taskId, tasks);
    } catch (error) {
      const reason = `recovery not routed: ${(error as Error).message}`;
      await this.#recorder.warn(`${taskId}: ${reason}`);
      const task = await this.#ctx.store.get(taskId);
      if (task?.status === "planned") {
        await this.#ctx.store.transition(taskId, "cancelled", {
          actor: "orchestrator",
          reason,
          terminal_reason: reason,
        });
        await this.#recorder.record({
          kind: "task.ended",
          taskId,
          status: "cancelled",
          reason,
        });
      }
    }
  }

  /**
   * One spawn, in the background: the tick goes on (a worker host may take its time to start
   * an agent); until it is done the task counts as running.
   */
  async #spawn(task: Task): Promise<void> {
    this.#spawning.add(task.id);
    try {
      const s = await this.#dispatch.spawn(task);
      if (s?.execution === undefined) return;
      const exit = this.#work.waiting(s.execution.exit);
      this.#work.track(exit.then((e) => this.#exits.handle(s, e)));
    } finally {
      this.#spawning.delete(task.id);
    }
  }

  /** The pure termination rule; carries out a backstop; true when the run ended. */
  async #terminate(tasks: readonly Task[], decisions: readonly TickDecision[]): Promise<boolean> {
    const ctx = this.#ctx;
    const holds = await ctx.holds.list();
    const decision = decideTermination({
      tasks,
      runningAgents: this.#sessions.size + this.#work.size,
      pendingMerges: this.#merges.pending,
      deferredByBackoff: this.#waiting(decisions),
      holdActive: holds.length > 0,
      nowMs: ctx.clock.nowMs(),
      stall: this.#stall,
      graceS: ctx.config.tuning.orchestrator.stalled_run_grace_s,
      minTicks: ctx.config.tuning.orchestrator.stalled_run_ticks,
    });
    if (decision.stop === "quiescent") {
      this.#end({
        end: "quiescent",
        reason: decision.planned === 0
          ? "every task finished"
          : `every runnable task finished; ${decision.planned} task(s) left planned: ` +
            "nothing opens a planned task once no agent runs",
      });
      return true;
    }
    if (decision.stop === "backstop") {
      this.#end(await this.#stopping.backstop(decision.failTaskIds, decision.reason));
      return true;
    }
    this.#stall = decision.stall;
    this.#render(tasks);
    return false;
  }

  /**
   * Tasks held back by something that passes by itself: spawn backoff, and — while the executor
   * has no slot at all (a run whose agents run on workers, before one registers) — capacity.
   * Neither lets the zero-terminal backstop end the run.
   */
  #waiting(decisions: readonly TickDecision[]): number {
    const noSlots = this.#executor.slots?.() === 0;
    const held =
      decisions.filter((d) =>
        d.kind === "defer" && (d.reason === "backoff" || (noSlots && d.reason === "capacity"))
      ).length;
    if (noSlots && held > 0 && !this.#toldNoSlots) {
      this.#toldNoSlots = true;
      void this.#recorder.warn("no agent slot: waiting for a worker to register (workers.listen)");
    }
    return held;
  }

  #end(stop: RunStop): void {
    this.outcome.end = stop.end;
    this.outcome.reason = stop.reason;
  }

  #render(tasks: readonly Task[]): void {
    const finished = tasks.filter((t) => isSettledStatus(t.status)).length;
    this.#ctx.reporter.agents?.(this.#sessions.rows(this.#ctx.clock.monotonicMs()), {
      done: finished,
      total: tasks.length,
    });
  }

  #wakeUp(): void {
    this.#sleepingUntil = undefined;
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  /**
   * Resolves once the loop sleeps with nothing in progress but agents it waits for: the moment
   * a driver of a fake clock (a test, a simulation) may move time.
   */
  whenIdle(): Promise<void> {
    return new Promise((resolve) => {
      this.#idleWaiters.push(resolve);
      this.#tellIdle();
    });
  }

  #tellIdle(): void {
    const until = this.#sleepingUntil;
    if (until === undefined || this.#ctx.clock.nowMs() >= until || this.#work.busy) return;
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Waits for an event or the tick interval, whichever comes first. */
  async #sleep(): Promise<void> {
    const tickMs = this.#ctx.config.tuning.orchestrator.tick_interval_s * 1000;
    const controller = new AbortController();
    const woken = new Promise<void>((resolve) => (this.#wake = resolve));
    const slept = this.#ctx.clock.sleep(tickMs, controller.signal);
    this.#sleepingUntil = this.#ctx.clock.nowMs() + tickMs;
    this.#tellIdle();
    await Promise.race([woken, slept]);
    this.#sleepingUntil = undefined;
    controller.abort();
    this.#wake = undefined;
  }
}
