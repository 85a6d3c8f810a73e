/**
 * One agent process in one fresh git worktree: the session's paths (worktree, branch, private
 * HOME, log), the `bernstein` shim the agent calls back through, and `startAgent`, which
 * creates the worktree, builds the adapter's command line, passes it through the spawn path
 * and starts it in its own process group with a deadline. The executor (executor.ts) wraps it.
 */
import { join } from "node:path";
import {
  type Adapter,
  type AdapterSettings,
  type AgentResult,
  type EndpointProfile,
  type Invocation,
  type ProgressEvent,
  type PromptMedia,
  type ToolPolicyHook,
  writeInvocationFiles,
} from "../adapters/mod.ts";
import type { SpawnPath } from "../attachments/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import {
  type EnvReader,
  type ProcessHandle,
  resolveInside,
  scrubSecrets,
  sddFolder,
  type SecretRedactor,
  sessionLayout,
  spawnProcess,
  writeFileAtomic,
} from "../io/mod.ts";
import { runTag } from "../ledger/mod.ts";
import { AgentOutput } from "./_agent_output.ts";
import type { Git } from "./git.ts";

/** Everything needed to start one agent on one task. */
export interface AgentLaunch {
  /** Session id: names the worktree, branch, home, log and token. */
  session: string;
  /** Task id. */
  taskId: string;
  /** The adapter and its resolved executable. */
  adapter: Adapter;
  /** Executable path. */
  executable: string;
  /** Model or tier, when chosen. */
  model?: string;
  /** Reasoning effort. */
  effort?: "low" | "medium" | "high" | "max";
  /** Turn limit (null: none, tuning.agent.max_turns: null). */
  max_turns: number | null;
  /** Endpoint profile of the role. */
  endpoint?: EndpointProfile;
  /** The full prompt. */
  prompt: string;
  /** Attachment bytes for the CLI's own channel (content blocks, or worktree copies). */
  media?: readonly PromptMedia[];
  /** Extra environment for the agent (server URL, task id, PATH with the shim). */
  extraEnv: Record<string, string>;
  /**
   * The session's task-server token: written to a file in the agent's private HOME (mode
   * 0600), named by `BERNSTEIN_TASK_TOKEN_FILE`; never in the environment.
   */
  token?: string;
  /** Wall-clock deadline in milliseconds. */
  deadlineMs: number;
  /** Grace between SIGTERM and SIGKILL. */
  killGraceMs: number;
  /** The orchestrator runs as root. */
  isRoot: boolean;
  /** `adapters.<name>` settings from the configuration. */
  settings?: AdapterSettings;
  /** The commit to start from (HEAD of the root), when the caller knows it. */
  baseSha?: string;
  /** Bernstein's pre-tool hook, wired into the CLI by its adapter. */
  toolPolicy?: ToolPolicyHook;
  /**
   * The agent got connection secrets: when it ends, every file of its private HOME that holds
   * one (its CLI's transcripts, notes) is rewritten redacted.
   */
  scrubHome?: boolean;
}

/** A live agent. */
export interface AgentProcess {
  /** Launch data. */
  launch: AgentLaunch;
  /** Worktree path. */
  worktree: string;
  /** Branch `agent/<session>`. */
  branch: string;
  /** Commit the worktree started from. */
  baseSha: string;
  /** The spawn's private HOME (outside the worktree). */
  home: string;
  /** Output log `.sdd/runtime/<session>.log`. */
  logPath: string;
  /** The process. */
  handle: ProcessHandle;
  /** What ran: the adapter's command line after the spawn path wrapped it. */
  invocation: Invocation;
  /** How the agent was isolated (the spawn path's record). */
  isolation: JsonObject;
  /** Monotonic time (ms) of the last output, for liveness. */
  lastOutputMs: number;
  /** Last progress text seen. */
  lastText: string;
  /** Resolves with the parsed result when the process ended. */
  result: Promise<{ result: AgentResult; timedOut: boolean; signal: string | null }>;
}

/**
 * Paths of a session inside a project; its worktree in `worktreesDir` (the run's
 * `workspace.worktrees_dir`, worktrees_dir.ts), by default `.sdd/worktrees`.
 */
