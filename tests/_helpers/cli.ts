// Runs the real `bernstein` / `bernstein-verify` entry points as subprocesses, under exactly the
// permission sets and V8 flags the binaries get (deno.json "permissions", runtime_flags.ts).
import { fileURLToPath as fromFileUrl } from "node:url";
import { v8FlagsArg } from "../../scripts/runtime_flags.ts";

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
  /** Bytes for stdin. */
  stdin?: string;
}

async function runEntry(
  entry: string,
  permissionSet: string,
  args: readonly string[],
  options: CliRunOptions,
): Promise<CliRun> {
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
  if (options.stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(options.stdin));
    await w.close();
  }
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Runs `bernstein ARGS` (main.ts under the `bernstein` permission set). */
export function runBernstein(
  args: readonly string[],
  options: CliRunOptions = {},
): Promise<CliRun> {
  return runEntry("main.ts", "bernstein", args, options);
}

/** Runs `bernstein-verify ARGS` (verify.ts under the read-only `verify` permission set). */
export function runVerify(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  return runEntry("verify.ts", "verify", args, options);
}
