/**
 * Product identity: names and the version, read from deno.json so there is one place to bump.
 *
 * @module
 */
import denoJson from "../../deno.json" with { type: "json" };

/** The version of both binaries. */
export const VERSION: string = denoJson.version;

/** Name of the main binary. */
export const MAIN_BINARY = "bernstein";

/** Name of the standalone verifier binary. */
export const VERIFY_BINARY = "bernstein-verify";

/**
 * V8 flags of both binaries (baked in by `deno compile`; source runs that start bernstein
 * again pass them too). `--optimize-for-size` keeps V8's young generation at 1 MiB instead of
 * growing it to 32 MiB per isolate under a steady allocation rate, and lets the old
 * generation grow less between collections. Measured on 100 000 entries with one worker:
 * lineage gate ~145 instead of ~190-245 MiB peak RSS, `bernstein-verify pack` ~230 instead of
 * ~410 MiB, both in the same time; `--version` unchanged.
 */
export const RUNTIME_V8_FLAGS: readonly string[] = ["--optimize-for-size"];

/** The `deno run` / `deno compile` argument for {@linkcode RUNTIME_V8_FLAGS}. */
export function v8FlagsArg(): string {
  return `--v8-flags=${RUNTIME_V8_FLAGS.join(",")}`;
}

/**
 * `deno run` flags of a source run of either entry point (tests, an agent's `bernstein task …`
 * shim, background runs), beside {@linkcode v8FlagsArg}. Without
 * `--unstable-lazy-dynamic-imports` deno walks the module graph of every literal dynamic import
 * before the first line runs: the command table reaches the whole program (~490 modules,
 * ~25 ms of CPU a start) although a command loads only its own part. A compiled binary reads
 * its modules from what `deno compile` embedded and has no such walk; `deno compile` itself
 * must not get this flag (with it, text imports reached only through a dynamic import are
 * left out of the binary).
 */
export const SOURCE_RUN_FLAGS: readonly string[] = ["--unstable-lazy-dynamic-imports"];
