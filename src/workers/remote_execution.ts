/**
 * An agent running on a worker host, as the run loop sees it: an `Execution` whose liveness
 * comes from the worker's heartbeats, whose stop is a request the worker picks up, and whose
 * exit resolves when the worker's result is in (its branch fetched into the project and checked
 * out where completion checks it) — or when the worker is gone. Its lineage signer asks the
 * worker, which holds the agent's key, to sign each entry.
 */
import type { AgentResult } from "../adapters/mod.ts";
import type { Clock } from "../io/mod.ts";
import type { ExternalSigner } from "../lineage/store/mod.ts";
import type { AgentExit, Execution } from "../orchestrator/mod.ts";

/** What a remote execution starts from. */
export interface RemoteExecutionInit {
  /** Session id. */
  session: string;
  /** Worker name. */
  worker: string;
  /** Local worktree completion will check (created when the result arrives). */
  worktree: string;
  /** Commit the agent started from. */
  baseSha: string;
  /** What the worker reported at start. */
  started: { pid: number; argv0: string; prompt_channel: string; notes: string[] };
  /** Clock (liveness). */
  clock: Clock;
  /** Asks the worker to stop the agent. */
  requestStop: () => void;
  /** Longest wait for a stopped agent's result before it counts as lost. */
  stopTimeoutMs: number;
  /** The run is done with the session (its worker is asked nothing more for it). */
  release?: () => void;
}

/** An `Execution` on a worker host. */
export class RemoteExecution implements Execution {
  readonly session: string;
  readonly worktree: string;
  readonly branch: string;
  readonly baseSha: string;
  readonly pid: number;
  readonly logPath: string;
  readonly argv0: string;
  readonly promptChannel: string;
  readonly notes: readonly string[];
  readonly host: string;
  readonly exit: Promise<AgentExit>;
  #resolve: (exit: AgentExit) => void = () => {};
  #settled = false;
  #lastOutputMs: number;
  #lastText = "";
  #signer: ExternalSigner | undefined;
  readonly #init: RemoteExecutionInit;

  constructor(init: RemoteExecutionInit) {
    this.#init = init;
    this.session = init.session;
    this.host = init.worker;
    this.worktree = init.worktree;
    this.branch = `agent/${init.session}`;
    this.baseSha = init.baseSha;
    this.pid = init.started.pid;
    this.logPath = `${init.worker}:${init.session}.log`;
    this.argv0 = init.started.argv0;
    this.promptChannel = init.started.prompt_channel;
    this.notes = init.started.notes;
    this.#lastOutputMs = init.clock.monotonicMs();
    this.exit = new Promise((resolve) => (this.#resolve = resolve));
  }

  /** True once the exit is known. */
  get settled(): boolean {
    return this.#settled;
  }

  /** Signs this agent's lineage on its worker (set when the result brought the card). */
  get lineageSigner(): ExternalSigner | undefined {
    return this.#signer;
  }

  lastOutputMs(): number {
    return this.#lastOutputMs;
  }

  lastText(): string {
    return this.#lastText;
  }

  /** A heartbeat: the agent has been silent for `outputAgeMs`; its last line. */
  observe(outputAgeMs: number, lastText: string): void {
    this.#lastOutputMs = this.#init.clock.monotonicMs() - outputAgeMs;
    if (lastText !== "") this.#lastText = lastText;
  }

  /** Asks the worker to stop the agent; its result (or its silence) ends the execution. */
  async terminate(graceMs: number): Promise<void> {
    if (this.#settled) return;
    this.#init.requestStop();
    const timeout = new AbortController();
    await Promise.race([
      this.exit,
      this.#init.clock.sleep(graceMs + this.#init.stopTimeoutMs, timeout.signal),
    ]);
    timeout.abort();
    this.lost(`worker ${this.host} did not report the stopped agent`, "SIGKILL");
  }

  /** The run ended the session: its worker will be asked nothing more for it. */
  release(): void {
    this.#init.release?.();
  }

  /** The worker's result is in: its branch is local, its card published. */
  finish(exit: AgentExit, signer: ExternalSigner): void {
    if (this.#settled) return;
    this.#signer = signer;
    this.#settled = true;
    this.#resolve(exit);
  }

  /**
   * The worker never reported the stopped agent: the agent counts as killed (its task fails as
   * the stop's cause says: deadline, stall …).
   */
  lost(reason: string, signal: string | null = null): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve({ result: lostResult(reason), timedOut: false, signal });
  }

  /**
   * The agent's work never reached the project (its worker is gone, or its result was not
   * usable): the agent counts as killed and its work as lost. A task the agent reported `done`
   * itself (agents report to the run's task server directly, so an orphaned agent can) then
   * fails as an infrastructure error and retries per policy, instead of going to completion on
   * a branch that never came (the run waited on it forever).
   */
  lostWork(reason: string): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#resolve({ result: lostResult(reason), timedOut: false, signal: null, workLost: reason });
  }
}

function lostResult(reason: string): AgentResult {
  return {
    ok: false,
    summary: "",
    turns: null,
    tokens: null,
    cost_usd: null,
    error: reason,
    subtype: null,
    session_id: null,
    exit_code: 137,
  };
}
