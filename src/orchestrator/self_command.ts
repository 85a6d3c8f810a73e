import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { EnvReader } from "../io/mod.ts";

/** How to run this same bernstein again (agents' `bernstein task …` shim, background runs). */
export interface SelfCommand {
  /** argv prefix: the compiled binary, or deno + flags + main.ts of this checkout. */
  argv: string[];
  /** Environment the child needs to find its module cache (source runs only). */
  env: Record<string, string>;
}

/** The command that re-runs bernstein: the compiled binary itself, or `deno run … main.ts`. */
export function selfCommand(env: EnvReader): SelfCommand {
  const exec = Deno.execPath();
  if (!/^deno(\.exe)?$/.test(basename(exec))) return { argv: [exec], env: {} };
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
      "-P=bernstein",
      join(root, "main.ts"),
    ],
    // An agent's `bernstein task …` must not make deno check for updates over the network.
    env: { ...(denoDir ? { DENO_DIR: denoDir } : {}), DENO_NO_UPDATE_CHECK: "1" },
  };
}
