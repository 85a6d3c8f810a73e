import { join } from "node:path";
import {
  type AgentResult,
  cliForRole,
  endpointForRole,
  type PathLookup,
  resolveCli,
  type ResolvedCli,
  type ScriptedRuntime,
} from "../adapters/mod.ts";
import { type AuditEventInput, type AuditSink } from "../audit/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import { agentDeadlineSeconds, type Config } from "../config/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import type { Clock, EnvReader } from "../io/mod.ts";
import type { LedgerWriter } from "../ledger/mod.ts";
import type { LineageStore } from "../lineage/store/mod.ts";
import type { TaskServer, TokenRegistry } from "../server/mod.ts";
import type { HoldStore, Task, TaskStore } from "../tasks/mod.ts";
import { type AgentProcess, sessionId, startAgent } from "./agent_session.ts";
import { evaluateCompletionSignals, worktreeEdges } from "./completion_signals.ts";
import { commandGate, type GateResult, runConfigGate } from "./gates.ts";
import type { ChangedPath, Git } from "./git.ts";
import { describeSignal } from "./planning.ts";
import { buildPromptBody } from "./prompt.ts";
import type { AgentRow, RunReporter } from "./reporter.ts";
import { recordRefusedMerge, saveSessionFile, type SessionFile } from "./run_state.ts";
import {
  ACTIVE,
  DEAD_END,
  DEPENDENCY_MET,
  isRateLimitReason,
  retryDelayMs,
  type SchedulableTask,
  scheduleTick,
  spawnBackoffMs,
  type TickDecision,
  type TickInput,
} from "./scheduler.ts";
import { decideTermination, type StallState } from "./termination.ts";

/** Attachments of one spawn, already stored in CAS and attested in the audit chain. */
export interface SpawnAttachments {
  /** SHA-256 digests of the attached bytes, in declaration order. */
  digests: string[];
  /** The prompt with the attachment blocks at its head (FORMATS.md §7). */
  compose(body: string): string;
}

/** Provides each spawn's attachments (run-wide `--attach` plus the task's own). */
export interface AttachmentProvider {
  /** Resolves, stores and attests the attachments of one spawn. */
  forSpawn(
    task: Task,
    spawn: {
      session: string;
      worktreeRelative: string;
      turnSeq: number;
      /** Adapter of this spawn (a retry ladder may change it). */
      adapter: string;
      /** How the agent starts: only "direct-subprocess" exists (and carries attachments). */
      spawnPath: "direct-subprocess";
    },
  ): Promise<SpawnAttachments | undefined>;
}

/** How a run ended. */
export type RunEnd = "quiescent" | "backstop" | "stopped" | "manager-stalled" | "infra-error";

/** Everything the loop works with; the command wires the real ones, tests may fake some. */
export interface RunContext {
  /** Run id. */
  runId: string;
  /** Repository root. */
  root: string;
  /** `.sdd/` folder. */
  sdd: string;
  /** Branch merges go into. */
  branch: string;
  /** Effective configuration. */
  config: Config;
  /** Git of the root. */
  git: Git;
  /** Task store. */
  store: TaskStore;
  /** Holds (suppress termination). */
  holds: HoldStore;
  /** Task server. */
  server: TaskServer;
  /** Agent tokens. */
  tokens: TokenRegistry;
  /** Audit chain. */
  audit: AuditSink;
  /** Work ledger. */
  ledger: LedgerWriter;
  /** Lineage store. */
  lineage: LineageStore;
  /** Clock. */
  clock: Clock;
  /** Environment. */
  env: EnvReader;
  /** Where binaries are found. */
  lookup: PathLookup;
  /** Scripted agent locator (tests inject it; default: the source checkout). */
  scripted?: () => Promise<ScriptedRuntime>;
  /** Command that runs bernstein itself (agents' `bernstein task …` shim). */
  selfCommand: readonly string[];
  /** Environment that command needs (module cache of a source run). */
  selfEnv?: Readonly<Record<string, string>>;
  /** Live view / event stream. */
  reporter: RunReporter;
  /** `--cli`: overrides the configured default adapter (not a task's own `cli`). */
  cliOverride?: string;
  /** `--model`: overrides the model of every task without its own. */
  modelOverride?: string;
  /** Plan-level default adapter. */
  planCli?: string;
  /** Agents at once. */
  maxAgents: number;
  /** The run's goal, for prompts. */
  goal?: string;
  /** 1 for a fresh run, n for the n-th resume. */
  runAttempt: number;
  /** The orchestrator runs as root. */
  isRoot: boolean;
  /** Attachments per task (run-wide + step), resolved and attested at spawn. */
  attachments?: AttachmentProvider;
}

/** What adapter resolution reads. */
export interface CliChoiceContext {
  /** Effective configuration (`cli`, `role_model_policy`, `adapters`). */
  config: Config;
  /** Where binaries are found. */
  lookup: PathLookup;
  /** `--cli`. */
  cliOverride?: string;
  /** The plan's `cli`. */
  planCli?: string;
  /** Scripted agent locator. */
  scripted?: () => Promise<ScriptedRuntime>;
}

/**
 * The adapter of a task, in precedence order: the task's own `cli`, `--cli`, the role's
 * `role_model_policy.<role>.cli`, the plan's `cli`, the configured `cli` (`auto` by default).
 * Unknown or missing adapters are refused with the list that would work.
 */
