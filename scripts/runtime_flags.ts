// Runtime settings the shipped binaries carry (baked in by `deno compile`); the benchmarks run
// the sources with the same ones, so their figures are the binaries' figures. The V8 flags
// live with the product identity (src/meta), where a source run that restarts bernstein
// finds them too.
export { RUNTIME_V8_FLAGS, SOURCE_RUN_FLAGS, v8FlagsArg } from "../src/meta/mod.ts";

/**
 * Modules each binary loads that `deno compile` does not find on its own: the gate's worker,
 * the pack builder's deflate and sidecar workers (started by URL) and, for bernstein, the CLI
 * (main.ts imports it by a computed specifier so that `--version` does not load the whole
 * command table's module graph first).
 */
export const COMPILE_INCLUDES: Readonly<Record<string, readonly string[]>> = {
  "main.ts": [
    "src/cli/mod.ts",
    "src/sandbox/net_init.ts",
    "src/verify/_gate_worker.ts",
    "src/compliance/_deflate_worker.ts",
    "src/compliance/project/_sidecar_worker.ts",
  ],
  "verify.ts": ["src/verify/_gate_worker.ts"],
};