export function sessionPaths(
  sdd: string,
  session: string,
  worktreesDir?: string,
): { worktree: string; branch: string; home: string; logPath: string } {
  const { worktree, home, logPath } = sessionLayout(sdd, session);
  return {
    worktree: worktreesDir === undefined ? worktree : join(worktreesDir, session),
    branch: `agent/${session}`,
    home,
    logPath,
  };
}

/** The run tag of a run's sessions: the run's tag (src/ledger), plus `r<n>` for the n-th resume. */
export function runTagOf(runId: string, runAttempt: number): string {
  return `${runTag(runId)}${runAttempt > 1 ? `r${runAttempt}` : ""}`;
}

/**
 * A session id from a task id, attempt and run tag (unique across runs, so a branch kept from
 * an earlier run never collides): safe for branch, folder and token names.
 */
export function sessionId(taskId: string, attempt: number, runTag: string): string {
  const safe = taskId.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^[^A-Za-z0-9]+/, "") || "task";
  return `${safe.slice(0, 96)}-a${attempt}-${runTag}`;
}

/**
 * Writes `<home>/bin/bernstein`, so an agent's `bernstein task complete …` reaches this same
 * bernstein (source checkout or compiled binary) with the agent's own environment.
 */
export async function writeBernsteinShim(
  home: string,
  command: readonly string[],
  env: Readonly<Record<string, string>> = {},
): Promise<string> {
  const bin = join(home, "bin");
  await Deno.mkdir(bin, { recursive: true, mode: 0o700 });
  const quote = (a: string) => `'${a.replaceAll("'", `'"'"'`)}'`;
  const exports = Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}\n`).join("");
  const path = join(bin, "bernstein");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\n${exports}exec ${command.map(quote).join(" ")} "$@"\n`,
    { mode: 0o700 },
  );
  await Deno.chmod(path, 0o700);
  return bin;
}

/** Where and what a spawn path wraps. */
export interface SpawnPlace {
  /** Session id. */
  session: string;
  /** The worktree (the agent's working directory). */
  worktree: string;
  /** The private HOME. */
  home: string;
  /** Adapter name (its provider hosts, when it has no endpoint). */
  adapter: string;
  /** The role's endpoint profile. */
  endpoint?: EndpointProfile;
}

/** A wrapped command line, what it isolates, and what to release when the agent ends. */
export interface WrappedInvocation {
  /** The invocation to start (same stdin: attachments travel inside the prompt unchanged). */
  invocation: Invocation;
  /** What the agent could reach: recorded in the session file and `agent.spawned`. */
  isolation: JsonObject;
  /** Called once the agent's process ended (closes its network channel). */
  release?: () => Promise<void>;
  /** The first process supervises the rest (bwrap): stop its group leader last. */
  leaderLast?: boolean;
  /** How the first process gets its own group (`ProcessOptions.group`; default `"detach"`). */
  group?: "detach" | "setsid";
}

/**
 * How an agent's command line is started: the seam a sandbox or container wraps. `wrap` gets
 * the adapter's invocation and returns the one to run (argv, env, cwd, stdin); the direct
 * subprocess returns it unchanged.
 */
export interface SpawnPathWrapper {
  /** The path's name (attachments travel on paths that wrap the same command line). */
  readonly name: SpawnPath;
  /** The invocation to start in place of the adapter's. */
  wrap(invocation: Invocation, where: SpawnPlace): Promise<WrappedInvocation>;
}

/** The agent's command line as the adapter built it, started directly (no isolation). */
export const DIRECT_SUBPROCESS: SpawnPathWrapper = {
  name: "direct-subprocess",
  wrap: (invocation) => Promise.resolve({ invocation, isolation: { isolation: "none" } }),
};

/** Where a session's task-server token is written inside its private HOME. */
export function taskTokenPath(home: string): string {
  return join(home, ".bernstein", "task.token");
}

