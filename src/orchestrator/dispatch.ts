/**
 * Dispatch: turns a task the scheduler chose into a running agent session. It picks the
 * attempt's adapter and model (retry ladders included), claims the task in the store (the
 * claim seam: a version check, so a task is never claimed twice), issues the agent's scoped
 * token, resolves the spawn's attachments, builds the prompt (with the previous failure as
 * context), and hands the request to the executor. A spawn that cannot start releases the
 * token and goes to the retry policy.
 */
import { isCasDamage } from "../cas/mod.ts";
import {
  endpointForRole,
  type EndpointProfile,
  type ResolvedCli,
  unenforcedNote,
} from "../adapters/mod.ts";
import { isStorageFailure } from "../errors/mod.ts";
import { readAuditKey, resolveAuditKeyPath } from "../audit/mod.ts";
import { agentDeadlineCapSeconds } from "../config/mod.ts";
import { sessionLayout } from "../io/mod.ts";
import {
  connectionRequestsOf,
  FleetError,
  mentionsVariables,
  pinTaskVariables,
} from "../fleet/mod.ts";
import type { Task } from "../tasks/mod.ts";
import { type AdapterResolver, type ModelChoice, modelForAttempt } from "./adapter_choice.ts";
import { DIRECT_SUBPROCESS } from "./agent_session.ts";
import { runTagOf, sessionId } from "./agent_session.ts";
import { processStartTime } from "./pid_liveness.ts";
import type { Execution, ExecutionRequest, Executor } from "./executor.ts";
import type { ProviderRouter } from "./provider_routing.ts";
import type { MergeQueue } from "./merge_queue.ts";
import { describeSignal } from "./planning.ts";
import { catalogPreamble } from "./catalogs.ts";
import { buildPromptBody, recoveryFactsOf } from "./prompt.ts";
import type { Recorder } from "./recorder.ts";
import type { Retries } from "./retries.ts";
import type { RunContext, SpawnAttachments } from "./run_context.ts";
import { enforces } from "./run_policy.ts";
import { saveSessionFile, type SessionFile } from "./run_state.ts";
import type { RunningSession, SessionTable } from "./sessions.ts";

/** The isolation record of an agent that runs on a worker host (decided there). */
const REMOTE_ISOLATION = {
  isolation: "remote",
  reason: "runs on a worker host; that host's executor decides its isolation, not recorded here",
};

/** What dispatch works with. */
export interface DispatchDeps {
  /** The run's context (store, tokens, server, config, attachments …). */
  ctx: RunContext;
  /** Adapter resolution, cached for the run. */
  adapters: AdapterResolver;
  /** Starts agents. */
  executor: Executor;
  /** Where facts go. */
  recorder: Recorder;
  /** Live sessions. */
  sessions: SessionTable;
  /** Failure and retry. */
  retries: Retries;
  /** Owner of the base commit (HEAD between merges). */
  merges: MergeQueue;
  /** provider_availability routing (absent: no chains declared). */
  providers?: ProviderRouter;
}

/** A pin as task metadata (plain JSON). */
type VariablePinJson = { [key: string]: string | number };

/** One attempt of one task, as decided before the claim. */
interface Attempt {
  task: Task;
  attempt: number;
  session: string;
  choice: ModelChoice;
  cli: ResolvedCli;
  /** The endpoint profile the agent talks to (the chain element's, else the role's). */
  endpoint?: EndpointProfile;
}

const TIER_NAMES = ["haiku", "sonnet", "opus"];

/**
 * The model an attempt really uses, for records: as the adapters resolve it, an endpoint's
 * model replaces no model or a tier name (so a local model never shows as `default`).
 */
export function attemptModel(
  asked: string | undefined,
  endpoint: EndpointProfile | undefined,
): string | undefined {
  if (endpoint?.model === undefined) return asked;
  return asked === undefined || TIER_NAMES.includes(asked) ? endpoint.model : asked;
}

/** Which provider served an attempt: the endpoint profile (with its URL), else the CLI's own. */
export function providerOf(adapter: string, endpoint: EndpointProfile | undefined): string {
  return endpoint === undefined
    ? `${adapter} (its own provider)`
    : `endpoint ${endpoint.name} (${endpoint.base_url})`;
}

/** The lineage identity of an attempt's agent. */
function agentIdOf(a: Attempt): string {
  return `${a.cli.adapter.name}:${a.session}`;
}

