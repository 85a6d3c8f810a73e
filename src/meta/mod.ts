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