export async function resolveTaskCli(
  task: Pick<Task, "cli" | "role" | "id">,
  ctx: CliChoiceContext,
): Promise<ResolvedCli> {
  const { config } = ctx;
  let requested: string;
  let location: string;
  if (task.cli) {
    requested = task.cli;
    location = `task ${task.id}: cli`;
  } else if (ctx.cliOverride) {
    requested = ctx.cliOverride;
    location = "--cli";
  } else if (config.role_model_policy?.[task.role]?.cli) {
    ({ cli: requested, location } = cliForRole(config, task.role));
  } else if (ctx.planCli) {
    requested = ctx.planCli;
    location = "plan: cli";
  } else {
    ({ cli: requested, location } = cliForRole(config, task.role));
  }
  return await resolveCli(requested, {
    lookup: ctx.lookup,
    settings: config.adapters,
    scripted: ctx.scripted,
    location,
  });
}

/** One scheduling tick as recorded in `.sdd/runs/<run-id>/decisions.json`. */
export interface DecisionRecord {
  /** Tick number. */
  tick: number;
  /** The exact input of `scheduleTick` (`notBefore` as entries). */
  input: Omit<TickInput, "notBefore"> & { notBefore: [string, number][] };
  /** What it decided. */
  decisions: TickDecision[];
}

function schedulable(t: Task): SchedulableTask {
  return {
    id: t.id,
    status: t.status,
    priority: t.priority,
    created_at: t.created_at,
    depends_on: t.depends_on,
    owned_files: t.owned_files,
    role: t.role,
  };
}

/** Cost of one agent run, for the summary. */
export interface CostRow {
  /** Adapter. */
  adapter: string;
  /** Model (or "default"). */
  model: string;
  /** USD when the CLI reported it, else null. */
  cost_usd: number | null;
  /** Tokens in + out, when reported. */
  tokens: number | null;
  /** Turns, when reported. */
  turns: number | null;
}

/** What the loop hands back for the summary. */
export interface RunOutcome {
  /** How the run ended. */
  end: RunEnd;
  /** Merged tasks with their files. */
  merges: { task_id: string; session: string; files: string[]; sha: string }[];
  /** Refused merges (branch kept). */
  refused: { task_id: string; branch: string; reason: string; detail: string }[];
  /** Branches kept for failed tasks. */
  keptBranches: { task_id: string; branch: string; reason: string }[];
  /** Agent runs' costs. */
  costs: CostRow[];
  /** Why the run stopped, in words. */
  reason: string;
}

interface RunningSession {
  session: string;
  task: Task;
  /** The live process; absent for a session adopted on resume (its agent already finished). */
  agent?: AgentProcess;
  adapterName: string;
  agentId: string;
  startedMs: number;
  file: SessionFile;
  worktree: string;
  branch: string;
  baseSha: string;
  state: "running" | "checking" | "merging";
}

const MAX_SPAWN_FAILURES = 3;

function signalsText(task: Task): string[] {
  return task.completion_signals.map(describeSignal);
}

/**
 * The ledger's name for why an agent's attempt failed: `deadline`, `max-turns` (the CLI's own
 * turn limit), `rate-limited` (its reason says so; the retry then waits the cooldown) or
 * `agent-failed`.
 */
function failureCode(result: AgentResult, timedOut: boolean, reason: string): string {
  if (timedOut) return "deadline";
  if (result.subtype === "error_max_turns") return "max-turns";
  if (isRateLimitReason(reason)) return "rate-limited";
  return "agent-failed";
}

function nowIso(clock: Clock): string {
  return new Date(clock.nowMs()).toISOString();
}

/**
 * The run loop: schedules ready tasks (pure `scheduleTick`), spawns agents in worktrees,
 * reaps them, checks completion signals and gates, merges one at a time, retries with failure
 * context and model ladders, watches liveness, and stops on quiescence, the zero-terminal
 * backstop, a stalled manager or an operator stop. Events wake it at once; the tick is a backstop.
 */
export class RunLoop {
  readonly #ctx: RunContext;
  readonly #running = new Map<string, RunningSession>();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #notBefore = new Map<string, number>();
  readonly #spawnFailures = new Map<string, number>();
  readonly #failureContext = new Map<string, string>();
  readonly #resolved = new Map<string, ResolvedCli>();
  /** Turns and tokens of each task's last agent run, for its ledger rows. */
  readonly #usage = new Map<string, JsonObject>();
  #mergeChain: Promise<void> = Promise.resolve();
  /** HEAD of the root, cached between merges (the only thing that moves it). */
  #head: string | undefined;
  #pendingMerges = 0;
  #wake: (() => void) | undefined;
  #stopRequested: string | undefined;
  #forceStop = false;
  #stall: StallState | undefined;
  #tick = 0;
  #decisionLog: DecisionRecord[] = [];
  readonly outcome: RunOutcome = {
    end: "quiescent",
    merges: [],
    refused: [],
    keptBranches: [],
    costs: [],
    reason: "",
  };

  constructor(ctx: RunContext) {
    this.#ctx = ctx;
  }

  /** Every scheduling decision so far, tick by tick (for replay tests and the run record). */
  get decisions(): readonly DecisionRecord[] {
    return this.#decisionLog;
  }

  /** Asks the loop to stop: no new spawns; running agents drain (or are killed with `force`). */
  requestStop(reason: string, force = false): void {
    this.#stopRequested ??= reason;
    this.#forceStop ||= force;
    this.#wakeUp();
  }

