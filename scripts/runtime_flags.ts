// Runtime settings the shipped binaries carry (baked in by `deno compile`); the benchmarks run
// the sources with the same ones, so their figures are the binaries' figures.

/**
 * V8 flags of both binaries. A 1 MiB semi-space (V8 grows it to 32 MiB per isolate under a
 * steady allocation rate) keeps the young generation of the main thread and of each gate
 * worker small: on a 100 000-entry lineage gate with one worker it is the difference between
 * ~245 and ~200 MiB peak RSS, for no measurable time.
 */
export const RUNTIME_V8_FLAGS = ["--max-semi-space-size=1"] as const;

/** Modules loaded only as worker threads, which `deno compile` does not find on its own. */
export const WORKER_MODULES = ["src/verify/_gate_worker.ts"] as const;

/** The `deno run` / `deno compile` arguments for {@linkcode RUNTIME_V8_FLAGS}. */
export function v8FlagsArg(): string {
  return `--v8-flags=${RUNTIME_V8_FLAGS.join(",")}`;
}
