// Runs a real agent CLI once through its adapter (build → write files → spawn → parse) against
// a local model server (tests/e2e/model_servers): used by the live adapter tests and by
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
  type ToolPolicyHook,
  writeInvocationFiles,
} from "../../src/adapters/mod.ts";
import { mapEnv, outputText, spawnProcess } from "../../src/io/mod.ts";
import type { PinnedCli } from "../../scripts/install_agent_clis.ts";
import { git } from "./temp.ts";
import type { LoggedRequest, ModelServer } from "../e2e/model_servers/mod.ts";

/** Folder of the pinned CLIs (scripts/install_agent_clis.ts). */
export function agentClisDir(): string {
  return Deno.env.get("BERNSTEIN_AGENT_CLIS_DIR") ??
    join(Deno.env.get("HOME") ?? "/tmp", ".cache", "bernstein", "agent-clis");
}

/** Folder of the pinned CLIs' executables (put on PATH). */
export function agentClisBin(): string {
  return join(agentClisDir(), "bin");
}

/** A pinned CLI: its executable when the pinned version is installed, else why not. */
export interface PinnedStatus {
  /** Absolute path of the pinned version's executable. */
  exe?: string;
  /** The suffix of an ignored test's name (empty when installed). */
  why: string;
}

/**
 * Whether the pinned version of a CLI is installed (its own `<name>-<version>` folder, not just
 * some `bin/` link). When not, the reason: npm's, from the installer's manifest, when its last
 * run tried and failed; else that it is not installed.
 */
export function pinnedStatus(pin: PinnedCli, dir: string = agentClisDir()): PinnedStatus {
  const exe = join(dir, `${pin.name}-${pin.version}`, "node_modules", ".bin", pin.bin);
  try {
    if (Deno.statSync(exe).isFile) return { exe, why: "" };
  } catch {
    // Not installed: find out why below.
  }
  const spec = `${pin.package}@${pin.version}`;
  let reason = `not installed in ${dir}; run scripts/install_agent_clis.ts`;
  try {
    const manifest = JSON.parse(Deno.readTextFileSync(join(dir, "manifest.json")));
    const outcome = (manifest.outcomes ?? []).find((o: { spec?: string }) => o.spec === spec);
    if (outcome?.status === "skipped") reason = `failed to install: ${outcome.reason}`;
  } catch {
    // No manifest: the installer never ran here.
  }
  return { why: ` [skipped: ${spec} ${reason}]` };
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
  server: ModelServer;
  /** Prompt. */
  prompt: string;
  /** Deadline in ms (from the spawn, or from `deadlineFrom`). */
  timeoutMs: number;
  /**
   * Start counting the deadline only when this settles (e.g. once the model server has
   * answered the CLI twice), so that how long the CLI takes to start on a busy machine does
   * not decide the outcome. The CLI is then killed like at the deadline and the parser told so.
   */
  deadlineFrom?: Promise<unknown>;
  /** Turn limit. */
  max_turns?: number;
  /** `adapters.<name>` settings. */
  settings?: AdapterSettings;
  /**
   * More variables for the CLI (e.g. the egress sentinel's proxy settings): their names are
   * added to the adapter's allowlist through `settings.env`, as an operator would.
   */
  extraEnv?: Record<string, string>;
  /** Bernstein's pre-tool hook for the CLI. */
  toolPolicy?: ToolPolicyHook;
  /** Prepares the worktree and HOME before the CLI starts (e.g. plants project files). */
  prepare?: (dirs: { cwd: string; home: string }) => Promise<void>;
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
    const extra = options.extraEnv ?? {};
    const settings = Object.keys(extra).length === 0 ? options.settings : {
      ...options.settings,
      env: [...(options.settings?.env ?? []), ...Object.keys(extra)],
    };
    const invocation = adapter.build({
      prompt: options.prompt,
      cwd,
      home,
      env: mapEnv({
        ...extra,
        PATH: `${agentClisBin()}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
      }),
      endpoint: endpointFor(adapter.name, options.server.origin),
      executable: options.executable,
      max_turns: options.max_turns,
      settings,
      is_root: Deno.uid() === 0,
      ...(options.toolPolicy !== undefined ? { tool_policy: options.toolPolicy } : {}),
    });
    await options.prepare?.({ cwd, home });
    await writeInvocationFiles(invocation, home);
    const late = options.deadlineFrom !== undefined ? new AbortController() : undefined;
    const handle = spawnProcess(invocation.argv, {
      cwd: invocation.cwd,
      env: invocation.env,
      stdin: invocation.stdin,
      timeoutMs: late === undefined ? options.timeoutMs : undefined,
      signal: late?.signal,
      killGraceMs: 1000,
    });
    let timer: ReturnType<typeof setTimeout> | undefined;
    options.deadlineFrom?.then(() => {
      timer = setTimeout(() => late?.abort(), options.timeoutMs);
    }, () => {});
    const done = await handle.done.finally(() => clearTimeout(timer));
    const timedOut = done.timedOut || done.aborted;
    const stdout = outputText(done.stdout);
    const stderr = outputText(done.stderr);
    const parsed = parseOutput(adapter, stdout, {
      code: done.code,
      timed_out: timedOut,
      stderr,
    });
    return await fn({
      invocation,
      code: done.code,
      timedOut,
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