/** The prompt of a spawn and, when its attachments travel on the CLI's channel, their bytes. */
function composed(
  attachments: SpawnAttachments | undefined,
  body: string,
): Pick<ExecutionRequest, "prompt" | "media"> {
  if (attachments === undefined) return { prompt: body };
  const { prompt, media } = attachments.compose(body);
  return media.length > 0 ? { prompt, media } : { prompt };
}

/** Spawns agents for the tasks the scheduler chose. */
export class Dispatcher {
  readonly #deps: DispatchDeps;
  /** Sessions whose agent started (a released claim's task runs again under a new one). */
  readonly #used = new Set<string>();

  constructor(deps: DispatchDeps) {
    this.#deps = deps;
  }

  /**
   * Claims the task and starts its agent; the new session, or undefined when the task was not
   * claimed or its agent did not start (already recorded and handed to the retry policy).
   */
  async spawn(task: Task): Promise<RunningSession | undefined> {
    const attempt = await this.#plan(task);
    if (attempt === undefined) return undefined;
    const claimed = await this.#claim(attempt);
    if (claimed === undefined) return undefined;
    try {
      return await this.#start({ ...attempt, task: claimed });
    } catch (error) {
      await this.#deps.ctx.tokens.revoke(attempt.session).catch(() => {});
      // A damaged CAS blob or failed storage (disk full, read-only `.sdd`: an agent may fill
      // the disk the moment it starts) is not the task's fault: the run stops on it, and the
      // task keeps its claim, so the resume (after 'bernstein cas repair', or once space is
      // freed) spawns it again. Taken for a failed spawn, the task would go back to open.
      if (stopsTheRun(error)) throw error;
      await this.#deps.retries.spawnFailed(claimed, attempt.session, error as Error);
      return undefined;
    }
  }

