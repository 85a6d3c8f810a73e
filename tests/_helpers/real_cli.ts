// Runs a real agent CLI once through its adapter (build → write files → spawn → parse) against
// a local text model server: used by the live adapter tests and by
// scripts/capture_adapter_fixtures.ts, so fixtures and tests exercise the same path.
import { join } from "node:path";
import {
  type Adapter,
  type AdapterSettings,
  type AgentResult,
  type EndpointProfile,
  type Invocation,
  parseOutput,
  type ProgressEvent,
  writeInvocationFiles,
} from "../../src/adapters/mod.ts";
import { mapEnv, outputText, spawnProcess } from "../../src/io/mod.ts";
import { git } from "./temp.ts";
import type { LoggedRequest, TextModelServer } from "./text_model_server.ts";

/** Folder of the pinned CLIs (scripts/install_agent_clis.ts). */
export function agentClisBin(): string {
  const dir = Deno.env.get("BERNSTEIN_AGENT_CLIS_DIR") ??
    join(Deno.env.get("HOME") ?? "/tmp", ".cache", "bernstein", "agent-clis");
  return join(dir, "bin");
}

/** Absolute path of an installed pinned CLI, or undefined. */
export function installedCli(bin: string): string | undefined {
  const path = join(agentClisBin(), bin);
  try {
    return Deno.statSync(path).isFile ? path : undefined;
  } catch {
    return undefined;
  }
}

/** The endpoint profile pointing an adapter at the local server. */
export function endpointFor(adapter: string, origin: string): EndpointProfile {
  switch (adapter) {
    case "claude":
      return { name: "fake", base_url: origin, api: "anthropic", model: "fake-model" };
    case "codex":
      return {
        name: "fake",
        base_url: `${origin}/v1`,
        api: "openai-responses",
        model: "fake-model",
      };
    case "gemini":
      return { name: "fake", base_url: origin, api: "gemini", model: "fake-model" };
    default:
      return { name: "fake", base_url: `${origin}/v1`, api: "openai-chat", model: "fake-model" };
  }
}

/** What one real run produced. */
export interface RealRun {
  /** The invocation that ran. */
  invocation: Invocation;
  /** Exit code. */
  code: number;
  /** Killed at the deadline. */
  timedOut: boolean;
  /** Raw stdout. */
  stdout: string;
  /** Raw stderr. */
  stderr: string;
  /** Parsed events. */
  events: ProgressEvent[];
  /** Parsed result. */
  result: AgentResult;
  /** What reached the model server. */
  requests: LoggedRequest[];
  /** The worktree (removed after the callback). */
  cwd: string;
  /** The spawn's HOME. */
  home: string;
}

/** Options for {@linkcode runRealCli}. */
export interface RealRunOptions {
  /** The CLI's executable. */
  executable: string;
  /** The local model server. */
  server: TextModelServer;
  /** Prompt. */
  prompt: string;
  /** Deadline in ms. */
  timeoutMs: number;
  /** Turn limit. */
  max_turns?: number;
  /** `adapters.<name>` settings. */
  settings?: AdapterSettings;
  /** Called with the worktree path before the spawn (e.g. to aim a write mode at it). */
  onWorktree?: (cwd: string) => void;
}

/** Runs `adapter` once in a temporary git worktree with its own HOME; cleans up after `fn`. */
export async function runRealCli<T>(
  adapter: Adapter,
  options: RealRunOptions,
  fn: (run: RealRun) => Promise<T> | T,
): Promise<T> {
  const root = await Deno.realPath(await Deno.makeTempDir({ prefix: "bernstein-cli-" }));
  try {
    const cwd = join(root, "worktree");
    const home = join(root, "home");
    await Deno.mkdir(cwd);
    await Deno.mkdir(join(home, "tmp"), { recursive: true });
    await git(cwd, "init", "-q", "-b", "main");
    options.onWorktree?.(cwd);
    const invocation = adapter.build({
      prompt: options.prompt,
      cwd,
      home,
      env: mapEnv({ PATH: `${agentClisBin()}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}` }),
      endpoint: endpointFor(adapter.name, options.server.origin),
      executable: options.executable,
      max_turns: options.max_turns,
      settings: options.settings,
      is_root: Deno.uid() === 0,
    });
    await writeInvocationFiles(invocation, home);
    const handle = spawnProcess(invocation.argv, {
      cwd: invocation.cwd,
      env: invocation.env,
      stdin: invocation.stdin,
      timeoutMs: options.timeoutMs,
      killGraceMs: 1000,
    });
    const done = await handle.done;
    const stdout = outputText(done.stdout);
    const stderr = outputText(done.stderr);
    const parsed = parseOutput(adapter, stdout, {
      code: done.code,
      timed_out: done.timedOut,
      stderr,
    });
    return await fn({
      invocation,
      code: done.code,
      timedOut: done.timedOut,
      stdout,
      stderr,
      events: parsed.events,
      result: parsed.result,
      requests: [...options.server.requests],
      cwd,
      home,
    });
  } finally {
    await Deno.remove(root, { recursive: true }).catch(() => {});
  }
}
