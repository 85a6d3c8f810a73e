/**
 * `bernstein worker`: runs agents for an orchestrator on another host. It registers (name,
 * capacity, the adapters it has with their versions), heartbeats the liveness of its agents,
 * and long-polls for assignments. Each assignment runs with the same executor as a local run
 * (worktree at the base commit fetched from the orchestrator's git remote, private HOME, the
 * adapter's command line, deadline); then the worktree is committed under the agent's identity,
 * `agent/<session>` is pushed, and the result goes back with the agent's card. The agent's
 * lineage key is minted and kept here; the orchestrator asks this worker to sign the entries of
 * its merged files. Network failures are retried (a link may go down and come back); a stop
 * request, a drain or SIGTERM/SIGINT end the worker cleanly.
 */
import { join } from "node:path";
import {
  inspectAdapters,
  resolveCli,
  type ResolvedCli,
  systemPathLookup,
  type ToolPolicyHook,
} from "../adapters/mod.ts";
import { fromBase64 } from "../canonical/mod.ts";
import { signDetachedJws } from "../crypto/mod.ts";
import { BernsteinError, UsageError } from "../errors/mod.ts";
import { type Clock, type EnvReader, type Random, sddOf } from "../io/mod.ts";
import { ensureAgentSigner, lineagePaths } from "../lineage/store/mod.ts";
import { VERSION } from "../meta/mod.ts";
import {
  type AgentExit,
  type Execution,
  type Executor,
  Git,
  processExecutor,
  selfCommand,
} from "../orchestrator/mod.ts";
import { ServerRefusalError } from "../server/mod.ts";
import { decodeAssignmentMedia } from "./assignment_media.ts";
import { WorkerClient } from "./client.ts";
import {
  type Assignment,
  HeartbeatReply,
  PollReply,
  RegisterReply,
  type ResultBody,
  type SignRequest,
  WORKER_NAME,
} from "./protocol.ts";
import { z } from "zod";

/** How a worker runs. */
export interface WorkerOptions {
  /** Orchestrator URL. */
  server: string;
  /** The worker token. */
  token: string;
  /** Its name. */
  name: string;
  /** Agents at once. */
  capacity: number;
  /** Its state folder (clone of the remote, agent keys, worktrees). */
  dir: string;
  /** Environment (PATH, adapters' variables). */
  env: EnvReader;
  /** Clock. */
  clock: Clock;
  /** Randomness (agent keys). */
  random: Random;
  /** One line of log per event. */
  log: (line: string) => void;
  /** Aborted to stop the worker (signals). */
  signal: AbortSignal;
}

/** How the worker ended. */
export interface WorkerEnd {
  /** `drained`, `stopped`. */
  reason: "drained" | "stopped";
  /** Agents it ran. */
  ran: number;
}

const Ok = z.object({ ok: z.literal(true) }).passthrough();

interface Running {
  assignment: Assignment;
  execution: Execution;
}

/** One worker process. */
export class Worker {
  readonly #o: WorkerOptions;
  readonly #client: WorkerClient;
  readonly #running = new Map<string, Running>();
  readonly #work = new Set<Promise<void>>();
  /** Aborted by the caller's signal or when the worker leaves: no more polls or heartbeats. */
  readonly #stop = new AbortController();
  /** Aborted after the last report on the way out: ends every call still retrying. */
  readonly #gone = new AbortController();
  #registration: RegisterReply | undefined;
  #repo: { git: Git; executor: Executor } | undefined;
  /** `timeout` on this host, for the policy hook's line (found with the repository). */
  #timeout: string | undefined;
  #ran = 0;
  #reregistering: Promise<void> | undefined;
  /** Assignments taken whose agent has not started yet (they hold a slot too). */
  #starting = 0;
  /** One git operation at a time on the clone: a fetch must not see a half-made worktree. */
  #gitQueue: Promise<unknown> = Promise.resolve();