  /** Session, adapter and model of this attempt; undefined when no adapter can run it. */
  async #plan(task: Task): Promise<Attempt | undefined> {
    const { ctx, adapters, retries } = this.#deps;
    const attempt = task.retry_count + 1;
    // The run id's hex tail plus the resume count: unique per run and per resume.
    const session = this.#fresh(sessionId(task.id, attempt, runTagOf(ctx.runId, ctx.runAttempt)));
    const routed = await this.#route(task);
    if (routed === "refused") return undefined;
    const choice = { ...modelForAttempt(task, ctx.config, ctx.modelOverride), ...routed?.choice };
    try {
      const endpoint = routed !== undefined
        ? routed.endpoint
        : endpointForRole(ctx.config, task.role);
      const cli = await adapters.resolve({ ...task, cli: choice.cli ?? task.cli });
      if (ctx.policy?.refusesUnenforced && !enforces(cli.adapter)) {
        await retries.failTask(
          task,
          `policy: ${cli.adapter.name} has no pre-tool hook and policy.unenforced is refuse`,
          "infra-error",
        );
        return undefined;
      }
      return {
        task,
        attempt,
        session,
        choice: { ...choice, model: attemptModel(choice.model, endpoint) },
        cli,
        ...(endpoint ? { endpoint } : {}),
      };
    } catch (error) {
      await retries.failTask(task, `adapter: ${(error as Error).message}`, "infra-error");
      return undefined;
    }
  }

  /**
   * provider_availability: the chain element a task of a role with a chain runs on (audited
   * as `routing.receipt`); "refused" when no element is healthy (the task fails loudly);
   * undefined when the role has no chain or the task names its own adapter.
   */
  async #route(
    task: Task,
  ): Promise<{ choice: ModelChoice; endpoint?: EndpointProfile } | "refused" | undefined> {
    const { ctx, providers, recorder, retries } = this.#deps;
    if (providers === undefined || task.cli) return undefined;
    const decision = await providers.route(task.id, task.role);
    if (decision === undefined) return undefined;
    await recorder.record({ kind: "routing.receipt", taskId: task.id, decision });
    if (decision.chosen === null) {
      const probes = decision.chain.map((e, i) =>
        `${e.adapter}${e.model ? "/" + e.model : ""}: ${decision.probes[i].status}` +
        (decision.excluded.includes(i) ? " (failed this task)" : "")
      ).join("; ");
      await retries.failTask(
        task,
        `no healthy provider for role ${task.role} (chain ${decision.chain_name}: ${probes})`,
        "provider-unavailable",
      );
      return "refused";
    }
    const element = decision.chain[decision.chosen];
    const profile = element.endpoint === undefined
      ? undefined
      : ctx.config.local_endpoints?.[element.endpoint];
    return {
      choice: { cli: element.adapter, ...(element.model ? { model: element.model } : {}) },
      ...(profile && element.endpoint ? { endpoint: { name: element.endpoint, ...profile } } : {}),
    };
  }

  /** `base`, or `base-d2`, `base-d3` … when an earlier dispatch used it (claim released). */
  #fresh(base: string): string {
    let session = base;
    for (let n = 2; this.#used.has(session); n++) session = `${base}-d${n}`;
    return session;
  }

  /** The claim seam: open → claimed at the version the scheduler saw. */
  async #claim(a: Attempt): Promise<Task | undefined> {
    const { ctx, recorder } = this.#deps;
    let claimed: Task;
    try {
      claimed = await ctx.store.claim(a.task.id, {
        agent: a.session,
        expectedVersion: a.task.version,
        actor: "orchestrator",
        reason: `spawn ${a.session}`,
      });
    } catch (error) {
      if (isStorageFailure(error)) throw error;
      await recorder.warn(`claim of ${a.task.id} refused: ${(error as Error).message}`);
      return undefined;
    }
    await recorder.record({
      kind: "task.claimed",
      taskId: a.task.id,
      session: a.session,
      attempt: a.attempt,
      adapter: a.cli.adapter.name,
    });
    return claimed;
  }

  /** Token, attachments, prompt, executor; then the session is live and recorded. */
  async #start(a: Attempt): Promise<RunningSession> {
    const { ctx, executor, retries, sessions } = this.#deps;
    const token = await ctx.tokens.issueAgentToken({
      session: a.session,
      agent_id: a.session,
      task_ids: [a.task.id],
      can_create_tasks: a.task.role === "manager",
    });
    const attachments = await this.#attachments(a);
    const variables = await this.#variables(a);
    const secretEnv = await this.#connections(a);
    const request = {
      ...await this.#request({ ...a, task: variables.task }, token.token, attachments),
      ...(secretEnv === undefined ? {} : { secretEnv }),
    };
    const execution = await executor.start(request);
    this.#used.add(a.session);
    let file: SessionFile | undefined;
    let session: RunningSession;
    sessions.startRecording(execution);
    try {
      file = await this.#writeSessionFile(a, execution, attachments);
      session = await this.#recordStarted(a, execution, variables.pins, file);
    } catch (error) {
      // The claim went while the agent started, or its start could not be written down (the
      // agent may have filled the disk already): it must not run on unwatched. It is not in
      // the session table, so it is stopped here, once; only a run ended at once meanwhile
      // (Stopping.killNow, which also kills starts being recorded) kills it sooner.
      await this.#abortStarted(a, execution, error as Error);
      if (file !== undefined) {
        await saveSessionFile(this.#deps.ctx.sdd, { ...file, state: "abandoned" }).catch(() => {});
      }
      throw error;
    } finally {
      // No await between this and the table's add: a kill at once sees the agent in one of them.
      sessions.startRecorded(execution);
    }
    sessions.add(session);
    retries.spawned(a.task.id);
    return session;
  }

  /**
   * The session file of a started agent (its pid and the kernel's start time of that pid),
   * written first of all: a run killed from then on leaves the record by which the next run's
   * start ends the agent (recovery.ts). Written after the task's in_progress, as it was, a
   * kill -9 between the two left an agent no later run knew of.
   */
  async #writeSessionFile(
    a: Attempt,
    execution: Execution,
    attachments: SpawnAttachments | undefined,
  ): Promise<SessionFile> {
    // A worker host's pid says nothing of this host's processes.
    const pidStart = execution.host === undefined ? await processStartTime(execution.pid) : null;
    const file = this.#sessionFile(a, execution, attachments, pidStart);
    await saveSessionFile(this.#deps.ctx.sdd, file);
    return file;
  }

  /**
   * The writes that make a started agent (its session file written) a live session: its task
   * in progress, `agent.spawned`. The session joins the table only once both are done.
   */
  async #recordStarted(
    a: Attempt,
    execution: Execution,
    pins: VariablePinJson[] | undefined,
    file: SessionFile,
  ): Promise<RunningSession> {
    const { ctx } = this.#deps;
    const running = await this.#markStarted(a, execution, pins);
    // Progress counts from here: the in_progress just written is the run's, not the agent's
    // (the session file, written before it, is older than that change).
    const progressSinceMs = ctx.clock.nowMs();
    await this.#recordSpawn(a, execution, file);
    return {
      progressSinceMs,
      session: a.session,
      task: running,
      execution,
      adapterName: a.cli.adapter.name,
      agentId: file.agent_id,
      startedMs: ctx.clock.monotonicMs(),
      file,
      worktree: execution.worktree,
      branch: execution.branch,
      baseSha: execution.baseSha,
      state: "running",
      ...this.#watchdogTimeout(a),
    };
  }

  /**
   * Stops an agent whose start could not be recorded, and says so (`agent.start_aborted`; on
   * a full disk the audit log keeps the record for the resume). Waits for its exit, so a run
   * that stops on this failure does not leave it running.
   */
  async #abortStarted(a: Attempt, execution: Execution, error: Error): Promise<void> {
    const { ctx, recorder } = this.#deps;
    const stopped = execution.terminate(ctx.config.tuning.agent.kill_grace_s * 1000)
      .catch(() => {});
    await recorder.record({
      kind: "agent.start_aborted",
      taskId: a.task.id,
      session: a.session,
      pid: execution.pid,
      reason: error.message.split("\n")[0],
    }).catch(() => {});
    await stopped;
    execution.release?.();
  }

  /**
   * claimed → in_progress. A fast agent (or one on a worker whose start report was slow) may
   * have reported already (the task server moves it on itself): a task this session still
   * holds is taken as it is, and its exit decides the rest. A claim that went elsewhere is not.
   */
  async #markStarted(
    a: Attempt,
    execution: Execution,
    pins: VariablePinJson[] | undefined,
  ): Promise<Task> {
    const { store } = this.#deps.ctx;
    try {
      return await store.transition(a.task.id, "in_progress", {
        actor: "orchestrator",
        reason: `agent ${a.session} started (pid ${execution.pid})`,
        holder: a.session,
        ...(pins === undefined ? {} : { metadata: { fleet_pins: pins } }),
      });
    } catch (error) {
      const current = await store.get(a.task.id);
      const reported = current !== undefined && current.status !== "claimed" &&
        current.status !== "open" && current.assigned_agent === a.session;
      if (reported) return current;
      throw error;
    }
  }

  /**
   * The task's `${var:NAME}` references resolved: pinned at its first claim (run spine, audit
   * chain), read from the pinned hash on every later attempt (docs/FLEET.md). `pins` is set
   * when this attempt pinned something new (stamped on the task with `in_progress`).
   */
  async #variables(a: Attempt): Promise<{ task: Task; pins?: VariablePinJson[] }> {
    if (!mentionsVariables(a.task)) return { task: a.task };
    const { ctx } = this.#deps;
    const pinned = await pinTaskVariables(a.task, {
      sdd: ctx.sdd,
      runId: ctx.runId,
      auditKey: ctx.auditKey ?? await readAuditKey(resolveAuditKeyPath(ctx.env).path),
      audit: ctx.audit,
    });
    const task = { ...a.task, title: pinned.title, description: pinned.description };
    return pinned.pinnedNow ? { task, pins: pinned.pins.map((p) => ({ ...p })) } : { task };
  }

  /**
   * The secrets of the connections the task's plan step names, minted now (a rotation since
   * the last attempt is picked up) and registered for redaction before the agent starts.
   */
  async #connections(a: Attempt): Promise<Record<string, string> | undefined> {
    if (connectionRequestsOf(a.task).length === 0) return undefined;
    const minter = this.#deps.ctx.connections;
    if (minter === undefined) {
      throw new FleetError(
        "fleet.conn_not_granted",
        `task ${a.task.id} asks for connections and this run mints none`,
      );
    }
    return await minter.mint(a.task, a.session);
  }

  /**
   * The endpoint's request timeout is the watchdog's to enforce for every CLI: the settings
   * some CLIs take (ENDPOINT_TIMEOUT_NATIVE) do not end a stream that hangs after its headers
   * (claude 2.1.332 waited 90 s on a 3 s API_TIMEOUT_MS), so silence for that long ends it.
   */
  #watchdogTimeout(a: Attempt): Pick<RunningSession, "endpointTimeoutS"> {
    const timeout = a.endpoint?.timeout;
    return timeout === undefined ? {} : { endpointTimeoutS: timeout };
  }

  async #attachments(a: Attempt): Promise<SpawnAttachments | undefined> {
    const { ctx } = this.#deps;
    if (!ctx.attachments) return undefined;
    return await ctx.attachments.forSpawn(a.task, {
      session: a.session,
      ...(ctx.worktreesDir === undefined
        ? { worktreeRelative: sessionLayout(ctx.sdd, a.session).worktreeRelative }
        : { worktreesDir: ctx.worktreesDir, worktreeRelative: a.session }),
      turnSeq: 0,
      adapter: a.cli.adapter.name,
      spawnPath: (ctx.spawnPath ?? DIRECT_SUBPROCESS).name,
    });
  }

  /** What the executor runs: prompt, model, env with the server and token, deadline. */
  async #request(
    a: Attempt,
    token: string,
    attachments: SpawnAttachments | undefined,
  ): Promise<ExecutionRequest> {
    const { ctx, retries, merges } = this.#deps;
    const catalogAgent = ctx.catalog?.agents.find((c) => c.role === a.task.role);
    const body = buildPromptBody({
      taskId: a.task.id,
      title: a.task.title,
      description: a.task.description,
      role: a.task.role,
      ownedFiles: a.task.owned_files,
      signals: a.task.completion_signals.map(describeSignal),
      goal: ctx.goal,
      failureContext: retries.failureContext(a.task.id),
      recovery: recoveryFactsOf(a.task.metadata),
      attempt: a.attempt,
      preamble: catalogAgent === undefined ? undefined : catalogPreamble(catalogAgent),
      ...(ctx.config.cells === undefined ? {} : { cells: ctx.config.cells }),
      progress: {
        everyS: ctx.config.tuning.agent.heartbeat_interval_s,
        extensionS: ctx.config.tuning.orchestrator.deadline_extension_s,
        maxS: ctx.config.tuning.orchestrator.deadline_max_s,
      },
    });
    const tuning = ctx.config.tuning;
    return {
      session: a.session,
      taskId: a.task.id,
      title: a.task.title,
      agentId: agentIdOf(a),
      cli: a.cli,
      model: a.choice.model,
      effort: a.choice.effort,
      max_turns: tuning.agent.max_turns,
      endpoint: a.endpoint,
      settings: ctx.config.adapters?.[a.cli.adapter.name],
      ...composed(attachments, body),
      env: {
        BERNSTEIN_SERVER_URL: ctx.server.url,
        BERNSTEIN_TASK_ID: a.task.id,
        BERNSTEIN_AGENT_ID: a.session,
      },
      // The process's own timer is only the backstop; liveness enforces the extensible one.
      deadlineMs: agentDeadlineCapSeconds(tuning, a.task.scope) * 1000,
      token,
      killGraceMs: tuning.agent.kill_grace_s * 1000,
      isRoot: ctx.isRoot,
      baseSha: await merges.head(),
      ...this.#toolPolicy(a),
    };
  }

  /** The pre-tool hook of this spawn (the session is registered with the run's policy). */
  #toolPolicy(a: Attempt): Pick<ExecutionRequest, "toolPolicy"> {
    const hook = this.#deps.ctx.policy?.hookFor({
      session: a.session,
      taskId: a.task.id,
      adapter: a.cli.adapter,
      serverUrl: this.#deps.ctx.server.url,
    });
    return hook === undefined ? {} : { toolPolicy: hook };
  }

  #sessionFile(
    a: Attempt,
    execution: Execution,
    attachments: SpawnAttachments | undefined,
    pidStart: string | null,
  ): SessionFile {
    return {
      session: a.session,
      task_id: a.task.id,
      adapter: a.cli.adapter.name,
      model: a.choice.model ?? null,
      provider: providerOf(a.cli.adapter.name, a.endpoint),
      agent_id: agentIdOf(a),
      worktree: execution.worktree,
      branch: execution.branch,
      base_sha: execution.baseSha,
      pid: execution.pid,
      pid_start: pidStart,
      started_at: new Date(this.#deps.ctx.clock.nowMs()).toISOString(),
      state: "running",
      attachment_digests: attachments?.digests ?? [],
      isolation: execution.isolation ?? REMOTE_ISOLATION,
    };
  }

  async #recordSpawn(a: Attempt, execution: Execution, file: SessionFile): Promise<void> {
    await this.#deps.recorder.record({
      kind: "agent.spawned",
      taskId: a.task.id,
      session: a.session,
      adapter: a.cli.adapter.name,
      model: a.choice.model ?? null,
      provider: providerOf(a.cli.adapter.name, a.endpoint),
      attempt: a.attempt,
      pid: execution.pid,
      argv0: execution.argv0,
      promptChannel: execution.promptChannel,
      attachmentDigests: file.attachment_digests,
      notes: this.#deps.ctx.policy && !enforces(a.cli.adapter)
        ? [...execution.notes, unenforcedNote(a.cli.adapter.name)]
        : execution.notes,
      worker: execution.host,
      isolation: execution.isolation ?? REMOTE_ISOLATION,
    });
  }
}

/** Failures that stop the run instead of failing one spawn: storage, a damaged CAS blob. */
function stopsTheRun(error: unknown): boolean {
  return isStorageFailure(error) || isCasDamage(error);
}