  #wakeUp(): void {
    const w = this.#wake;
    this.#wake = undefined;
    w?.();
  }

  async #audit(event: AuditEventInput): Promise<void> {
    await this.#ctx.audit.append(event);
  }

  #track(p: Promise<void>): void {
    const wrapped = p.catch((error) => {
      this.#ctx.reporter.event({
        type: "run.warning",
        message: `internal error: ${(error as Error).message}`,
      });
    }).finally(() => {
      this.#inFlight.delete(wrapped);
      this.#wakeUp();
    });
    this.#inFlight.add(wrapped);
  }

  /** Resolves (and caches) the adapter of a task; see {@linkcode resolveTaskCli}. */
  async resolveAdapter(task: Pick<Task, "cli" | "role" | "id">): Promise<ResolvedCli> {
    const key = `${task.cli ?? ""}\0${task.role}`;
    const cached = this.#resolved.get(key);
    if (cached) return cached;
    const resolved = await resolveTaskCli(task, this.#ctx);
    this.#resolved.set(key, resolved);
    return resolved;
  }

  /** Sets the attachment provider (built once the run's stores exist). */
  setAttachments(provider: AttachmentProvider): void {
    this.#ctx.attachments = provider;
  }

  /** Runs until the run ends; returns how it ended. */
  async run(): Promise<RunOutcome> {
    const ctx = this.#ctx;
    const unsubscribe = ctx.server.events.on(() => this.#wakeUp());
    try {
      for (;;) {
        this.#tick++;
        await this.#checkLiveness();
        const tasks = await ctx.store.list({});
        if (await this.#checkManager(tasks)) break;
        if (this.#stopRequested !== undefined) {
          if (await this.#drain()) break;
        } else {
          const input: TickInput = {
            tasks: tasks.map(schedulable),
            running: [...this.#running.values()].map((s) => s.task.id).sort(),
            maxAgents: ctx.maxAgents,
            notBefore: new Map(this.#notBefore),
            nowMs: ctx.clock.nowMs(),
          };
          const decisions = scheduleTick(input);
          if (decisions.some((d) => d.kind !== "defer")) {
            this.#decisionLog.push({
              tick: this.#tick,
              input: { ...input, notBefore: [...input.notBefore] },
              decisions,
            });
          }
          for (const d of decisions) {
            if (d.kind === "fail_dependent") await this.#failDependent(d.taskId, d.reason);
          }
          // Spawns of one tick are independent (own worktree, branch, token): start them together.
          await Promise.all(
            decisions.filter((d) => d.kind === "spawn").map((d) =>
              this.#spawn(tasks.find((t) => t.id === d.taskId) as Task)
            ),
          );
          const fresh = decisions.some((d) => d.kind === "spawn" || d.kind === "fail_dependent")
            ? await ctx.store.list({})
            : tasks;
          const holds = await ctx.holds.list();
          const decision = decideTermination({
            tasks: fresh,
            runningAgents: this.#running.size + this.#inFlight.size,
            pendingMerges: this.#pendingMerges,
            deferredByBackoff: decisions.filter((d) =>
              d.kind === "defer" && d.reason === "backoff"
            ).length,
            holdActive: holds.length > 0,
            nowMs: ctx.clock.nowMs(),
            stall: this.#stall,
            graceS: ctx.config.tuning.orchestrator.stalled_run_grace_s,
            minTicks: ctx.config.tuning.orchestrator.stalled_run_ticks,
          });
          if (decision.stop === "quiescent") {
            this.outcome.end = "quiescent";
            this.outcome.reason = "every task finished";
            break;
          }
          if (decision.stop === "backstop") {
            await this.#backstop(decision.failTaskIds, decision.reason);
            break;
          }
          this.#stall = decision.stall;
          this.#render(fresh);
        }
        await this.#sleep();
      }
    } finally {
      unsubscribe();
      this.#ctx.reporter.close?.();
    }
    return this.outcome;
  }

  async #sleep(): Promise<void> {
    const tickMs = this.#ctx.config.tuning.orchestrator.tick_interval_s * 1000;
    const controller = new AbortController();
    const woken = new Promise<void>((resolve) => (this.#wake = resolve));
    await Promise.race([woken, this.#ctx.clock.sleep(tickMs, controller.signal)]);
    controller.abort();
    this.#wake = undefined;
  }

  #render(tasks: readonly Task[]): void {
    const rows: AgentRow[] = [...this.#running.values()].map((s) => ({
      adapter: s.adapterName,
      model: s.file.model ?? "default",
      task: s.task.id,
      elapsedS: Math.round((this.#ctx.clock.monotonicMs() - s.startedMs) / 1000),
      state: s.state,
      last: s.agent?.lastText ?? "",
    }));
    const finished =
      tasks.filter((t) => DEPENDENCY_MET.has(t.status) || DEAD_END.has(t.status)).length;
    this.#ctx.reporter.agents?.(rows, { done: finished, total: tasks.length });
  }

  async #failDependent(taskId: string, reason: string): Promise<void> {
    await this.#ctx.store.transition(taskId, "failed", {
      actor: "orchestrator",
      reason,
      terminal_reason: reason,
    });
    await this.#ctx.ledger.append({
      kind: "task.failed",
      task_id: taskId,
      payload: { reason: "dependency-failed", detail: reason },
    });
    this.#ctx.reporter.event({ type: "task.failed", task_id: taskId, reason });
  }

  #attemptOf(task: Task): number {
    return task.retry_count + 1;
  }

  /** Model and effort for an attempt: the role's ladder escalates on retries. */
  #modelFor(
    task: Task,
  ): { model?: string; effort?: "low" | "medium" | "high" | "max"; cli?: string } {
    const policy = this.#ctx.config.role_model_policy?.[task.role];
    const base = {
      model: task.model ?? this.#ctx.modelOverride ?? policy?.model,
      effort: task.effort ?? policy?.effort,
      cli: undefined as string | undefined,
    };
    if (task.retry_count > 0 && policy?.ladder && policy.ladder.length > 0) {
      const step = policy.ladder[Math.min(task.retry_count, policy.ladder.length) - 1];
      return { model: step.model ?? base.model, effort: step.effort ?? base.effort, cli: step.cli };
    }
    if (task.retry_count > 0 && policy?.fallback_model) {
      return { ...base, model: policy.fallback_model };
    }
    return base;
  }

  async #spawn(task: Task): Promise<void> {
    const ctx = this.#ctx;
    const attempt = this.#attemptOf(task);
    // The run id's hex tail plus the resume count: unique per run and per resume.
    const runTag = `${ctx.runId.split("-").pop()}${ctx.runAttempt > 1 ? `r${ctx.runAttempt}` : ""}`;
    const session = sessionId(task.id, attempt, runTag);
    const choice = this.#modelFor(task);
    let resolved: ResolvedCli;
    try {
      resolved = await this.resolveAdapter({ ...task, cli: choice.cli ?? task.cli });
    } catch (error) {
      await this.#failTask(task, `adapter: ${(error as Error).message}`, "infra-error");
      return;
    }
    const agentId = `${resolved.adapter.name}:${session}`;
    let claimed: Task;
    try {
      claimed = await ctx.store.claim(task.id, {
        agent: session,
        expectedVersion: task.version,
        actor: "orchestrator",
        reason: `spawn ${session}`,
      });
    } catch (error) {
      ctx.reporter.event({
        type: "run.warning",
        message: `claim of ${task.id} refused: ${(error as Error).message}`,
      });
      return;
    }
    await this.#audit({
      actor: "orchestrator",
      event_type: "scheduler.claim",
      resource_type: "task",
      resource_id: task.id,
      details: { session, attempt, adapter: resolved.adapter.name },
    });
    try {
      const issued = await ctx.tokens.issueAgentToken({
        session,
        agent_id: session,
        task_ids: [task.id],
        can_create_tasks: task.role === "manager",
      });
      const attachments = ctx.attachments
        ? await ctx.attachments.forSpawn(task, {
          session,
          worktreeRelative: join(".sdd", "worktrees", session),
          turnSeq: 0,
          adapter: resolved.adapter.name,
          spawnPath: "direct-subprocess",
        })
        : undefined;
      const body = buildPromptBody({
        taskId: task.id,
        title: task.title,
        description: task.description,
        role: task.role,
        ownedFiles: task.owned_files,
        signals: signalsText(task),
        goal: ctx.goal,
        failureContext: this.#failureContext.get(task.id),
        attempt,
      });
      const prompt = attachments ? attachments.compose(body) : body;
      const tuning = ctx.config.tuning;
      const endpoint = endpointForRole(ctx.config, task.role);
      const agent = await startAgent({
        session,
        taskId: task.id,
        adapter: resolved.adapter,
        executable: resolved.executable,
        model: choice.model,
        effort: choice.effort,
        maxTurns: tuning.agent.max_turns,
        endpoint,
        prompt,
        extraEnv: {
          BERNSTEIN_SERVER_URL: ctx.server.url,
          BERNSTEIN_TASK_TOKEN: issued.token,
          BERNSTEIN_TASK_ID: task.id,
          BERNSTEIN_AGENT_ID: session,
        },
        deadlineMs: agentDeadlineSeconds(tuning, task.scope) * 1000,
        killGraceMs: tuning.agent.kill_grace_s * 1000,
        isRoot: ctx.isRoot,
        settings: ctx.config.adapters?.[resolved.adapter.name],
        baseSha: this.#head ??= await ctx.git.revParse("HEAD"),
      }, {
        root: ctx.root,
        sdd: ctx.sdd,
        git: ctx.git,
        env: ctx.env,
        selfCommand: ctx.selfCommand,
        selfEnv: ctx.selfEnv,
        now: () => ctx.clock.monotonicMs(),
      });
      const running = await ctx.store.transition(task.id, "in_progress", {
        actor: "orchestrator",
        reason: `agent ${session} started (pid ${agent.handle.pid})`,
      });
      const file: SessionFile = {
        session,
        task_id: task.id,
        adapter: resolved.adapter.name,
        model: choice.model ?? null,
        agent_id: agentId,
        worktree: agent.worktree,
        branch: agent.branch,
        base_sha: agent.baseSha,
        pid: agent.handle.pid,
        started_at: nowIso(ctx.clock),
        state: "running",
        attachment_digests: attachments?.digests ?? [],
      };
      await saveSessionFile(ctx.sdd, file);
      const entry: RunningSession = {
        session,
        task: running,
        agent,
        adapterName: resolved.adapter.name,
        agentId,
        startedMs: ctx.clock.monotonicMs(),
        file,
        worktree: agent.worktree,
        branch: agent.branch,
        baseSha: agent.baseSha,
        state: "running",
      };
      this.#running.set(session, entry);
      this.#spawnFailures.delete(task.id);
      await this.#audit({
        actor: "orchestrator",
        event_type: "agent.spawned",
        resource_type: "agent",
        resource_id: session,
        details: {
          task_id: task.id,
          adapter: resolved.adapter.name,
          model: choice.model ?? null,
          pid: agent.handle.pid,
          argv0: agent.invocation.argv[0],
          prompt_channel: agent.invocation.prompt_channel,
          attachment_digests: file.attachment_digests,
          // What the adapter could not honour or chose (root permission mode, ignored effort).
          notes: agent.invocation.notes,
        },
      });
      await ctx.ledger.append({
        kind: "task.started",
        task_id: task.id,
        payload: { session, adapter: resolved.adapter.name, model: choice.model ?? null, attempt },
      });
      ctx.reporter.event({
        type: "task.spawned",
        task_id: task.id,
        session,
        adapter: resolved.adapter.name,
        model: choice.model ?? null,
        attempt,
      });
      this.#track(this.#reap(entry));
    } catch (error) {
      await this.#spawnFailed(claimed, session, error as Error);
    }
  }

  async #spawnFailed(task: Task, session: string, error: Error): Promise<void> {
    const ctx = this.#ctx;
    const failures = (this.#spawnFailures.get(task.id) ?? 0) + 1;
    this.#spawnFailures.set(task.id, failures);
    await ctx.tokens.revoke(session).catch(() => {});
    const reason = `spawn failed: ${error.message}`;
    await this.#audit({
      actor: "orchestrator",
      event_type: "agent.spawn_failed",
      resource_type: "task",
      resource_id: task.id,
      details: { session, reason, failures },
    });
    // An attachment refusal will not change on retry; a spawn that keeps failing is infra.
    const attachment = error instanceof BernsteinError && error.code.startsWith("attach.");
    if (attachment || failures >= MAX_SPAWN_FAILURES) {
      await ctx.store.transition(task.id, "failed", {
        actor: "orchestrator",
        reason,
        terminal_reason: reason,
      });
      await ctx.ledger.append({
        kind: "task.failed",
        task_id: task.id,
        payload: attachment
          ? { reason: "attachment-refused", detail: error.message }
          : { reason: "infra-error", detail: reason },
      });
      ctx.reporter.event({ type: "task.failed", task_id: task.id, reason });
      return;
    }
    const tuning = ctx.config.tuning.spawn;
    const delay = spawnBackoffMs(failures, tuning.spawn_backoff_base_s, tuning.spawn_backoff_max_s);
    this.#notBefore.set(task.id, ctx.clock.nowMs() + delay);
    await ctx.store.transition(task.id, "open", {
      actor: "orchestrator",
      reason: `${reason}; retrying in ${delay / 1000}s`,
    });
    ctx.reporter.event({
      type: "run.warning",
      message: `${task.id}: ${reason}; retrying in ${delay / 1000}s`,
    });
  }

  /** Waits for an agent to exit, then decides: done → signals → gates → merge; else fail/retry. */
  async #reap(s: RunningSession): Promise<void> {
    const ctx = this.#ctx;
    const { result, timedOut, signal } = await (s.agent as AgentProcess).result;
    await ctx.tokens.revoke(s.session).catch(() => {});
    this.outcome.costs.push({
      adapter: s.adapterName,
      model: s.file.model ?? "default",
      cost_usd: result.cost_usd,
      tokens: result.tokens === null ? null : result.tokens.input + result.tokens.output,
      turns: result.turns,
    });
    this.#usage.set(s.task.id, {
      turns: result.turns,
      tokens_in: result.tokens?.input ?? null,
      tokens_out: result.tokens?.output ?? null,
    });
    await this.#audit({
      actor: "orchestrator",
      event_type: "agent.exited",
      resource_type: "agent",
      resource_id: s.session,
      details: {
        task_id: s.task.id,
        exit_code: result.exit_code,
        signal,
        timed_out: timedOut,
        ok: result.ok,
        turns: result.turns,
        cost_usd: result.cost_usd,
        tokens_in: result.tokens?.input ?? null,
        tokens_out: result.tokens?.output ?? null,
        subtype: result.subtype,
        error: result.error,
      },
    });
    s.state = "checking";
    let task = await ctx.store.get(s.task.id) as Task;
    const deadlineS = agentDeadlineSeconds(ctx.config.tuning, task.scope);
    if (task.status === "in_progress" || task.status === "claimed") {
      if (result.ok) {
        task = await ctx.store.transition(task.id, "done", {
          actor: "orchestrator",
          reason: "agent exited 0",
          result_summary: result.summary || "(no summary)",
        });
      } else {
        const reason = timedOut
          ? `deadline: killed after ${deadlineS}s (scope ${task.scope})`
          : result.error ?? `agent exited ${result.exit_code}`;
        await this.#finishSession(s, "failed");
        await this.#failTask(task, reason, failureCode(result, timedOut, reason), result.cost_usd);
        return;
      }
    }
    if (task.status !== "done") {
      // The agent reported failure or a block itself.
      await this.#finishSession(s, "failed");
      if (task.status === "failed") {
        const reason = task.terminal_reason ?? "agent reported failure";
        await this.#afterFailure(
          task,
          reason,
          failureCode(result, timedOut, reason),
          result.cost_usd,
        );
      } else {
        ctx.reporter.event({
          type: "task.failed",
          task_id: task.id,
          reason: `${task.status}: ${task.terminal_reason ?? ""}`,
        });
      }
      return;
    }
    ctx.reporter.event({ type: "task.done", task_id: task.id, summary: task.result_summary ?? "" });
    await this.#completeAndQueue(s, task, result.cost_usd);
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
    this.#running.set(s.session, s);
    this.#track(this.#completeAndQueue(s, task, null));
  }

  /** Commits the worktree, checks signals and gates, then queues the merge (or fails). */
  async #completeAndQueue(s: RunningSession, task: Task, costUsd: number | null): Promise<void> {
    const ctx = this.#ctx;
    const authored = { name: s.agentId, email: `${s.session}@agents.bernstein.invalid` };
    await ctx.git.commitAll(
      s.worktree,
      `${task.id}: ${task.title}\n\n${
        task.result_summary ?? ""
      }\n\nBernstein-Session: ${s.session}`,
      authored,
    );
    const signals = await evaluateCompletionSignals(
      task.completion_signals,
      worktreeEdges(s.worktree, { env: ctx.env }),
    );
    if (!signals.met) {
      const unmet = signals.results.filter((r) => !r.met).map((r) => r.reason).join("; ");
      await this.#rejectDone(
        s,
        task,
        "signals-unmet",
        `completion signals not met: ${unmet}`,
        costUsd,
      );
      return;
    }
    const changes = await ctx.git.changedPaths(s.baseSha, s.branch);
    const gates: GateResult[] = [];
    if (ctx.config.quality_gates.run_config) gates.push(runConfigGate(changes));
    const timeoutS = ctx.config.tuning.gates.timeout_s;
    for (const name of ["tests", "lint"] as const) {
      const gate = ctx.config.quality_gates[name];
      if (gate && changes.length > 0 && gates.every((g) => g.ok)) {
        gates.push(
          await commandGate({
            gate: name,
            command: gate.command,
            cwd: s.worktree,
            timeoutS: gate.timeout_s ?? timeoutS,
            env: ctx.env,
          }),
        );
      }
    }
    for (const g of gates) {
      await this.#audit({
        actor: "orchestrator",
        event_type: "gate.result",
        resource_type: "task",
        resource_id: task.id,
        details: {
          gate: g.gate,
          ok: g.ok,
          reason: g.reason,
          session: s.session,
          output_tail: (g.output ?? "").slice(-2000),
        },
      });
    }
    const failed = gates.find((g) => !g.ok);
    if (failed) {
      ctx.reporter.event({
        type: "gate.failed",
        task_id: task.id,
        gate: failed.gate,
        reason: failed.reason,
      });
      // A refused gate is a refused merge: recorded, the branch kept, the run unhealthy.
      await this.#refuseMerge(
        s,
        task,
        "gate-failed",
        `gate ${failed.gate}: ${failed.reason}${
          failed.output ? `\n${failed.output.slice(-2000)}` : ""
        }`,
        costUsd,
      );
      return;
    }
    if (changes.length === 0) {
      await ctx.store.transition(task.id, "closed", {
        actor: "orchestrator",
        reason: "no changes to merge",
      });
      await ctx.ledger.append({
        kind: "task.completed",
        task_id: task.id,
        payload: { merged: false, cost_usd: costUsd, files: 0, ...this.#usage.get(task.id) },
      });
      await this.#removeWorktree(s);
      await this.#finishSession(s, "merged");
      ctx.reporter.event({ type: "task.closed", task_id: task.id, reason: "no changes" });
      return;
    }
    s.state = "merging";
    this.#pendingMerges++;
    this.#mergeChain = this.#mergeChain.then(() => this.#merge(s, task, costUsd, changes)).catch(
      (error) => {
        ctx.reporter.event({
          type: "run.warning",
          message: `merge of ${task.id} failed unexpectedly: ${(error as Error).message}`,
        });
      },
    ).finally(() => {
      this.#pendingMerges--;
      this.#wakeUp();
    });
    this.#track(this.#mergeChain);
  }

  /** One merge into the branch checked out at the root; lineage for every file it brings in. */
  async #merge(
    s: RunningSession,
    task: Task,
    costUsd: number | null,
    changes: ChangedPath[],
  ): Promise<void> {
    const ctx = this.#ctx;
    // A session adopted after a crash may have merged already: never merge twice.
    const already = s.agent === undefined && await ctx.git.isAncestor(s.branch, "HEAD");
    let sha: string;
    if (already) {
      sha = await ctx.git.revParse("HEAD");
    } else {
      const merged = await ctx.git.merge(
        s.branch,
        `Merge ${task.id}: ${task.title}\n\nBernstein-Run: ${ctx.runId}\nBernstein-Session: ${s.session}`,
      );
      if (!merged.ok) {
        const detail = merged.reason === "conflict"
          ? `conflicts in ${merged.conflicts.join(", ")}`
          : merged.output.split("\n").slice(-3).join(" | ");
        await this.#refuseMerge(s, task, "merge-conflict", detail, costUsd);
        return;
      }
      sha = merged.sha;
    }
    this.#head = sha;
    const written: string[] = [];
    try {
      for (const change of changes) {
        if (change.status === "D") continue;
        const bytes = await ctx.git.showFile(sha, change.path);
        if (already && await this.#alreadyRecorded(change.path, bytes, s.agentId)) {
          written.push(change.path);
          continue;
        }
        const r = await ctx.lineage.recordWrite(change.path, bytes, {
          agent: s.agentId,
          toolCallId: `task:${task.id}`,
          spanId: s.session,
          attachmentDigests: s.file.attachment_digests.length > 0
            ? s.file.attachment_digests
            : undefined,
        });
        if (r.status === "failed") {
          ctx.reporter.event({
            type: "run.warning",
            message: `lineage for ${change.path} not recorded (lineage.strict is off)`,
          });
        }
        written.push(change.path);
      }
    } catch (error) {
      // lineage.strict: the write is refused, so the merge is undone and the branch kept.
      if (!already) {
        await ctx.git.run(["reset", "--hard", "--quiet", "ORIG_HEAD"]);
        this.#head = undefined;
      }
      await this.#refuseMerge(s, task, "lineage-refused", (error as Error).message, costUsd);
      return;
    }
    await ctx.store.transition(task.id, "closed", {
      actor: "orchestrator",
      reason: `merged ${sha.slice(0, 12)}`,
    });
    // The audit chain and the ledger are separate files: write both at once.
    await Promise.all([
      this.#audit({
        actor: "orchestrator",
        event_type: "merge.completed",
        resource_type: "task",
        resource_id: task.id,
        details: { session: s.session, branch: s.branch, sha, files: written },
      }),
      ctx.ledger.append({
        kind: "task.completed",
        task_id: task.id,
        payload: {
          merged: true,
          cost_usd: costUsd,
          files: written.length,
          sha,
          ...this.#usage.get(task.id),
        },
      }),
    ]);
    this.outcome.merges.push({
      task_id: task.id,
      session: s.session,
      files: written,
      sha,
    });
    ctx.reporter.event({
      type: "task.merged",
      task_id: task.id,
      files: written.length,
      sha,
    });
    // Clean-up is off the merge path: the next merge need not wait for it.
    this.#track((async () => {
      await this.#removeWorktree(s);
      await ctx.git.deleteBranch(s.branch, true).catch(() => {});
      await this.#finishSession(s, "merged");
    })());
  }

  /** True when the artefact's latest entry already records these bytes by this agent. */
  async #alreadyRecorded(path: string, bytes: Uint8Array, agentId: string): Promise<boolean> {
    const last = (await this.#ctx.lineage.chain(path)).at(-1);
    return last !== undefined && last.entry.agent_id === agentId &&
      last.entry.content_hash === `sha256:${sha256Hex(bytes)}`;
  }

  async #removeWorktree(s: RunningSession): Promise<void> {
    await this.#ctx.git.removeWorktree(s.worktree, true).catch(() => {});
  }

  async #finishSession(s: RunningSession, state: string): Promise<void> {
    this.#running.delete(s.session);
    s.file.state = state;
    await saveSessionFile(this.#ctx.sdd, s.file);
  }

  async #refuseMerge(
    s: RunningSession,
    task: Task,
    reason: string,
    detail: string,
    costUsd: number | null,
  ): Promise<void> {
    const ctx = this.#ctx;
    await recordRefusedMerge(ctx.sdd, {
      run_id: ctx.runId,
      task_id: task.id,
      session: s.session,
      branch: s.branch,
      reason,
      detail,
      at: nowIso(ctx.clock),
    });
    this.outcome.refused.push({ task_id: task.id, branch: s.branch, reason, detail });
    await this.#audit({
      actor: "orchestrator",
      event_type: "merge.refused",
      resource_type: "task",
      resource_id: task.id,
      details: { session: s.session, branch: s.branch, reason, detail },
    });
    ctx.reporter.event({
      type: "merge.refused",
      task_id: task.id,
      reason: `${reason}: ${detail}`,
      branch: s.branch,
    });
    await this.#finishSession(s, "failed");
    const current = await ctx.store.get(task.id) as Task;
    await this.#failTask(current, `${reason}: ${detail}`, reason, costUsd, s.branch);
  }

  /** A done task whose signals or gates failed: done → failed, branch kept. */
  async #rejectDone(
    s: RunningSession,
    task: Task,
    code: string,
    detail: string,
    costUsd: number | null,
  ): Promise<void> {
    await this.#finishSession(s, "failed");
    await this.#failTask(task, `${code}: ${detail}`, code, costUsd, s.branch);
  }

  /** Fails a task (from any active or done state) and retries it when its budget allows. */
  async #failTask(
    task: Task,
    reason: string,
    code: string,
    costUsd: number | null = null,
    branch?: string,
  ): Promise<void> {
    const ctx = this.#ctx;
    const short = reason.split("\n")[0].slice(0, 500);
    let failed = task;
    if (task.status !== "failed") {
      failed = await ctx.store.transition(task.id, "failed", {
        actor: "orchestrator",
        reason: short,
        terminal_reason: short,
      });
    }
    if (branch) this.outcome.keptBranches.push({ task_id: task.id, branch, reason: short });
    await this.#afterFailure(failed, reason, code, costUsd);
  }

  async #afterFailure(
    task: Task,
    reason: string,
    code: string,
    costUsd: number | null,
  ): Promise<void> {
    const ctx = this.#ctx;
    const short = reason.split("\n")[0].slice(0, 500);
    await ctx.ledger.append({
      kind: "task.failed",
      task_id: task.id,
      payload: { reason: code, detail: short, cost_usd: costUsd, ...this.#usage.get(task.id) },
    });
    ctx.reporter.event({ type: "task.failed", task_id: task.id, reason: short });
    if (task.retry_count < task.max_retries && this.#stopRequested === undefined) {
      this.#failureContext.set(task.id, `The previous attempt failed: ${reason.slice(0, 4000)}`);
      // A rate-limited attempt waits at least the cooldown: the normal backoff would hit it again.
      const rateLimited = code === "rate-limited";
      const delay = retryDelayMs(task.retry_count + 1, ctx.config.tuning.spawn, rateLimited);
      this.#notBefore.set(task.id, ctx.clock.nowMs() + delay);
      await ctx.store.transition(task.id, "open", {
        actor: "orchestrator",
        reason: `retry ${task.retry_count + 1} of ${task.max_retries}: ${short}`,
      });
      ctx.reporter.event({
        type: "task.retry",
        task_id: task.id,
        attempt: task.retry_count + 2,
        delay_s: delay / 1000,
        ...(rateLimited ? { cooldown: "rate-limit" } : {}),
      });
    }
  }

  /** Stalled agents (no output, no heartbeat for the stall threshold) are stopped. */
  async #checkLiveness(): Promise<void> {
    const ctx = this.#ctx;
    const thresholdMs = ctx.config.tuning.agent.stall_threshold_s * 1000;
    const beats = new Map(ctx.server.agents().map((a) => [a.agent_id, a]));
    const now = ctx.clock.monotonicMs();
    for (const s of this.#running.values()) {
      if (s.state !== "running" || s.agent === undefined) continue;
      const beat = beats.get(s.session);
      const beatAge = beat ? ctx.clock.nowMs() - Date.parse(beat.last_heartbeat_at) : Infinity;
      const outputAge = now - s.agent.lastOutputMs;
      if (outputAge > thresholdMs && beatAge > thresholdMs) {
        ctx.reporter.event({
          type: "run.warning",
          message: `${s.task.id}: agent ${s.session} stalled (no output or heartbeat for ${
            Math.round(outputAge / 1000)
          }s); stopping it`,
        });
        await this.#audit({
          actor: "orchestrator",
          event_type: "agent.stalled",
          resource_type: "agent",
          resource_id: s.session,
          details: { task_id: s.task.id, silent_s: Math.round(outputAge / 1000) },
        });
        s.agent.handle.terminate(ctx.config.tuning.agent.kill_grace_s * 1000);
      }
    }
  }

  /** A manager alive past the threshold with no child task aborts the run. */
  async #checkManager(tasks: readonly Task[]): Promise<boolean> {
    const ctx = this.#ctx;
    const limitMs = ctx.config.tuning.orchestrator.stalled_manager_threshold_s * 1000;
    for (const s of this.#running.values()) {
      if (s.task.role !== "manager" || s.state !== "running") continue;
      const children = tasks.filter((t) => t.parent_task_id === s.task.id).length;
      const aliveMs = ctx.clock.monotonicMs() - s.startedMs;
      if (children === 0 && aliveMs >= limitMs) {
        const diagnostic = join(ctx.sdd, "runs", ctx.runId, "manager_stalled.json");
        await Deno.mkdir(join(ctx.sdd, "runs", ctx.runId), { recursive: true });
        const report: JsonObject = {
          run_id: ctx.runId,
          task_id: s.task.id,
          session: s.session,
          adapter: s.adapterName,
          alive_s: Math.round(aliveMs / 1000),
          threshold_s: ctx.config.tuning.orchestrator.stalled_manager_threshold_s,
          children: 0,
          last_output: s.agent?.lastText ?? "",
          log: s.agent?.logPath ?? "",
        };
        await Deno.writeTextFile(diagnostic, JSON.stringify(report, null, 2) + "\n");
        await this.#audit({
          actor: "orchestrator",
          event_type: "run.manager_stalled",
          resource_type: "run",
          resource_id: ctx.runId,
          details: report,
        });
        ctx.reporter.event({
          type: "run.stopping",
          reason: `the manager created no task in ${report.alive_s}s (diagnostic: ${diagnostic})`,
        });
        this.outcome.end = "manager-stalled";
        this.outcome.reason =
          `manager stalled: no child task after ${report.alive_s}s; see ${diagnostic}`;
        await this.#killAll("manager stalled");
        return true;
      }
    }
    return false;
  }

  async #killAll(reason: string): Promise<void> {
    const ctx = this.#ctx;
    const grace = ctx.config.tuning.agent.kill_grace_s * 1000;
    await Promise.all([...this.#running.values()].map((s) => s.agent?.handle.terminate(grace)));
    await Promise.allSettled([...this.#inFlight]);
    for (const s of [...this.#running.values()]) {
      const task = await ctx.store.get(s.task.id);
      if (task && ACTIVE.has(task.status)) {
        await ctx.store.transition(task.id, "failed", {
          actor: "orchestrator",
          reason,
          terminal_reason: reason,
        }).catch(() => {});
        await ctx.ledger.append({ kind: "task.abandoned", task_id: task.id, payload: { reason } });
      }
      await this.#finishSession(s, "abandoned");
    }
  }

  /** Stop requested: drain running agents (or kill with --force), then end. True when done. */
  async #drain(): Promise<boolean> {
    const ctx = this.#ctx;
    const reason = this.#stopRequested ?? "stop";
    await this.#audit({
      actor: "operator",
      event_type: "run.stop_requested",
      resource_type: "run",
      resource_id: ctx.runId,
      details: { reason, force: this.#forceStop, running: this.#running.size },
    });
    ctx.reporter.event({ type: "run.stopping", reason });
    if (this.#forceStop) {
      await this.#killAll(`stopped: ${reason}`);
    } else if (this.#running.size + this.#inFlight.size > 0) {
      const drainMs = ctx.config.tuning.orchestrator.drain_timeout_s * 1000;
      const deadline = ctx.clock.monotonicMs() + drainMs;
      while (this.#running.size + this.#inFlight.size > 0 && ctx.clock.monotonicMs() < deadline) {
        await Promise.race([Promise.allSettled([...this.#inFlight]), ctx.clock.sleep(500)]);
      }
      if (this.#running.size > 0) {
        await this.#killAll(`stopped after the ${drainMs / 1000}s drain: ${reason}`);
      }
    }
    await Promise.allSettled([this.#mergeChain]);
    this.outcome.end = "stopped";
    this.outcome.reason = `stopped: ${reason}`;
    return true;
  }

  /** The zero-terminal backstop: fail every unfinished task and stop. */
  async #backstop(taskIds: readonly string[], reason: string): Promise<void> {
    const ctx = this.#ctx;
    await this.#killAll(`backstop: ${reason}`);
    for (const id of taskIds) {
      const task = await ctx.store.get(id);
      if (!task || DEPENDENCY_MET.has(task.status) || DEAD_END.has(task.status)) continue;
      await ctx.store.transition(id, "failed", {
        actor: "orchestrator",
        reason: `backstop: ${reason}`,
        terminal_reason: `backstop: ${reason}`,
      }).catch(() => {});
      await ctx.ledger.append({
        kind: "task.abandoned",
        task_id: id,
        payload: { reason: "backstop", detail: reason },
      });
    }
    await this.#audit({
      actor: "orchestrator",
      event_type: "run.backstop",
      resource_type: "run",
      resource_id: ctx.runId,
      details: { reason, tasks: [...taskIds] },
    });
    ctx.reporter.event({
      type: "run.stopping",
      reason: `backstop: ${reason}; the goal was not met`,
    });
    this.outcome.end = "backstop";
    this.outcome.reason = `backstop: ${reason}`;
  }
}
