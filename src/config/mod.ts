/**
 * Configuration: the zod schema of `bernstein.yaml`, every tunable default, layered loading
 * (defaults < .sdd/config.yaml < bernstein.yaml < overlay < BERNSTEIN_CONFIG_OVERRIDE <
 * BERNSTEIN_* variables < flags) with provenance, and the workspace writer.
 *
 * @example
 * ```ts
 * import { requireConfig } from "./mod.ts";
 * const { config, warnings } = await requireConfig({ cwd: Deno.cwd(), env: processEnv });
 * ```
 *
 * @module
 */
export { agentDeadlineSeconds, DEFAULT_TUNING, type Scope, type Tuning } from "./defaults.ts";
export { ENV_OVERRIDES, type EnvOverride, readEnvOverrides } from "./env_overrides.ts";
export { ConfigError, type ConfigProblem } from "./errors.ts";
export { type InitReport, initWorkspace, PROJECT_TEMPLATE, SDD_FOLDERS } from "./init.ts";
export {
  type ConfigSourceFile,
  DEFAULT_OVERLAY_NAME,
  loadConfig,
  type LoadConfigOptions,
  type LoadedConfig,
  overlayPath,
  requireConfig,
} from "./load.ts";
export { dottedPath, getPath, isPlainObject, mergeLayer } from "./merge.ts";
export { findProject, isWithin, type ProjectPaths } from "./project.ts";
export {
  DEFAULT_CONFIG,
  knownKeysAt,
  resolveConfig,
  type ResolvedConfig,
  type ResolveInput,
  validateLayer,
} from "./resolve.ts";
export {
  AdapterSettingsSchema,
  type Config,
  ConfigSchema,
  EFFORTS,
  TOP_LEVEL_KEYS,
} from "./schema.ts";
export { redactUrlPassword, SECRET_URL_KEYS, shownConfigValue } from "./secrets.ts";
export { parseConfigKey, parseConfigValue, setWorkspaceValue } from "./set_value.ts";
export { objectLayer, parseYamlLayer, type YamlLayer } from "./yaml_layer.ts";
