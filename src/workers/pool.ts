/**
 * The worker pool: the orchestrator's side of `bernstein worker`. It is an `Executor`, so the
 * run loop dispatches to it exactly as to local processes: `start` picks a ready worker with a
 * free slot and the task's adapter (or this host, within its own slots), publishes the base
 * commit to the git remote, queues the assignment, and resolves once the worker reports the
 * agent started. It keeps each worker's state from its requests: registration, heartbeats
 * (agent liveness, claim leases in the task store), long polls (assignments, lineage sign
 * requests), results (branch fetched, checked out for completion, card published). A worker
 * silent for `stale_claim_timeout_s` is lost; its claims expire in the store and its tasks
 * run again elsewhere. Everything a worker reports is recorded in the one audit chain under
 * `worker:<name>`.
 */
import type { AuditSink } from "../audit/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import { fromBase64, toBase64 } from "../canonical/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import { type Clock, sessionLayout } from "../io/mod.ts";
import { type AgentCard, parseAgentCard, renderAgentCard } from "../lineage/mod.ts";
import { type ExternalSigner, lineagePaths, publishAgentCard } from "../lineage/store/mod.ts";
import type { AgentExit, Execution, ExecutionRequest, Executor, Git } from "../orchestrator/mod.ts";
import { HttpError } from "../server/mod.ts";
import type { TaskStore } from "../tasks/mod.ts";
import type { GitRemote } from "./git_remote.ts";
import type {
  Assignment,
  HeartbeatBody,
  HeartbeatReply,
  PollBody,
  PollReply,
  RegisterBody,
  RegisterReply,
  ResultBody,
  SignatureBody,
  SignRequest,
  StartedBody,
  WorkerView,
} from "./protocol.ts";
import { encodeAssignmentMedia } from "./assignment_media.ts";
import { RemoteExecution } from "./remote_execution.ts";

/** What the pool works with. */
export interface WorkerPoolOptions {
  /** Run id. */
  runId: string;
  /** `.sdd/` (worktrees for checking remote work, agent cards). */
  sdd: string;
  /** Git of the project root. */
  git: Git;
  /** The remote workers fetch from and push to. */
  remote: GitRemote;
  /** Task store (claim leases). */
  store: TaskStore;
  /** Audit chain. */
  audit: AuditSink;
  /** Clock. */
  clock: Clock;
  /** This host's executor, for `localSlots` agents (0: workers only). */
  local?: Executor;
  /** Agents this host runs itself. */
  localSlots: number;
  /** Task server URL the agents on workers use (`BERNSTEIN_SERVER_URL`). */
  agentServerUrl: string;
  /** `tuning.agent.heartbeat_interval_s`. */
  heartbeatIntervalS: number;
  /** A worker silent this long is lost (`tuning.orchestrator.stale_claim_timeout_s`). */
  lostAfterS: number;
  /** Longest a poll is held open. */
  pollWaitS: number;
  /** Longest wait for a worker to start an assigned agent. */
  startTimeoutS: number;
  /** Longest wait for a worker to sign a lineage entry. */
  signTimeoutS: number;
}

interface PendingStart {
  assignment: Assignment;
  resolve: (execution: Execution) => void;
  reject: (error: Error) => void;
}

interface PendingSign {
  worker: string;
  resolve: (jws: string) => void;
  reject: (error: Error) => void;
}

interface WorkerRecord {
  name: string;
  host: string;
  address: string;
  capacity: number;
  adapters: { name: string; version: string | null }[];
  lastSeenMs: number;
  cordoned: boolean;
  draining: boolean;
  lost: boolean;
  queue: PendingStart[];
  starting: Map<string, PendingStart>;
  held: Map<string, RemoteExecution & { taskId: string; agentId: string }>;
  stops: Set<string>;
  /**
   * Sessions whose result is in but whose session the run has not ended: their merge may still
   * ask this worker to sign lineage entries, so a draining worker is not let go before them.
   */
  settling: Set<string>;
  signs: SignRequest[];
  wake?: () => void;
  finished: number;
  /** Slots taken by starts still publishing their base commit. */
  reserved: number;
}