/** Options of {@linkcode startAgent}. */
export interface StartAgentOptions {
  /** Repository root. */
  root: string;
  /** `.sdd/` folder. */
  sdd: string;
  /** Git of the root. */
  git: Git;
  /** Environment values the adapter reads by name. */
  env: EnvReader;
  /** Command that runs bernstein itself (for the agent's shim). */
  selfCommand: readonly string[];
  /** Environment the shim exports (the module cache of a source run). */
  selfEnv?: Readonly<Record<string, string>>;
  /** Monotonic clock (ms). */
  now: () => number;
  /** Called for each progress event. */
  onEvent?: (event: ProgressEvent) => void;
  /** How the command line starts (default: {@linkcode DIRECT_SUBPROCESS}). */
  spawnPath?: SpawnPathWrapper;
  /**
   * The real path of the run's worktrees folder (`prepareWorktreesDir`); absent: `.sdd/worktrees`,
   * which must stay inside the project.
   */
  worktreesDir?: string;
  /**
   * The run's redactor: the agent's output is redacted before its log, its parser and its
   * result see it (connection secrets, docs/FLEET.md).
   */
  redactor?: SecretRedactor;
}

/**
 * Creates the worktree (refusing symlink escapes), the private home and shim, writes the
 * adapter's files, and starts the agent in its own process group with a deadline. Output goes
 * to the session log and through the adapter's parser.
 */
export async function startAgent(
  launch: AgentLaunch,
  options: StartAgentOptions,
): Promise<AgentProcess> {
  const paths = sessionPaths(options.sdd, launch.session, options.worktreesDir);
  // `.sdd/worktrees` or `.sdd/runtime` planted as a symlink must not move work outside the repo
  // (a configured worktrees folder: the session's folder must not leave it).
  const worktree = await resolveInside(options.worktreesDir ?? options.root, paths.worktree);
  const home = await resolveInside(options.root, paths.home);
  const logPath = await resolveInside(options.root, paths.logPath);
  await Deno.mkdir(options.worktreesDir ?? sddFolder(options.sdd, "worktrees"), {
    recursive: true,
  });
  await Deno.mkdir(home, { recursive: true, mode: 0o700 });
  // HEAD moves only when a merge lands; the caller passes the sha it already knows.
  const baseSha = launch.baseSha ?? await options.git.revParse("HEAD");
  // Never touch a branch this session did not create: a name clash is an error, not a reuse
  // (created only if absent, in one step: nothing can take the name between a check and it).
  if (!(await options.git.createBranch(paths.branch, baseSha))) {
    throw new BernsteinError(
      "run.branch_exists",
      `branch ${paths.branch} already exists; refusing to reuse it`,
    );
  }
  try {
    await options.git.checkoutWorktree(worktree, paths.branch);
    return await launchInWorktree(launch, options, {
      worktree,
      branch: paths.branch,
      baseSha,
      home,
      logPath,
    });
  } catch (error) {
    // Nothing ran in the worktree yet: remove it and its branch so a retry starts clean.
    await options.git.discardWorktree(worktree, paths.branch);
    throw error;
  }
}

interface PreparedWorktree {
  worktree: string;
  branch: string;
  baseSha: string;
  home: string;
  logPath: string;
}

