// Opening a project's lineage store from its configuration (`lineage.enabled`,
// `lineage.strict`) and environment (operator key), for callers that record writes.
import { requireConfig } from "../../config/mod.ts";
import type { Warning } from "../../errors/mod.ts";
import { type Clock, type EnvReader, type Random, systemRandom } from "../../io/mod.ts";
import { resolveOperatorHmacKey } from "./operator_hmac_key.ts";
import { type LineageStore, openLineageStore } from "./store.ts";

/** Options for {@linkcode openProjectLineageStore}. */
export interface ProjectLineageOptions {
  /** A directory inside the project. */
  cwd: string;
  /** Environment (configuration overrides, operator secret, audit key location). */
  env: EnvReader;
  /** Randomness for minting keys (default: the system's). */
  random?: Random;
  /** Clock for `ts_ns` (default: the system's). */
  clock?: Clock;
  /** Where warnings go (configuration warnings and non-strict lineage failures). */
  warn?: (warning: Warning) => void;
}

/**
 * The lineage store of the project around `cwd`, honouring `lineage.enabled` and
 * `lineage.strict` from its configuration. The operator key is resolved on first write (a
 * writer may create the audit key).
 *
 * @example
 * ```ts ignore
 * const store = await openProjectLineageStore({ cwd: Deno.cwd(), env: processEnv });
 * await store.recordWrite("src/app.ts", bytes, { agent, toolCallId, spanId });
 * ```
 */
export async function openProjectLineageStore(
  options: ProjectLineageOptions,
): Promise<LineageStore> {
  const { config, warnings, loaded } = await requireConfig({ cwd: options.cwd, env: options.env });
  for (const w of warnings) options.warn?.(w);
  const random = options.random ?? systemRandom;
  return openLineageStore({
    sdd: loaded.project.sdd,
    operatorKey: () => resolveOperatorHmacKey({ env: options.env, createWith: random }),
    enabled: config.lineage.enabled,
    strict: config.lineage.strict,
    clock: options.clock,
    random,
    warn: options.warn,
  });
}