/** Workers of one run, and the executor that dispatches to them. */
export class WorkerPool implements Executor {
  readonly #o: WorkerPoolOptions;
  readonly #workers = new Map<string, WorkerRecord>();
  readonly #signs = new Map<string, PendingSign>();
  readonly #listeners = new Set<() => void>();
  readonly #refusals = new Map<string, { lastMs: number; suppressed: number }>();
  #localRunning = 0;
  #signSeq = 0;

  constructor(options: WorkerPoolOptions) {
    this.#o = options;
  }

  /** Agents that can run at once now: this host's slots, ready workers, and work held elsewhere. */
  slots(): number {
    this.#sweep();
    let slots = this.#o.localSlots;
    for (const w of this.#workers.values()) {
      slots += this.#usable(w) ? w.capacity : w.held.size + w.starting.size;
    }
    return slots;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Runs the agent on a ready worker with a free slot, else on this host within its slots. */
  async start(request: ExecutionRequest): Promise<Execution> {
    this.#sweep();
    if (Object.keys(request.secretEnv ?? {}).length > 0) {
      return await this.#startWithSecrets(request);
    }
    const worker = this.#choose(request.cli.adapter.name);
    if (worker === undefined) {
      if (this.#o.local !== undefined && this.#localRunning < this.#o.localSlots) {
        return await this.#startLocal(this.#o.local, request);
      }
      throw new BernsteinError(
        "workers.no_slot",
        `no worker has a free slot and the adapter '${request.cli.adapter.name}'`,
      );
    }
    // The slot is taken now, before any await: spawns started together must not all pick it.
    worker.reserved++;
    try {
      await this.#o.remote.publish(request.baseSha);
    } finally {
      worker.reserved--;
    }
    return await this.#assign(worker, request);
  }

  async #startLocal(local: Executor, request: ExecutionRequest): Promise<Execution> {
    this.#localRunning++;
    try {
      const execution = await local.start(request);
      void execution.exit.finally(() => {
        this.#localRunning--;
        this.#changed();
      });
      return execution;
    } catch (error) {
      this.#localRunning--;
      throw error;
    }
  }

  /** Ready worker with the adapter and the most free slots (ties: by name). */
  #choose(adapter: string): WorkerRecord | undefined {
    let best: WorkerRecord | undefined;
    let bestFree = 0;
    for (const w of [...this.#workers.values()].sort((a, b) => a.name < b.name ? -1 : 1)) {
      if (!this.#usable(w) || !w.adapters.some((a) => a.name === adapter)) continue;
      const free = w.capacity - w.held.size - w.starting.size - w.queue.length - w.reserved;
      if (free > bestFree) {
        best = w;
        bestFree = free;
      }
    }
    return best;
  }

  #usable(w: WorkerRecord): boolean {
    return !w.lost && !w.cordoned && !w.draining;
  }