async function launchInWorktree(
  launch: AgentLaunch,
  options: StartAgentOptions,
  prepared: PreparedWorktree,
): Promise<AgentProcess> {
  const { worktree, home, logPath } = prepared;
  const wrapped = await agentInvocation(launch, options, prepared);
  const invocation = wrapped.invocation;
  const release = async () => {
    await wrapped.release?.().catch(() => {});
  };
  const agent: Partial<AgentProcess> = {
    launch,
    worktree,
    branch: prepared.branch,
    baseSha: prepared.baseSha,
    home,
    logPath,
    invocation,
    isolation: wrapped.isolation,
    lastOutputMs: options.now(),
    lastText: "",
  };
  let stopping = false;
  const parser = launch.adapter.parser();
  const output = new AgentOutput(
    await Deno.open(logPath, { create: true, append: true, mode: 0o600 }),
    parser,
    options.redactor,
    (event) => {
      if (event.text) agent.lastText = event.text.split("\n")[0].slice(0, 200);
      options.onEvent?.(event);
      // The CLI said it cannot go on but would keep waiting: stop it now, not at the deadline.
      if (event.fatal && !stopping && agent.handle !== undefined) {
        stopping = true;
        agent.handle.terminate(launch.killGraceMs);
      }
    },
  );
  let handle: ProcessHandle;
  try {
    handle = spawnProcess(invocation.argv, {
      cwd: invocation.cwd,
      env: invocation.env,
      stdin: invocation.stdin,
      timeoutMs: launch.deadlineMs,
      killGraceMs: launch.killGraceMs,
      leaderLast: wrapped.leaderLast,
      group: wrapped.group,
      onStdout: (chunk) => {
        agent.lastOutputMs = options.now();
        output.stdout(chunk);
      },
      onStderr: (chunk) => {
        agent.lastOutputMs = options.now();
        output.stderr(chunk);
      },
    });
  } catch (error) {
    output.close();
    await release();
    throw error;
  }
  agent.handle = handle;
  agent.result = handle.done.then(async (exit) => {
    output.finish();
    await release();
    // The session log could not be written (the disk filled up): the run stops as a storage
    // failure, and the task keeps its state for the resume.
    if (output.logFailure !== undefined) throw output.logFailure;
    return await exitOf(exit, parser, launch, options, home);
  }, async (error) => {
    output.close();
    await release();
    throw error;
  });
  // Whoever waits for the exit sees a failure; this only keeps one that comes before the run
  // waits (the agent filled the disk and exited while its start was still being recorded) from
  // being an unhandled rejection that ends the whole process.
  agent.result.catch(() => {});
  return agent as AgentProcess;
}

/** The agent's result from its exit (stderr redacted); its HOME scrubbed of secrets if asked. */
async function exitOf(
  exit: Awaited<ProcessHandle["done"]>,
  parser: ReturnType<Adapter["parser"]>,
  launch: AgentLaunch,
  options: StartAgentOptions,
  home: string,
): Promise<Awaited<AgentProcess["result"]>> {
  if (launch.scrubHome && options.redactor !== undefined) {
    await scrubSecrets(home, options.redactor).catch(() => {});
  }
  const tail = new TextDecoder().decode(exit.stderr).slice(-4000);
  const stderr = options.redactor === undefined ? tail : options.redactor.text(tail);
  const result = parser.finish({ code: exit.code, timed_out: exit.timedOut, stderr });
  return { result, timedOut: exit.timedOut, signal: exit.signal };
}

/**
 * The agent's command line: the `bernstein` shim and the task token file in its HOME, the
 * adapter's invocation (with its files written), passed through the spawn path (sandbox,
 * attachments).
 */
async function agentInvocation(
  launch: AgentLaunch,
  options: StartAgentOptions,
  prepared: PreparedWorktree,
) {
  const { worktree, home } = prepared;
  const shimDir = await writeBernsteinShim(home, options.selfCommand, options.selfEnv);
  const path = `${shimDir}:${options.env.get("PATH") ?? "/usr/bin:/bin"}`;
  const tokenEnv: Record<string, string> = {};
  if (launch.token !== undefined) {
    const tokenPath = taskTokenPath(home);
    await Deno.mkdir(join(tokenPath, ".."), { recursive: true, mode: 0o700 });
    await writeFileAtomic(tokenPath, launch.token, { mode: 0o600 });
    tokenEnv.BERNSTEIN_TASK_TOKEN_FILE = tokenPath;
  }
  const built = launch.adapter.build({
    prompt: launch.prompt,
    ...(launch.media !== undefined && launch.media.length > 0 ? { media: launch.media } : {}),
    model: launch.model,
    effort: launch.effort,
    max_turns: launch.max_turns ?? undefined,
    cwd: worktree,
    home,
    endpoint: launch.endpoint,
    env: options.env,
    extra_env: { ...launch.extraEnv, ...tokenEnv, PATH: path },
    is_root: launch.isRoot,
    settings: launch.settings,
    executable: launch.executable,
    ...(launch.toolPolicy !== undefined ? { tool_policy: launch.toolPolicy } : {}),
  });
  await writeInvocationFiles(built, home);
  return await (options.spawnPath ?? DIRECT_SUBPROCESS).wrap(built, {
    session: launch.session,
    worktree,
    home,
    adapter: launch.adapter.name,
    endpoint: launch.endpoint,
  });
}
