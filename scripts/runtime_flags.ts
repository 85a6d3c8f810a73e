// Runtime settings the shipped binaries carry (baked in by `deno compile`); the benchmarks run
// the sources with the same ones, so their figures are the binaries' figures.

/**
 * V8 flags of both binaries. `--optimize-for-size` keeps V8's young generation at 1 MiB
 * (instead of growing it to 32 MiB per isolate under a steady allocation rate) and lets the
 * old generation grow less between collections. Measured on 100 000 entries with one worker:
 * lineage gate ~147 instead of ~190-245 MiB peak RSS, `bernstein-verify pack` ~235 instead
 * of ~410 MiB, both in the same time; `--version` 42 vs 40 ms.
 */
export const RUNTIME_V8_FLAGS = ["--optimize-for-size"] as const;

/**
 * Modules each binary loads that `deno compile` does not find on its own: the gate's worker
 * (started by URL) and, for bernstein, the CLI (main.ts imports it by a computed specifier so
 * that `--version` does not load the whole command table's module graph first).
 */
export const COMPILE_INCLUDES: Readonly<Record<string, readonly string[]>> = {
  "main.ts": ["src/cli/mod.ts", "src/verify/_gate_worker.ts"],
  "verify.ts": ["src/verify/_gate_worker.ts"],
};

/** The `deno run` / `deno compile` arguments for {@linkcode RUNTIME_V8_FLAGS}. */
export function v8FlagsArg(): string {
  return `--v8-flags=${RUNTIME_V8_FLAGS.join(",")}`;
}