  /** Queues the assignment; resolves when the worker reports the agent started. */
  #assign(w: WorkerRecord, request: ExecutionRequest): Promise<Execution> {
    const assignment = this.#assignmentOf(request);
    return new Promise<Execution>((resolve, reject) => {
      const abort = new AbortController();
      const pending: PendingStart = {
        assignment,
        resolve: (e) => {
          abort.abort();
          resolve(e);
        },
        reject: (e) => {
          abort.abort();
          reject(e);
        },
      };
      w.queue.push(pending);
      this.#wake(w);
      void this.#o.clock.sleep(this.#o.startTimeoutS * 1000, abort.signal).then(() => {
        if (abort.signal.aborted) return;
        this.#dropPending(w, assignment.session);
        pending.reject(
          new BernsteinError(
            "workers.start_timeout",
            `worker ${w.name} did not start the agent of ${assignment.session} within ${this.#o.startTimeoutS}s`,
          ),
        );
      });
    });
  }

  #dropPending(w: WorkerRecord, session: string): void {
    w.queue = w.queue.filter((p) => p.assignment.session !== session);
    w.starting.delete(session);
  }

  /**
   * Connection secrets are minted on this host and never sent over the workers' link: an
   * agent that gets them runs here, or not at all.
   */
  async #startWithSecrets(request: ExecutionRequest): Promise<Execution> {
    if (this.#o.local === undefined || this.#o.localSlots === 0) {
      throw new BernsteinError(
        "fleet.conn_remote",
        `task ${request.taskId} asks for connections, which are minted on the orchestrator's host only, and this run has no local agents (workers.local_agents: 0)`,
        { hint: "set workers.local_agents to at least 1 for steps with connections" },
      );
    }
    if (this.#localRunning >= this.#o.localSlots) {
      throw new BernsteinError(
        "workers.no_slot",
        `task ${request.taskId} asks for connections and must run on this host, whose ${this.#o.localSlots} local slot(s) are busy`,
      );
    }
    return await this.#startLocal(this.#o.local, request);
  }

  #assignmentOf(request: ExecutionRequest): Assignment {
    return {
      session: request.session,
      task_id: request.taskId,
      title: request.title,
      agent_id: request.agentId,
      adapter: request.cli.adapter.name,
      model: request.model ?? null,
      effort: request.effort ?? null,
      max_turns: request.max_turns,
      endpoint: request.endpoint ?? null,
      settings: request.settings ?? null,
      prompt: request.prompt,
      ...(request.media?.length ? { media: encodeAssignmentMedia(request.media) } : {}),
      env: { ...request.env, BERNSTEIN_SERVER_URL: this.#o.agentServerUrl },
      deadline_ms: request.deadlineMs,
      kill_grace_ms: request.killGraceMs,
      base_sha: request.baseSha,
      tool_policy: request.toolPolicy ? { deadline_s: request.toolPolicy.deadline_s } : null,
      ...(request.token !== undefined ? { token: request.token } : {}),
    };
  }

  // ── requests from workers ────────────────────────────────────────────────────────────

  /** A worker (re)registers: a fresh record; sessions of an earlier record are not its own. */
  async register(body: RegisterBody, address: string): Promise<RegisterReply> {
    const old = this.#workers.get(body.name);
    if (old !== undefined) await this.#forget(old, `worker ${body.name} registered again`);
    this.#workers.set(body.name, {
      name: body.name,
      host: body.host,
      address,
      capacity: body.capacity,
      adapters: body.adapters,
      lastSeenMs: this.#o.clock.monotonicMs(),
      cordoned: false,
      draining: false,
      lost: false,
      queue: [],
      starting: new Map(),
      held: new Map(),
      stops: new Set(),
      settling: new Set(),
      signs: [],
      finished: 0,
      reserved: 0,
    });
    await this.#audit(body.name, "worker.registered", {
      host: body.host,
      address,
      capacity: body.capacity,
      adapters: body.adapters.map((a) => `${a.name}@${a.version ?? "?"}`),
      version: body.version,
    });
    this.#changed();
    return {
      worker: body.name,
      run_id: this.#o.runId,
      heartbeat_interval_s: this.#o.heartbeatIntervalS,
      poll_wait_s: this.#o.pollWaitS,
      git_path: "/git/remote.git",
    };
  }

  /** Agent liveness and claim leases; the sessions the worker must stop. */
  async heartbeat(name: string, body: HeartbeatBody): Promise<HeartbeatReply> {
    const w = this.#registered(name);
    const stop = new Set(w.stops);
    for (const s of body.sessions) {
      const execution = w.held.get(s.session);
      if (execution === undefined) {
        if (!w.starting.has(s.session)) stop.add(s.session);
        continue;
      }
      execution.observe(s.output_age_ms, s.last_text);
      try {
        await this.#o.store.heartbeat(execution.taskId, { agent: s.session });
      } catch {
        stop.add(s.session); // the claim is gone: the agent must stop
      }
    }
    return { stop: [...stop], cordoned: w.cordoned, draining: w.draining };
  }

  /** Assignments and sign requests, held open up to `wait_ms` while there are none. */
  async poll(name: string, body: PollBody, signal: AbortSignal): Promise<PollReply> {
    let w = this.#registered(name);
    const reply = this.#take(w, body.free);
    if (reply !== undefined) return reply;
    const waitMs = Math.min(body.wait_ms, this.#o.pollWaitS * 1000);
    const abort = new AbortController();
    const onAbort = () => abort.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    await Promise.race([
      new Promise<void>((resolve) => (w.wake = resolve)),
      this.#o.clock.sleep(waitMs, abort.signal),
    ]);
    abort.abort();
    signal.removeEventListener("abort", onAbort);
    w.wake = undefined;
    if (signal.aborted) return { assignments: [], sign_requests: [], exit: false };
    w = this.#registered(name);
    return this.#take(w, body.free) ?? { assignments: [], sign_requests: [], exit: false };
  }

  #take(w: WorkerRecord, free: number): PollReply | undefined {
    if (w.draining && this.#idle(w)) return { assignments: [], sign_requests: [], exit: true };
    const taken = w.queue.splice(0, free);
    for (const p of taken) w.starting.set(p.assignment.session, p);
    const signs = w.signs.splice(0);
    if (taken.length === 0 && signs.length === 0) return undefined;
    return { assignments: taken.map((p) => p.assignment), sign_requests: signs, exit: false };
  }

  /** The worker started the agent of `session`. */
  async started(name: string, session: string, body: StartedBody): Promise<void> {
    const w = this.#registered(name);
    const pending = w.starting.get(session);
    if (pending === undefined) throw notHeld(name, session);
    w.starting.delete(session);
    const a = pending.assignment;
    const execution = Object.assign(
      new RemoteExecution({
        session,
        worker: name,
        worktree: sessionLayout(this.#o.sdd, session).worktree,
        baseSha: a.base_sha,
        started: body,
        clock: this.#o.clock,
        requestStop: () => this.#requestStop(name, session),
        release: () => this.#release(name, session),
        stopTimeoutMs: 2 * this.#o.heartbeatIntervalS * 1000,
      }),
      { taskId: a.task_id, agentId: a.agent_id },
    );
    w.held.set(session, execution);
    await this.#audit(name, "worker.agent_started", {
      session,
      task_id: a.task_id,
      pid: body.pid,
      argv0: body.argv0,
    });
    pending.resolve(execution);
  }

  /** The worker could not start the agent of `session`. */
  async startFailed(name: string, session: string, reason: string): Promise<void> {
    const w = this.#registered(name);
    const pending = w.starting.get(session);
    if (pending === undefined) throw notHeld(name, session);
    w.starting.delete(session);
    await this.#audit(name, "worker.start_failed", { session, reason });
    pending.reject(
      new BernsteinError("workers.start_failed", `worker ${name} could not start it: ${reason}`),
    );
  }

  /** The agent of `session` ended; its branch was pushed. A session not held is refused. */
  async result(name: string, session: string, body: ResultBody): Promise<void> {
    const w = this.#workers.get(name);
    const execution = w?.held.get(session);
    if (w === undefined || w.lost || execution === undefined) {
      await this.#audit(name, "worker.result_refused", {
        session,
        reason: "the worker does not hold this session (released, expired or never given)",
        head: body.head,
      });
      throw notHeld(name, session);
    }
    this.#touch(w);
    try {
      const signer = await this.#accept(w, execution, body);
      w.held.delete(session);
      w.stops.delete(session);
      w.settling.add(session);
      w.finished++;
      await this.#audit(name, "worker.result", {
        session,
        task_id: execution.taskId,
        ok: body.exit.ok,
        head: body.head,
        kid: body.card.kid,
      });
      execution.finish(exitOf(body), signer);
    } catch (error) {
      w.held.delete(session);
      execution.lostWork(
        `the result of worker ${name} was not usable: ${(error as Error).message}`,
      );
      throw error;
    } finally {
      this.#changed();
    }
  }

  /** Branch into the project, a worktree to check it in, the agent's card published. */
  async #accept(
    w: WorkerRecord,
    execution: RemoteExecution & { agentId: string },
    body: ResultBody,
  ): Promise<ExternalSigner> {
    const card: AgentCard = body.card;
    if (card.agent_id !== execution.agentId) {
      throw new HttpError(
        400,
        "server.invalid_body",
        `the card is for ${card.agent_id}, the agent was ${execution.agentId}`,
        { location: "card.agent_id" },
      );
    }
    const parsed = parseAgentCard(renderAgentCard(card), `card of ${card.agent_id}`);
    const branch = execution.branch;
    if (body.head !== null) await this.#o.remote.collect(execution.session, body.head);
    else await this.#o.git.run(["branch", branch, execution.baseSha]);
    await this.#o.git.checkoutWorktree(execution.worktree, branch);
    await publishAgentCard(lineagePaths(this.#o.sdd), card);
    return {
      kid: card.kid,
      publicKey: parsed.publicKey,
      sign: (bytes) => this.#requestSignature(w.name, execution.session, card, bytes),
    };
  }

  /** Asks the worker holding the agent's key to sign one lineage entry. */
  #requestSignature(
    worker: string,
    session: string,
    card: AgentCard,
    entry: Uint8Array,
  ): Promise<string> {
    const w = this.#workers.get(worker);
    if (w === undefined || w.lost) {
      return Promise.reject(
        new Error(`worker ${worker} is gone; it holds the key of ${card.agent_id}`),
      );
    }
    const id = `sig-${++this.#signSeq}`;
    return new Promise<string>((resolve, reject) => {
      const abort = new AbortController();
      this.#signs.set(id, {
        worker,
        resolve: (jws) => {
          abort.abort();
          resolve(jws);
        },
        reject: (e) => {
          abort.abort();
          reject(e);
        },
      });
      w.signs.push({
        id,
        session,
        agent_id: card.agent_id,
        kid: card.kid,
        entry_b64: toBase64(entry),
      });
      this.#wake(w);
      void this.#o.clock.sleep(this.#o.signTimeoutS * 1000, abort.signal).then(() => {
        if (abort.signal.aborted) return;
        this.#signs.get(id)?.reject(
          new Error(`worker ${worker} did not sign within ${this.#o.signTimeoutS}s`),
        );
        this.#signs.delete(id);
      });
    });
  }

  /** A signature (or a refusal) for a sign request. */
  signature(name: string, body: SignatureBody): void {
    this.#registered(name);
    const pending = this.#signs.get(body.id);
    if (pending === undefined || pending.worker !== name) {
      throw new HttpError(409, "workers.unknown_request", `no sign request ${body.id} for ${name}`);
    }
    this.#signs.delete(body.id);
    if ("jws" in body) pending.resolve(body.jws);
    else pending.reject(new Error(`worker ${name} refused to sign: ${body.error}`));
  }

  // ── operator ─────────────────────────────────────────────────────────────────────────

  /** Every worker of the run. */
  list(): WorkerView[] {
    this.#sweep();
    return [...this.#workers.values()].sort((a, b) => a.name < b.name ? -1 : 1).map((w) => ({
      name: w.name,
      host: w.host,
      address: w.address,
      capacity: w.capacity,
      running: w.held.size + w.starting.size,
      adapters: w.adapters,
      state: w.lost ? "lost" : w.draining ? "draining" : w.cordoned ? "cordoned" : "ready",
      last_seen: new Date(
        this.#o.clock.nowMs() - (this.#o.clock.monotonicMs() - w.lastSeenMs),
      ).toISOString(),
      finished: w.finished,
    }));
  }

  /** No new work for `name` (`cordon`), or none and leave when idle (`drain`); or undo. */
  async setState(name: string, change: "cordon" | "uncordon" | "drain"): Promise<WorkerView> {
    const w = this.#workers.get(name);
    if (w === undefined) {
      throw new HttpError(404, "workers.not_found", `no worker named '${name}' in this run`);
    }
    if (change === "cordon") w.cordoned = true;
    if (change === "uncordon") w.cordoned = w.draining = false;
    if (change === "drain") w.draining = true;
    await this.#audit("operator", `worker.${change}`, { worker: name }, "operator");
    this.#wake(w);
    this.#changed();
    return this.list().find((v) => v.name === name) as WorkerView;
  }

  /** `refs/heads/agent/<session>` of every session `name` holds: what it may push. */
  pushRefs(name: string): string[] {
    const w = this.#workers.get(name);
    if (w === undefined || w.lost) return [];
    return [...w.held.keys()].map((session) => `refs/heads/agent/${session}`);
  }

  /** A request without a valid worker token (recorded, at most once a minute per address). */
  async refused(address: string, reason: string): Promise<void> {
    const now = this.#o.clock.monotonicMs();
    const seen = this.#refusals.get(address);
    if (seen !== undefined && now - seen.lastMs < 60_000) {
      seen.suppressed++;
      return;
    }
    this.#refusals.set(address, { lastMs: now, suppressed: 0 });
    await this.#o.audit.append({
      actor: `address:${address}`,
      event_type: "worker.auth_refused",
      resource_type: "worker",
      resource_id: address,
      details: { reason, suppressed_since_last: seen?.suppressed ?? 0 },
    });
  }

  /** Stops waiting on workers: pending starts fail, polls return. */
  async close(): Promise<void> {
    for (const w of this.#workers.values()) await this.#forget(w, "the run ended");
  }

  // ── bookkeeping ──────────────────────────────────────────────────────────────────────

  #registered(name: string): WorkerRecord {
    const w = this.#workers.get(name);
    if (w === undefined || w.lost) {
      throw new HttpError(
        409,
        "workers.not_registered",
        `worker '${name}' is not registered in run ${this.#o.runId}; register again`,
      );
    }
    this.#touch(w);
    return w;
  }

  #touch(w: WorkerRecord): void {
    w.lastSeenMs = this.#o.clock.monotonicMs();
  }

  /** Marks workers silent for `lostAfterS` lost: no new work; their claims expire in the store. */
  #sweep(): void {
    const now = this.#o.clock.monotonicMs();
    for (const w of this.#workers.values()) {
      if (w.lost || now - w.lastSeenMs <= this.#o.lostAfterS * 1000) continue;
      void this.#audit(w.name, "worker.lost", {
        silent_s: Math.round((now - w.lastSeenMs) / 1000),
        sessions: [...w.held.keys()],
      }, "orchestrator");
      // Everything it had is handed back at once: its tasks run again elsewhere.
      void this.#forget(w, `worker ${w.name} was lost (silent for ${this.#o.lostAfterS}s)`);
      this.#changed();
    }
  }

  /**
   * A record replaced (the worker registered again) or dropped: nothing it held or queued goes
   * on. Claims its sessions still hold are released first, so their tasks run again elsewhere
   * instead of failing (the worker forgot them; that is no verdict on the work).
   */
  async #forget(w: WorkerRecord, reason: string): Promise<void> {
    w.lost = true;
    this.#failPending(w, reason);
    const held = [...w.held.values()];
    w.held.clear();
    w.wake?.();
    for (const execution of held) {
      await this.#releaseClaim(execution.taskId, execution.session, reason);
      execution.lostWork(reason);
    }
  }

  async #releaseClaim(taskId: string, session: string, reason: string): Promise<void> {
    const task = await this.#o.store.get(taskId).catch(() => undefined);
    if (task?.assigned_agent !== session) return;
    if (task.status !== "claimed" && task.status !== "in_progress") return;
    await this.#o.store.transition(taskId, "open", {
      actor: "orchestrator",
      reason: `claim of ${session} released: ${reason}`,
      expectedVersion: task.version,
    }).catch(() => {});
  }

  #failPending(w: WorkerRecord, reason: string): void {
    for (const p of [...w.queue, ...w.starting.values()]) {
      p.reject(new BernsteinError("workers.lost", reason));
    }
    w.queue = [];
    w.starting.clear();
    for (const [id, sign] of this.#signs) {
      if (sign.worker !== w.name) continue;
      sign.reject(new Error(reason));
      this.#signs.delete(id);
    }
    w.signs = [];
  }

  /** The loop asked to stop `session`: tell the worker, or end it now if the worker is gone. */
  #requestStop(worker: string, session: string): void {
    const w = this.#workers.get(worker);
    const execution = w?.held.get(session);
    if (w === undefined || execution === undefined) return;
    if (w.lost) {
      w.held.delete(session);
      execution.lostWork(`worker ${worker} is lost`);
      return;
    }
    w.stops.add(session);
  }

  /**
   * Nothing of this worker's is under way or may still be asked of it: no agent queued,
   * starting or running, no finished session whose merge may want a signature, no signature
   * asked and not yet answered.
   */
  #idle(w: WorkerRecord): boolean {
    return w.held.size + w.starting.size + w.queue.length + w.settling.size +
            w.signs.length === 0 &&
      ![...this.#signs.values()].some((p) => p.worker === w.name);
  }

  /** The run is done with a session of `worker`: a draining worker may go once idle. */
  #release(worker: string, session: string): void {
    const w = this.#workers.get(worker);
    if (w === undefined || !w.settling.delete(session)) return;
    this.#wake(w);
  }

  #wake(w: WorkerRecord): void {
    const wake = w.wake;
    w.wake = undefined;
    wake?.();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }

  async #audit(
    worker: string,
    eventType: string,
    details: JsonObject,
    actor = `worker:${worker}`,
  ): Promise<void> {
    await this.#o.audit.append({
      actor,
      event_type: eventType,
      resource_type: "worker",
      resource_id: worker,
      details: { run_id: this.#o.runId, ...details },
    });
  }
}

function notHeld(worker: string, session: string): HttpError {
  return new HttpError(
    409,
    "workers.session_not_held",
    `worker ${worker} does not hold session ${session} (released, expired or never given)`,
  );
}

/** The agent's exit as the worker reported it; work that was not pushed is a failed attempt. */
function exitOf(body: ResultBody): AgentExit {
  const e = body.exit;
  const unpushed = body.head === null && e.ok;
  return {
    result: {
      ok: e.ok && !unpushed,
      summary: e.summary,
      turns: e.turns,
      tokens: e.tokens,
      cost_usd: e.cost_usd,
      error: unpushed
        ? `the worker could not push the agent's branch: ${body.push_error ?? "no reason given"}`
        : e.error,
      subtype: e.subtype,
      session_id: e.session_id,
      exit_code: e.exit_code,
    },
    timedOut: e.timed_out,
    signal: e.signal,
    ...(unpushed
      ? {
        workLost: `the worker could not push the agent's branch: ${
          body.push_error ?? "no reason given"
        }`,
      }
      : {}),
  };
}

/** Bytes of a sign request's entry. */
export function signRequestEntry(request: SignRequest): Uint8Array {
  return fromBase64(request.entry_b64);
}
