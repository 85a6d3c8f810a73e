// Runs the real `bernstein` / `bernstein-verify` entry points as subprocesses, under exactly the
// permission sets and V8 flags the binaries get (deno.json "permissions", runtime_flags.ts).
import { fileURLToPath as fromFileUrl } from "node:url";
import { SOURCE_RUN_FLAGS, v8FlagsArg } from "../../scripts/runtime_flags.ts";
import { LineWatcher } from "./events.ts";

/** Repository root. */
export const REPO_ROOT: string = fromFileUrl(new URL("../../", import.meta.url));

/** Result of a whole-binary run. */
export interface CliRun {
  /** Exit code. */
  code: number;
  /** Decoded stdout. */
  stdout: string;
  /** Decoded stderr. */
  stderr: string;
}

/** Options for {@linkcode runBernstein}. */
export interface CliRunOptions {
  /** Working directory. */
  cwd?: string;
  /** The child's whole environment (nothing is inherited except PATH and HOME unless given). */
  env?: Record<string, string>;
  /** Text (UTF-8) or bytes for stdin. */
  stdin?: string | Uint8Array;
  /**
   * bernstein only: run it with the scripted test agent registered as multimodal, its images on
   * this channel (through tests/_helpers/multimodal_main.ts; no configuration can do this).
   */
  scriptedMultimodal?: "prompt-text" | "file-reference";
}

/** A whole-binary run in progress, its output read line by line as it comes. */
export interface SpawnedCli {
  /** The process (for its pid, `kill` and `status`). */
  child: Deno.ChildProcess;
  /** Its stdout. */
  stdout: LineWatcher;
  /** Its stderr. */
  stderr: LineWatcher;
  /** Resolves once it has exited and both streams have ended. */
  result: Promise<CliRun>;
}

function spawnEntry(
  entry: string,
  permissionSet: string,
  args: readonly string[],
  options: CliRunOptions,
): SpawnedCli {
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: Deno.env.get("HOME") ?? "/tmp",
    DENO_DIR: Deno.env.get("DENO_DIR") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache/deno`,
    NO_COLOR: "1",
    ...options.env,
  };
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-q",
      "--frozen",
      `--config=${REPO_ROOT}deno.json`,
      `-P=${permissionSet}`,
      // As the compiled binaries run.
      v8FlagsArg(),
      ...SOURCE_RUN_FLAGS,
      `${REPO_ROOT}${entry}`,
      ...args,
    ],
    cwd: options.cwd ?? REPO_ROOT,
    env,
    clearEnv: true,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const written = options.stdin === undefined ? Promise.resolve() : (async () => {
    const w = child.stdin.getWriter();
    const bytes = typeof options.stdin === "string"
      ? new TextEncoder().encode(options.stdin)
      : options.stdin;
    await w.write(bytes);
    await w.close();
  })();
  const stdout = new LineWatcher(child.stdout);
  const stderr = new LineWatcher(child.stderr);
  const result = (async () => {
    await written;
    const [status, out, err] = await Promise.all([child.status, stdout.done, stderr.done]);
    return { code: status.code, stdout: out, stderr: err };
  })();
  return { child, stdout, stderr, result };
}

function runEntry(
  entry: string,
  permissionSet: string,
  args: readonly string[],
  options: CliRunOptions,
): Promise<CliRun> {
  return spawnEntry(entry, permissionSet, args, options).result;
}

/**
 * Starts `bernstein ARGS` like {@linkcode runBernstein}, for tests that act on what it prints
 * while it runs (wait for a line, then start a server or send a signal).
 */
export function spawnBernstein(args: readonly string[], options: CliRunOptions = {}): SpawnedCli {
  return spawnEntry(...bernsteinEntry(args, options), options);
}

/** main.ts, or the test entry that registers the scripted agent as multimodal first. */
function bernsteinEntry(
  args: readonly string[],
  options: CliRunOptions,
): [string, string, readonly string[]] {
  if (options.scriptedMultimodal === undefined) return ["main.ts", "bernstein", args];
  return ["tests/_helpers/multimodal_main.ts", "bernstein", [options.scriptedMultimodal, ...args]];
}

/** Runs `bernstein ARGS` (main.ts under the `bernstein` permission set). */
export function runBernstein(
  args: readonly string[],
  options: CliRunOptions = {},
): Promise<CliRun> {
  return runEntry(...bernsteinEntry(args, options), options);
}

/** Runs `bernstein-verify ARGS` (verify.ts under the read-only `verify` permission set). */
export function runVerify(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  return runEntry("verify.ts", "verify", args, options);
}
