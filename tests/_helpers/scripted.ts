// Runs the scripted agent as a real process, exactly as the run loop will: the scripted
// adapter's invocation (argv, env allowlist, prompt on stdin) in `<root>/worktree` with its
// own HOME `<root>/home`.
import { join } from "node:path";
import {
  type AgentResult,
  type InvocationInput,
  parseOutput,
  type ProgressEvent,
  scripted,
} from "../../src/adapters/mod.ts";
import { mapEnv, outputText, spawnProcess } from "../../src/io/mod.ts";

/** What one scripted run did. */
export interface Run {
  code: number;
  signal: Deno.Signal | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  result: AgentResult;
  events: ProgressEvent[];
}

/** Options of {@linkcode runScriptedAgent}. */
export interface RunOptions {
  max_turns?: number;
  extra_env?: Record<string, string>;
  env?: Record<string, string>;
  timeoutMs?: number;
  system_prompt?: string;
  model?: string;
  extra_args?: string[];
}

/** Runs the scripted agent once with `prompt`. */
export async function runScriptedAgent(
  root: string,
  prompt: string,
  options: RunOptions = {},
): Promise<Run> {
  const cwd = join(root, "worktree");
  const home = join(root, "home");
  await Deno.mkdir(cwd, { recursive: true });
  await Deno.mkdir(join(home, "tmp"), { recursive: true });
  const input: InvocationInput = {
    prompt,
    cwd,
    home,
    env: mapEnv({ PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...options.env }),
    executable: Deno.execPath(),
    max_turns: options.max_turns,
    extra_env: options.extra_env,
    system_prompt: options.system_prompt,
    model: options.model,
    settings: options.extra_args ? { extra_args: options.extra_args } : undefined,
  };
  const inv = scripted.build(input);
  const done = await spawnProcess(inv.argv, {
    cwd: inv.cwd,
    env: inv.env,
    stdin: inv.stdin,
    timeoutMs: options.timeoutMs ?? 60_000,
    killGraceMs: 500,
  }).done;
  const stdout = outputText(done.stdout);
  const stderr = outputText(done.stderr);
  const parsed = parseOutput(scripted, stdout, {
    code: done.code,
    timed_out: done.timedOut,
    stderr,
  });
  return {
    code: done.code,
    signal: done.signal,
    timedOut: done.timedOut,
    stdout,
    stderr,
    ...parsed,
  };
}
