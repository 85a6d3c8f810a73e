// Finds executables on PATH (the system lookup, or a fixed map in tests).

import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { EnvReader } from "../io/mod.ts";

/** Finds executables; injected so availability checks are testable without real binaries. */
export interface PathLookup {
  /** Absolute path of `binary` (a name searched on PATH, or a path checked as is), if any. */
  which(binary: string): Promise<string | undefined>;
}

async function isExecutableFile(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/**
 * Looks binaries up on the PATH read through `env` (not the process's own PATH), so the
 * child sees the same binary the check found. A name with a `/` is checked as a path.
 */
export function systemPathLookup(env: EnvReader, cwd = "."): PathLookup {
  return {
    async which(binary) {
      if (binary === "") return undefined;
      if (binary.includes("/")) {
        const path = isAbsolute(binary) ? binary : resolve(cwd, binary);
        return (await isExecutableFile(path)) ? path : undefined;
      }
      for (const dir of (env.get("PATH") ?? "").split(delimiter)) {
        if (dir === "" || !isAbsolute(dir)) continue; // relative PATH entries are a hijack risk
        const candidate = join(dir, binary);
        if (await isExecutableFile(candidate)) return candidate;
      }
      return undefined;
    },
  };
}

/** A lookup over a fixed map of binary → path (tests). */
export function mapPathLookup(paths: Readonly<Record<string, string>>): PathLookup {
  return {
    which: (binary) => Promise.resolve(Object.hasOwn(paths, binary) ? paths[binary] : undefined),
  };
}
