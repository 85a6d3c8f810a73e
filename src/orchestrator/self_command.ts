// How bernstein runs itself again: the compiled binary or `deno run` of this checkout, for the
// agents' `bernstein task …` shim, background runs and `bernstein-verify`, with what a sandbox
// must show read-only for the command to start.

import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EnvReader } from "../io/mod.ts";
import { SOURCE_RUN_FLAGS, v8FlagsArg } from "../meta/mod.ts";

/** How to run this same bernstein again (agents' `bernstein task …` shim, background runs). */
export interface SelfCommand {
  /** argv prefix: the compiled binary, or deno + flags + main.ts of this checkout. */
  argv: string[];
  /** Environment the child needs to find its module cache (source runs only). */
  env: Record<string, string>;
  /**
   * What a sandbox must show read-only for this command to run: the compiled binary, or the
   * source checkout and Deno's module cache.
   */
  readOnly: string[];
}

/** `deno run` of one of this checkout's entry points, as its compiled binary would run. */
function sourceRun(
  exec: string,
  entry: string,
  permissionSet: string,
  env: EnvReader,
): SelfCommand {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const home = env.get("HOME") ?? "";
  const denoDir = env.get("DENO_DIR") ?? (home ? join(home, ".cache", "deno") : "");
  return {
    argv: [
      exec,
      "run",
      "-q",
      "--frozen",
      `--config=${join(root, "deno.json")}`,
      `-P=${permissionSet}`,
      v8FlagsArg(),
      ...SOURCE_RUN_FLAGS,
      join(root, entry),
    ],
    // An agent's `bernstein task …` must not make deno check for updates over the network.
    env: { ...(denoDir ? { DENO_DIR: denoDir } : {}), DENO_NO_UPDATE_CHECK: "1" },
    readOnly: [exec, root.replace(/\/$/, ""), ...(denoDir ? [denoDir] : [])],
  };
}

/** The command that re-runs bernstein: the compiled binary itself, or `deno run … main.ts`. */
export function selfCommand(env: EnvReader): SelfCommand {
  const exec = Deno.execPath();
  if (!/^deno(\.exe)?$/.test(basename(exec))) return { argv: [exec], env: {}, readOnly: [exec] };
  return sourceRun(exec, "main.ts", "bernstein", env);
}

/**
 * How to run `bernstein-verify`: the binary beside a compiled `bernstein`, or `deno run` of
 * this checkout's verify.ts under the read-only `verify` permission set.
 */
export function verifyCommand(env: EnvReader): SelfCommand {
  const exec = Deno.execPath();
  if (!/^deno(\.exe)?$/.test(basename(exec))) {
    const name = exec.endsWith(".exe") ? "bernstein-verify.exe" : "bernstein-verify";
    const path = join(dirname(exec), name);
    return { argv: [path], env: {}, readOnly: [path] };
  }
  return sourceRun(exec, "verify.ts", "verify", env);
}
