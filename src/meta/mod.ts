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
 * V8 flags of each binary, by its entry point (baked in by `deno compile`; source runs that
 * start bernstein again pass them too). Both keep V8's young generation at 1 MiB instead of
 * letting it grow to 32 MiB per isolate under a steady allocation rate (~200 MiB less peak on
 * 100 000 entries). `bernstein-verify` runs with `--optimize-for-size`, which also lets the old
 * generation grow less: the lowest peak, under the reference verifier's. `bernstein` caps the
 * young generation alone and has its old generation grow by 10 % between collections: the
 * lineage gate takes ~5-10 % less CPU than under `--optimize-for-size` (lower in 5 of 5 pairs),
 * the pack build the same CPU for ~5 MiB more peak (docs/DESIGN.md, "V8 flags").
 */
export const RUNTIME_V8_FLAGS: Readonly<Record<"main.ts" | "verify.ts", readonly string[]>> = {
  "main.ts": ["--max-semi-space-size=1", "--heap-growing-percent=10"],
  "verify.ts": ["--optimize-for-size"],
};

/**
 * The `deno run` / `deno compile` argument for the {@linkcode RUNTIME_V8_FLAGS} of the binary
 * whose entry point is `entry`: `bernstein-verify`'s for verify.ts, `bernstein`'s for any other.
 */
export function v8FlagsArg(entry = "main.ts"): string {
  const flags = /(^|\/)verify\.ts$/.test(entry)
    ? RUNTIME_V8_FLAGS["verify.ts"]
    : RUNTIME_V8_FLAGS["main.ts"];
  return `--v8-flags=${flags.join(",")}`;
}
