/**
 * The executor: runs one claimed task's agent to its exit. It prepares the workspace (a git
 * worktree on the agent's own branch at the base commit, a private HOME with the `bernstein`
 * shim), starts the adapter's command line through the spawn path, and watches the process
 * (time of last output, last text, deadline, fatal events) until it exits. It touches no task
 * store, audit chain or ledger: the caller claims before and records after. The run loop uses
 * it on this host and `bernstein worker` on another, so both run agents the same way; tests
 * replace it with a fake that needs no process.
 */
import type {
  AdapterSettings,
  AgentResult,
  EndpointProfile,
  PromptMedia,
  ResolvedCli,
  ToolPolicyHook,
} from "../adapters/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import type { Clock } from "../io/mod.ts";
import type { ExternalSigner } from "../lineage/store/mod.ts";
import { type AgentProcess, startAgent, type StartAgentOptions } from "./agent_session.ts";

/** How an agent process ended, as its adapter's parser read it. */
export interface AgentExit {
  /** The parsed result (ok, summary, usage, error). */
  result: AgentResult;
  /** The deadline killed it. */
  timedOut: boolean;
  /** The signal that ended it, if any. */
  signal: string | null;
  /**
   * Why the agent's work never reached this host (a worker could not push its branch): the
   * attempt fails even when the agent itself reported success.
   */
  workLost?: string;
}

/** One agent to run: everything the orchestrator decided about it. */
export interface ExecutionRequest {
  /** Session id: names the worktree, branch `agent/<session>`, HOME, log and token. */
  session: string;
  /** The claimed task. */
  taskId: string;
  /** Its title (commit messages where the agent ran elsewhere). */
  title: string;
  /** Lineage identity of the agent (`<adapter>:<session>`). */
  agentId: string;
  /** The adapter and its executable on this host. */
  cli: ResolvedCli;
  /** Model or tier, when chosen. */
  model?: string;
  /** Reasoning effort, when chosen. */
  effort?: "low" | "medium" | "high" | "max";
  /** Turn limit (null: none). */
  max_turns: number | null;
  /** Endpoint profile of the task's role. */
  endpoint?: EndpointProfile;
  /** `adapters.<name>` settings. */
  settings?: AdapterSettings;
  /** The full prompt. */
  prompt: string;
  /** Attachment bytes for the CLI's own channel (images as content blocks or `@path` copies). */
  media?: readonly PromptMedia[];
  /** Variables the agent gets besides its adapter's allowlist (server URL, task id). */
  env: Record<string, string>;
  /**
   * Connection secrets minted for this agent only (docs/FLEET.md): added to its environment,
   * never recorded; a worker host never gets them (the pool runs such an agent here).
   */
  secretEnv?: Readonly<Record<string, string>>;
  /** The session's task-server token (reaches the agent as a file in its private HOME). */
  token?: string;
  /** Wall-clock deadline (ms). */
  deadlineMs: number;
  /** Grace between SIGTERM and SIGKILL (ms). */
  killGraceMs: number;
  /** The orchestrator runs as root. */
  isRoot: boolean;
  /** The commit the worktree starts from. */
  baseSha: string;
  /** Bernstein's pre-tool hook for the agent's CLI (absent: no tool-call policy). */
  toolPolicy?: ToolPolicyHook;
}

/** A running agent, as the loop (or a worker) watches it. */
export interface Execution {
  /** Session id. */
  readonly session: string;
  /** Worktree path. */
  readonly worktree: string;
  /** Branch `agent/<session>`. */
  readonly branch: string;
  /** Commit the worktree started from. */
  readonly baseSha: string;
  /** Process id (process group). */
  readonly pid: number;
  /** The session's output log. */
  readonly logPath: string;
  /** First word of the command line that ran (after the spawn path). */
  readonly argv0: string;
  /** How the prompt reached the CLI. */
  readonly promptChannel: string;
  /** What the adapter could not honour or chose (root permission mode, ignored effort). */
  readonly notes: readonly string[];
  /**
   * How the agent is isolated (`{isolation: "none"}` or the sandbox's record); absent when it
   * runs on another host, whose own executor decides and records it.
   */
  readonly isolation?: JsonObject;
  /** Monotonic time (ms) of the last output, for liveness. */
  lastOutputMs(): number;
  /** Last progress text seen. */
  lastText(): string;
  /** Stops the agent's process group: SIGTERM, then SIGKILL after `graceMs`. */
  terminate(graceMs: number): Promise<void>;
  /** Resolves when the agent exited. */
  readonly exit: Promise<AgentExit>;
  /**
   * The worker host it runs on; undefined: this host. A claim held elsewhere stays alive only
   * by that host's heartbeats.
   */
  readonly host?: string;
  /** Signs the lineage of its merged files where the agent's key lives (a worker host). */
  readonly lineageSigner?: ExternalSigner;
  /**
   * The run ended the session (merged, failed, released or abandoned): nothing more will be
   * asked of where it ran. A worker host told to drain leaves only after this, since the merge
   * of a finished agent's work asks that host to sign its lineage.
   */
  release?(): void;
}

/** Starts agents. */
export interface Executor {
  /** Prepares the workspace and starts the agent; throws when it cannot start. */
  start(request: ExecutionRequest): Promise<Execution>;
  /**
   * Agents it could run at once right now, the running ones included (workers join, leave,
   * are cordoned). Undefined: as many as the run allows (`max_agents`).
   */
  slots?(): number;
  /** Calls `listener` when `slots()` may have changed; returns the unsubscriber. */
  onChange?(listener: () => void): () => void;
}

/** Where a process executor works: `startAgent`'s options, with a clock for liveness times. */
export interface ProcessExecutorOptions extends Omit<StartAgentOptions, "now" | "onEvent"> {
  /** Clock (liveness timestamps). */
  clock: Clock;
}

/** The executor that runs real agent processes in git worktrees of `options.root`. */
export function processExecutor(options: ProcessExecutorOptions): Executor {
  return {
    async start(request: ExecutionRequest): Promise<Execution> {
      const agent = await startAgent({
        session: request.session,
        taskId: request.taskId,
        adapter: request.cli.adapter,
        executable: request.cli.executable,
        model: request.model,
        effort: request.effort,
        max_turns: request.max_turns,
        endpoint: request.endpoint,
        prompt: request.prompt,
        ...(request.media !== undefined ? { media: request.media } : {}),
        extraEnv: { ...request.env, ...request.secretEnv },
        ...(Object.keys(request.secretEnv ?? {}).length > 0 ? { scrubHome: true } : {}),
        token: request.token,
        deadlineMs: request.deadlineMs,
        killGraceMs: request.killGraceMs,
        isRoot: request.isRoot,
        settings: request.settings,
        baseSha: request.baseSha,
        ...(request.toolPolicy !== undefined ? { toolPolicy: request.toolPolicy } : {}),
      }, { ...options, now: () => options.clock.monotonicMs() });
      return executionOf(request.session, agent);
    },
  };
}

function executionOf(session: string, agent: AgentProcess): Execution {
  return {
    session,
    worktree: agent.worktree,
    branch: agent.branch,
    baseSha: agent.baseSha,
    pid: agent.handle.pid,
    logPath: agent.logPath,
    argv0: agent.invocation.argv[0],
    promptChannel: agent.invocation.prompt_channel,
    notes: agent.invocation.notes,
    isolation: agent.isolation,
    lastOutputMs: () => agent.lastOutputMs,
    lastText: () => agent.lastText,
    terminate: (graceMs) => agent.handle.terminate(graceMs),
    exit: agent.result,
  };
}