  constructor(options: WorkerOptions) {
    if (!WORKER_NAME.test(options.name)) {
      throw new UsageError(
        "workers.bad_name",
        `worker name '${options.name}' must be 1-63 characters of A-Z a-z 0-9 . _ -`,
        { location: "--name" },
      );
    }
    this.#o = options;
    this.#client = new WorkerClient({
      server: options.server,
      token: options.token,
      clock: options.clock,
      signal: this.#gone.signal,
      onRetry: (what, error, delay) =>
        options.log(`${what}: ${error}; retrying in ${(delay / 1000).toFixed(1)}s`),
    });
  }

  /** Registers and works until drained or stopped. */
  async run(): Promise<WorkerEnd> {
    const onStop = () => this.#stop.abort();
    if (this.#o.signal.aborted) onStop();
    this.#o.signal.addEventListener("abort", onStop, { once: true });
    let heartbeats: Promise<void> = Promise.resolve();
    let reason: WorkerEnd["reason"] = "stopped";
    try {
      await this.#register();
      await this.#prepareRepository();
      heartbeats = this.#heartbeatLoop();
      reason = await this.#pollLoop();
    } catch (error) {
      // Stopped while still registering: not an error.
      if (!this.#stop.signal.aborted) throw error;
    } finally {
      this.#stop.abort();
      this.#o.signal.removeEventListener("abort", onStop);
      await this.#shutdown();
      this.#gone.abort();
      await heartbeats.catch(() => {});
    }
    return { reason, ran: this.#ran };
  }

  // ── registration and the repository ────────────────────────────────────────────────

  async #register(): Promise<void> {
    const lookup = systemPathLookup(this.#o.env);
    const reports = await inspectAdapters({ lookup, env: this.#o.env, timeoutMs: 15_000 });
    // `generic` runs the command the orchestrator's adapters.generic names: it is checked when an
    // assignment brings that setting, so it is always offered.
    const adapters = reports.filter((r) => r.available || r.name === "generic").map((r) => ({
      name: r.name,
      version: r.version,
    }));
    this.#registration = await this.#client.post(
      "/workers/register",
      {
        name: this.#o.name,
        capacity: this.#o.capacity,
        adapters,
        host: hostName(),
        version: VERSION,
      },
      RegisterReply,
      { retryStatuses: [404, 502, 503] },
    );
    this.#o.log(
      `registered with ${this.#client.base} (run ${this.#registration.run_id}) as ${this.#o.name}: ` +
        `${this.#o.capacity} slot(s), adapters ${adapters.map((a) => a.name).join(", ") || "none"}`,
    );
  }

  /**
   * A repository to fetch bases into and make worktrees from. The worker token travels as an
   * HTTP header in the environment of its git calls, the URL on their command line: nothing in
   * the repository's config (which agents can write) says where or as whom to connect.
   */
  async #prepareRepository(): Promise<void> {
    const repo = join(this.#o.dir, "repo");
    await Deno.mkdir(repo, { recursive: true, mode: 0o700 });
    const git = new Git(repo, {
      env: this.#o.env,
      extraEnv: {
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "http.extraHeader",
        GIT_CONFIG_VALUE_0: `Authorization: Bearer ${this.#o.token}`,
      },
      timeoutMs: 600_000,
      transport: this.#client.base.startsWith("https:") ? ["https"] : ["http"],
    });
    const fresh = await Deno.stat(join(repo, ".git")).then(() => false, () => true);
    if (fresh) await git.run(["init", "--quiet"]);
    const self = selfCommand(this.#o.env);
    this.#timeout = await systemPathLookup(this.#o.env).which("timeout");
    const executor = processExecutor({
      root: repo,
      sdd: sddOf(repo),
      git,
      env: this.#o.env,
      selfCommand: self.argv,
      selfEnv: self.env,
      clock: this.#o.clock,
    });
    this.#repo = { git, executor };
  }

  /** The clone and executor (made by `#prepareRepository` before any work arrives). */
  get #ready(): { git: Git; executor: Executor } {
    if (this.#repo === undefined) {
      throw new BernsteinError("workers.not_ready", "the worker's repository is not prepared");
    }
    return this.#repo;
  }

  // ── the loops ──────────────────────────────────────────────────────────────────────

  async #heartbeatLoop(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      const intervalMs = (this.#registration?.heartbeat_interval_s ?? 10) * 1000;
      await this.#o.clock.sleep(intervalMs, this.#stop.signal);
      if (this.#stop.signal.aborted) return;
      await this.#heartbeat().catch((error) => this.#o.log(`heartbeat: ${errorText(error)}`));
    }
  }

  async #heartbeat(): Promise<void> {
    const now = this.#o.clock.monotonicMs();
    const sessions = [...this.#running.values()].map((r) => ({
      session: r.assignment.session,
      output_age_ms: Math.max(0, now - r.execution.lastOutputMs()),
      last_text: r.execution.lastText().slice(0, 400),
    }));
    const reply = await this.#call(
      `/workers/${this.#o.name}/heartbeat`,
      { sessions },
      HeartbeatReply,
      { signal: this.#stop.signal },
    );
    for (const session of reply.stop) {
      const running = this.#running.get(session);
      if (running === undefined) continue;
      this.#o.log(`${session}: the orchestrator asked to stop it`);
      void running.execution.terminate(running.assignment.kill_grace_ms);
    }
  }

  /** Polls for work until drained (exit) or stopped. */
  async #pollLoop(): Promise<WorkerEnd["reason"]> {
    while (!this.#stop.signal.aborted) {
      const free = Math.max(0, this.#o.capacity - this.#running.size - this.#starting);
      let reply: PollReply;
      try {
        const waitMs = (this.#registration?.poll_wait_s ?? 20) * 1000;
        reply = await this.#call(
          `/workers/${this.#o.name}/poll`,
          { free, wait_ms: waitMs },
          PollReply,
          {
            timeoutMs: waitMs + 15_000,
            signal: this.#stop.signal,
          },
        );
      } catch (error) {
        if (this.#stop.signal.aborted) break;
        this.#o.log(`poll: ${errorText(error)}`);
        await this.#o.clock.sleep(1000, this.#stop.signal);
        continue;
      }
      for (const request of reply.sign_requests) this.#track(this.#sign(request));
      for (const assignment of reply.assignments) this.#track(this.#runAssignment(assignment));
      if (reply.exit) return "drained";
    }
    return "stopped";
  }

  /** A call that re-registers once when the orchestrator no longer knows this worker. */
  async #call<S extends z.ZodTypeAny>(
    path: string,
    body: unknown,
    schema: S,
    options: { timeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<z.output<S>> {
    try {
      return await this.#client.post(path, body, schema, options);
    } catch (error) {
      if (!(error instanceof ServerRefusalError) || error.code !== "workers.not_registered") {
        throw error;
      }
      await this.#registerAgain();
      return await this.#client.post(path, body, schema, options);
    }
  }

  /** One re-registration however many calls found the worker unknown at once. */
  #registerAgain(): Promise<void> {
    this.#reregistering ??= (async () => {
      this.#o.log("the orchestrator no longer knows this worker; registering again");
      try {
        await this.#register();
      } finally {
        this.#reregistering = undefined;
      }
    })();
    return this.#reregistering;
  }

  #withGit<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#gitQueue.then(fn);
    this.#gitQueue = run.catch(() => {});
    return run;
  }

  #track(work: Promise<void>): void {
    const tracked = work.catch((error) => this.#o.log(`error: ${errorText(error)}`)).finally(() =>
      this.#work.delete(tracked)
    );
    this.#work.add(tracked);
  }

  // ── one assignment ─────────────────────────────────────────────────────────────────

  async #runAssignment(a: Assignment): Promise<void> {
    let execution: Execution;
    this.#starting++;
    try {
      execution = await this.#start(a);
    } catch (error) {
      this.#o.log(`${a.session}: could not start: ${errorText(error)}`);
      await this.#client.post(
        `/workers/${this.#o.name}/sessions/${a.session}/start_failed`,
        { reason: errorText(error) },
        Ok,
        { retryForMs: 60_000 },
      ).catch((e) => this.#o.log(`${a.session}: start_failed not delivered: ${errorText(e)}`));
      return;
    } finally {
      this.#starting--;
    }
    this.#running.set(a.session, { assignment: a, execution });
    this.#ran++;
    this.#o.log(`▶ ${a.task_id} (${a.session}) ${a.adapter}, pid ${execution.pid}`);
    await this.#client.post(
      `/workers/${this.#o.name}/sessions/${a.session}/started`,
      {
        pid: execution.pid,
        argv0: execution.argv0,
        prompt_channel: execution.promptChannel,
        notes: [...execution.notes],
      },
      Ok,
      { retryForMs: 60_000 },
    ).catch((error) => {
      this.#o.log(`${a.session}: start not acknowledged (${errorText(error)}); stopping it`);
      void execution.terminate(a.kill_grace_ms);
    });
    const exit = await execution.exit;
    this.#running.delete(a.session);
    await this.#report(a, execution, exit);
  }

  async #start(a: Assignment): Promise<Execution> {
    const cli = await resolveCli(a.adapter, {
      lookup: systemPathLookup(this.#o.env),
      settings: a.settings === null ? undefined : { [a.adapter]: a.settings },
      location: `assignment ${a.session}: adapter`,
    });
    // The key is minted before the agent runs: a worker that cannot keep keys takes no work.
    await ensureAgentSigner(this.#lineagePaths(), a.agent_id, { random: this.#o.random });
    return await this.#withGit(async () => {
      await this.#fetchBase(a.base_sha);
      return await this.#launch(a, cli);
    });
  }

  async #fetchBase(sha: string): Promise<void> {
    const git = this.#ready.git;
    const has = await git.run(["cat-file", "-e", `${sha}^{commit}`], { allowFailure: true });
    if (has.code === 0) return;
    await this.#guardConfig();
    await git.exclusive(() => git.run(["fetch", "--quiet", "--no-tags", this.#remoteUrl(), sha]));
  }

  /**
   * Refuses to talk to the orchestrator when the clone's config (which agents can write) says
   * anything about URLs or HTTP: an `insteadOf`, a proxy or an extra header would send the
   * worker token, or the work, somewhere else.
   */
  async #guardConfig(): Promise<void> {
    const found = await this.#ready.git.run(
      ["config", "--local", "--get-regexp", "^(url|http|remote)\\."],
      { allowFailure: true },
    );
    const keys = new TextDecoder().decode(found.stdout).trim().split("\n").filter(Boolean)
      .map((line) => line.split(" ")[0]);
    if (keys.length === 0) return;
    throw new BernsteinError(
      "workers.config_tampered",
      `the worker's clone has transport settings nobody here wrote (${keys.join(", ")}); ` +
        "refusing to fetch or push with the worker token",
      {
        hint: `inspect and remove them: git -C ${join(this.#o.dir, "repo")} config --list --local`,
      },
    );
  }

  #launch(a: Assignment, cli: ResolvedCli): Promise<Execution> {
    return this.#ready.executor.start({
      session: a.session,
      taskId: a.task_id,
      title: a.title,
      agentId: a.agent_id,
      cli,
      model: a.model ?? undefined,
      effort: a.effort ?? undefined,
      max_turns: a.max_turns,
      endpoint: a.endpoint ?? undefined,
      settings: a.settings ?? undefined,
      prompt: a.prompt,
      ...(a.media !== undefined ? { media: decodeAssignmentMedia(a) } : {}),
      env: a.env,
      ...(a.token !== undefined ? { token: a.token } : {}),
      deadlineMs: a.deadline_ms,
      killGraceMs: a.kill_grace_ms,
      isRoot: isRoot(),
      baseSha: a.base_sha,
      ...(a.tool_policy ? { toolPolicy: this.#toolPolicy(a, a.tool_policy.deadline_s) } : {}),
    });
  }

  /** The run's pre-tool hook, run by this host's bernstein against the run's task server. */
  #toolPolicy(a: Assignment, deadlineS: number): ToolPolicyHook {
    const self = selfCommand(this.#o.env);
    const server = a.env.BERNSTEIN_SERVER_URL ?? this.#client.base;
    return {
      command: [...self.argv, "policy", "hook", "--server", server],
      ...(Object.keys(self.env).length > 0 ? { env: self.env } : {}),
      deadline_s: deadlineS,
      ...(this.#timeout !== undefined ? { timeout_command: this.#timeout } : {}),
    };
  }

  /** Commit, push `agent/<session>`, report the result with the card; clean up. */
  async #report(a: Assignment, execution: Execution, exit: AgentExit): Promise<void> {
    const git = this.#ready.git;
    let pushError: string | null = null;
    const head = await this.#withGit(() => this.#publishWork(a, execution)).catch((error) => {
      pushError = errorText(error);
      this.#o.log(`${a.session}: work not pushed: ${pushError}`);
      return null;
    });
    const signer = await ensureAgentSigner(this.#lineagePaths(), a.agent_id, {
      random: this.#o.random,
    });
    const body: ResultBody = {
      exit: {
        ok: exit.result.ok,
        summary: exit.result.summary.slice(0, 100_000),
        turns: exit.result.turns,
        tokens: exit.result.tokens === null
          ? null
          : { input: exit.result.tokens.input, output: exit.result.tokens.output },
        cost_usd: exit.result.cost_usd,
        error: exit.result.error?.slice(0, 10_000) ?? null,
        subtype: exit.result.subtype,
        session_id: exit.result.session_id,
        exit_code: exit.result.exit_code,
        timed_out: exit.timedOut,
        signal: exit.signal,
      },
      head,
      push_error: pushError,
      card: { ...signer.card },
    };
    try {
      await this.#client.post(
        `/workers/${this.#o.name}/sessions/${a.session}/result`,
        body,
        Ok,
        { retryForMs: 600_000 },
      );
      this.#o.log(`${exit.result.ok ? "✓" : "✗"} ${a.task_id} (${a.session}) reported`);
    } catch (error) {
      this.#o.log(`${a.session}: result refused: ${errorText(error)}`);
    }
    await this.#withGit(async () => {
      await git.removeWorktree(execution.worktree, true).catch(() => {});
      await git.deleteBranch(execution.branch, true).catch(() => {});
    });
  }

  /** Commits the worktree and pushes its branch; the pushed head. */
  async #publishWork(a: Assignment, execution: Execution): Promise<string> {
    const git = this.#ready.git;
    await git.commitAll(
      execution.worktree,
      `${a.task_id}: ${a.title}\n\nBernstein-Session: ${a.session}`,
      { name: a.agent_id, email: `${a.session}@agents.bernstein.invalid` },
    );
    const branch = execution.branch;
    await this.#guardConfig();
    await git.run([
      "push",
      "--quiet",
      this.#remoteUrl(),
      `refs/heads/${branch}:refs/heads/${branch}`,
    ]);
    return await git.revParse(`refs/heads/${branch}`);
  }

  /** Signs one lineage entry with the agent's key, which never leaves this host. */
  async #sign(request: SignRequest): Promise<void> {
    let reply: { id: string; jws: string } | { id: string; error: string };
    try {
      const signer = await ensureAgentSigner(this.#lineagePaths(), request.agent_id, {
        random: this.#o.random,
      });
      if (signer.kid !== request.kid) {
        throw new BernsteinError(
          "workers.wrong_key",
          `${request.agent_id} signs with kid ${signer.kid}, not ${request.kid}`,
        );
      }
      const entry = fromBase64(request.entry_b64);
      reply = { id: request.id, jws: signDetachedJws(signer.seed, entry, { kid: signer.kid }) };
    } catch (error) {
      reply = { id: request.id, error: errorText(error) };
    }
    await this.#client.post(`/workers/${this.#o.name}/signatures`, reply, Ok, {
      retryForMs: 60_000,
    });
  }

  /** The orchestrator's git endpoint, always given explicitly (never a configured remote). */
  #remoteUrl(): string {
    return this.#client.base + (this.#registration as RegisterReply).git_path;
  }

  #lineagePaths() {
    return lineagePaths(join(this.#o.dir, "state"));
  }

  /** Stops every agent and reports what it did (for a minute at most), then waits. */
  async #shutdown(): Promise<void> {
    const giveUp = new AbortController();
    void this.#o.clock.sleep(60_000, giveUp.signal).then(() => this.#gone.abort());
    for (const r of this.#running.values()) void r.execution.terminate(r.assignment.kill_grace_ms);
    await Promise.allSettled([...this.#work]);
    giveUp.abort();
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

function isRoot(): boolean {
  try {
    return Deno.uid() === 0;
  } catch {
    return false;
  }
}
