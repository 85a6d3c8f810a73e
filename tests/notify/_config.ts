// A resolved configuration from a raw object, for the notification tests (defaults applied,
// validated like a bernstein.yaml layer; no environment overrides).
import { type Config, objectLayer, resolveConfig } from "../../src/config/mod.ts";
import { mapEnv } from "../../src/io/mod.ts";

/** The configuration `raw` resolves to; throws with the problems when it does not validate. */
export function configOf(raw: Record<string, unknown>): Config {
  const r = resolveConfig({ layers: [objectLayer("test", raw)], env: mapEnv({}) });
  if (r.config === undefined) throw new Error(JSON.stringify(r.problems));
  return r.config;
}
