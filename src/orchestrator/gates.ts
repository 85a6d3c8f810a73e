// Quality gates on a task's diff before it merges: the built-in `run_config` gate and command
// gates, which run in the agent's isolation because they run code the agent wrote.

import { isRunConfigPath } from "../config/mod.ts";
import { buildChildEnv, type EnvReader, outputText, runProcess } from "../io/mod.ts";
import type { ChangedPath } from "./git.ts";

/** Outcome of one quality gate on one task's diff. */
export interface GateResult {
  /** `run_config`, `tests` or `lint`. */
  gate: string;
  /** True when the gate passed. */
  ok: boolean;
  /** One line: why it failed, or what passed. */
  reason: string;
  /** Recorded command output (tail), for gates that run a command. */
  output?: string;
  /** Wall time in milliseconds (0 for pure gates). */
  durationMs: number;
}

/**
 * The `run_config` gate: fails when the diff touches run configuration or state
 * ({@linkcode isRunConfigPath}: bernstein's own configuration, MCP server configuration an
 * agent could grant itself tools with, anything under `.sdd/`).
 */
export function runConfigGate(changes: readonly ChangedPath[]): GateResult {
  const touched = changes.map((c) => c.path).filter(isRunConfigPath);
  if (touched.length === 0) {
    return {
      gate: "run_config",
      ok: true,
      reason: `${changes.length} changed path(s), none protected`,
      durationMs: 0,
    };
  }
  return {
    gate: "run_config",
    ok: false,
    reason: `the diff touches protected run configuration: ${touched.join(", ")}`,
    durationMs: 0,
  };
}

/**
 * Runs a command in the agent's isolation: takes the argv, working folder and environment and
 * returns what to start instead (inside the sandbox, or unchanged), and what to release after.
 * Gate and signal commands run code the agent wrote, so they get the agent's isolation.
 */
export type CommandIsolator = (
  argv: readonly string[],
  where: { cwd: string; env: Record<string, string> },
) => Promise<{
  argv: string[];
  env: Record<string, string>;
  release?: () => Promise<void>;
  /** The first process supervises the rest (a sandbox): stopped last on a timeout. */
  leaderLast?: boolean;
}>;

/** Options for {@linkcode commandGate}. */
export interface CommandGateOptions {
  /** Gate name (`tests`, `lint`). */
  gate: string;
  /** argv of the configured command. */
  command: readonly string[];
  /** Worktree the command runs in. */
  cwd: string;
  /** Deadline in seconds. */
  timeoutS: number;
  /** Environment source; only PATH, HOME and locale pass. */
  env: EnvReader;
  /** Bytes of output kept in the result (tail). */
  keepBytes?: number;
  /** Runs the command in the agent's isolation (default: directly). */
  isolate?: CommandIsolator;
}

const GATE_ENV = ["PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER"];

/** Runs a configured gate command in the worktree; passes on exit 0 within the deadline. */
export async function commandGate(options: CommandGateOptions): Promise<GateResult> {
  const started = performance.now();
  const env = buildChildEnv(GATE_ENV, options.env, { NO_COLOR: "1", CI: "1" });
  let result;
  let release: (() => Promise<void>) | undefined;
  try {
    const run = options.isolate
      ? await options.isolate(options.command, { cwd: options.cwd, env })
      : { argv: [...options.command], env };
    release = "release" in run ? run.release : undefined;
    result = await runProcess(run.argv, {
      cwd: options.cwd,
      env: run.env,
      timeoutMs: options.timeoutS * 1000,
      maxCaptureBytes: 4 * 1024 * 1024,
      leaderLast: "leaderLast" in run ? run.leaderLast : undefined,
    });
  } catch (error) {
    await release?.().catch(() => {});
    return {
      gate: options.gate,
      ok: false,
      reason: `cannot run ${options.command[0]}: ${(error as Error).message}`,
      durationMs: performance.now() - started,
    };
  }
  await release?.().catch(() => {});
  const keep = options.keepBytes ?? 8192;
  const text = outputText(result.stdout) + outputText(result.stderr);
  const output = text.length > keep ? `…${text.slice(-keep)}` : text;
  const durationMs = performance.now() - started;
  if (result.timedOut) {
    return {
      gate: options.gate,
      ok: false,
      reason: `timed out after ${options.timeoutS}s`,
      output,
      durationMs,
    };
  }
  return {
    gate: options.gate,
    ok: result.code === 0,
    reason: result.code === 0
      ? `${options.command.join(" ")} passed`
      : `${options.command.join(" ")} exited ${result.code}`,
    output,
    durationMs,
  };
}
