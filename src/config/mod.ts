/**
 * Configuration: the zod schema of `bernstein.yaml`, every tunable default, layered loading
 * (defaults < .sdd/config.yaml < plan defaults < bernstein.yaml < overlay <
 * BERNSTEIN_CONFIG_OVERRIDE < BERNSTEIN_* variables < flags) with provenance, the documented
 * list of keys that do nothing yet, and the workspace writer.
 *
 * @example
 * ```ts ignore
 * import { requireConfig } from "./mod.ts";
 * const { config, warnings } = await requireConfig({ cwd: Deno.cwd(), env: processEnv });
 * ```
 *
 * @module
 */
export {
  agentDeadlineCapSeconds,
  agentDeadlineSeconds,
  DEFAULT_TUNING,
  MANAGER_SCOPE,
  type Scope,
  type Tuning,
} from "./defaults.ts";
export {
  ACTIVE_CONTEXT_FILE,
  type ActiveContext,
  type ContextDocument,
  contextDocumentBytes,
  contextDocumentPath,
  CONTEXTS_DIR,
  contextSettingsHash,
  readActiveContext,
  readContextDocument,
} from "./context_layer.ts";

export { ConfigError, type ConfigProblem, fileProblemAs } from "./errors.ts";
export { excludeFromGit, initWorkspace } from "./init.ts";
export {
  type ConfigSourceFile,
  DEFAULT_OVERLAY_NAME,
  loadConfig,
  type LoadConfigOptions,
  type LoadedConfig,
  requireConfig,
} from "./load.ts";
export { keyMatches, NOT_IMPLEMENTED, notImplementedEntry } from "./not_implemented.ts";
export { MAX_PROBLEMS_PER_KIND } from "./problems.ts";
export { decodeConfigBytes, MAX_CONFIG_BYTES, readConfigFile } from "./read_text.ts";
export { getPath, isPlainObject, setPath } from "./merge.ts";
export { findProject, isWithin, type ProjectPaths } from "./project.ts";
export { DEFAULT_CONFIG, resolveConfig, validateLayer, WATCHDOG_KEYS } from "./resolve.ts";
export {
  AdapterSettingsSchema,
  type Config,
  CONFORMANCE_LEVELS,
  type ConformanceLevel,
  EFFORTS,
  NOTIFY_EVENTS,
  TOP_LEVEL_KEYS,
} from "./schema.ts";
export { redactUrlPassword, SECRET_KEYS, shownConfigValue } from "./secrets.ts";
export { parseConfigKey, parseConfigValue, setWorkspaceValue } from "./set_value.ts";
export { objectLayer, parseYamlLayer, type YamlLayer } from "./yaml_layer.ts";
export { type ConfigKey, configKeys, RELOADABLE_KEYS } from "./keys.ts";
export {
  AGENT_CONFIG_PATHS,
  isRunConfigPath,
  MCP_CONFIG_FILES,
  POLICY_DIR,
  PROJECT_CONFIG_FILES,
  RUN_CONFIG_FILES,
  STATE_DIR,
} from "./run_config_paths.ts";
