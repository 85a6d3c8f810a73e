import { z } from "zod";

const positive = z.number().positive().finite();
const positiveInt = z.number().int().positive();
const nonNegative = z.number().nonnegative().finite();

/** `tuning:` — every key of defaults.ts; all required here, the defaults layer supplies them. */
export const TuningSchema = z.object({
  orchestrator: z.object({
    tick_interval_s: positive,
    drain_timeout_s: nonNegative,
    stale_claim_timeout_s: positive,
    stalled_manager_threshold_s: positive,
    max_agent_runtime_s: positive,
    scope_runtime_s: z.object({
      small: positive,
      medium: positive,
      large: positive,
      xl: positive,
    }).strict(),
    stalled_run_grace_s: positive,
    stalled_run_ticks: positive,
  }).strict(),
  spawn: z.object({
    spawn_backoff_base_s: nonNegative,
    spawn_backoff_max_s: nonNegative,
    rate_limit_cooldown_s: nonNegative,
  }).strict(),
  agent: z.object({
    max_turns: positiveInt,
    idle_log_age_threshold_s: positive,
    stall_threshold_s: positive,
    heartbeat_interval_s: positive,
    kill_grace_s: nonNegative,
    probe_timeout_s: positive,
  }).strict(),
  slo: z.object({
    // Negative values are clamped to 0 by resolveConfig (documented behaviour), not refused.
    error_budget_min_failures: z.number().int(),
  }).strict(),
  gates: z.object({ timeout_s: positive }).strict(),
  server: z.object({
    port: z.number().int().min(0).max(65535),
    max_body_bytes: positiveInt,
    client_connect_attempts: positiveInt,
    client_retry_base_ms: nonNegative,
    hold_default_ttl_s: positive,
    hold_max_ttl_s: positive,
    max_connections: positiveInt,
    idle_timeout_s: positive,
    request_timeout_s: positive,
    max_json_depth: positiveInt,
  }).strict(),
  tasks: z.object({
    default_priority: positiveInt,
    default_max_retries: z.number().int().nonnegative(),
    jsonl_compact_min_records: positiveInt,
  }).strict(),
  storage: z.object({
    connect_timeout_s: positive,
    statement_timeout_s: positive,
    pool_size: positiveInt,
    claim_lock_ttl_s: positive,
  }).strict(),
}).strict();

/** Reasoning effort names understood by adapters. */
export const EFFORTS = ["low", "medium", "high", "max"] as const;

const LadderStep = z.object({
  cli: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  effort: z.enum(EFFORTS).optional(),
}).strict();

/** One role's model policy. */
export const RolePolicySchema = z.object({
  cli: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  effort: z.enum(EFFORTS).optional(),
  endpoint: z.string().min(1).optional(),
  ladder: z.array(LadderStep).optional(),
  fallback_model: z.string().min(1).optional(),
}).strict();

/** A local (OpenAI-/Anthropic-/Gemini-compatible) model endpoint. */
export const LocalEndpointSchema = z.object({
  base_url: z.string().url(),
  api: z.enum(["openai-chat", "openai-responses", "anthropic", "gemini"]).optional(),
  api_key_env: z.string().regex(/^[A-Z_][A-Z0-9_]*$/).optional(),
  model: z.string().min(1).optional(),
}).strict();

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * `adapters.<name>`: per-adapter settings. Common: `binary` (executable name or path instead
 * of the adapter's own), `extra_args` (appended to every invocation), `env` (more variable
 * names passed through). `claude` reads `root_permission`; `generic` reads the rest;
 * `test_multimodal` registers the scripted test agent as multimodal (refused elsewhere).
 */
export const AdapterSettingsSchema = z.object({
  binary: z.string().min(1).optional(),
  extra_args: z.array(z.string()).optional(),
  env: z.array(z.string().regex(ENV_NAME)).optional(),
  root_permission: z.enum(["accept_edits", "is_sandbox"]).optional(),
  test_multimodal: z.boolean().optional(),
  command: z.array(z.string().min(1)).min(1).optional(),
  prompt: z.enum(["argv", "stdin", "file"]).optional(),
  prompt_flag: z.string().min(1).optional(),
  model_flag: z.string().min(1).optional(),
  max_turns_flag: z.string().min(1).optional(),
  models: z.object({
    haiku: z.string().min(1).optional(),
    sonnet: z.string().min(1).optional(),
    opus: z.string().min(1).optional(),
  }).strict().optional(),
  version_args: z.array(z.string().min(1)).optional(),
  help_args: z.array(z.string().min(1)).optional(),
  flags: z.array(z.string().regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$/)).optional(),
}).strict();

const GateCommand = z.object({
  command: z.array(z.string().min(1)).min(1),
  timeout_s: positive.optional(),
}).strict();

/** The whole `bernstein.yaml` (and every other layer), after defaults are applied. */
export const ConfigSchema = z.object({
  goal: z.string().optional(),
  cells: z.array(
    z.object({
      name: z.string().min(1),
      roles: z.array(z.string().min(1)).optional(),
      max_agents: positiveInt.optional(),
    }).strict(),
  ).optional(),
  workspace: z.object({
    base_branch: z.string().min(1).optional(),
    worktrees_dir: z.string().min(1).optional(),
  }).strict().optional(),
  cli: z.string().min(1),
  max_agents: positiveInt,
  budget: z.object({
    usd: nonNegative.optional(),
    max_tasks: positiveInt.optional(),
  }).strict().optional(),
  role_model_policy: z.record(z.string(), RolePolicySchema).optional(),
  internal_llm_provider: z.string().min(1).optional(),
  internal_llm_model: z.string().min(1).optional(),
  catalogs: z.array(z.string().min(1)).optional(),
  local_endpoints: z.record(z.string(), LocalEndpointSchema).optional(),
  provider_availability: z.record(z.string(), z.boolean()).optional(),
  adapters: z.record(z.string(), AdapterSettingsSchema).optional(),
  attachments: z.object({
    // Repo-relative globs never attached (replaces the built-in list of secret-looking files).
    deny: z.array(z.string().min(1)),
  }).strict().optional(),
  storage: z.object({
    backend: z.enum(["memory", "postgres", "redis"]),
    database_url: z.string().min(1).optional(),
    redis_url: z.string().min(1).optional(),
    // One orchestrator at a time per namespace of a shared database.
    namespace: z.string().regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
      "must be 1-63 characters of A-Z a-z 0-9 . _ - starting with a letter or digit",
    ).optional(),
  }).strict(),
  notify: z.object({
    webhook_url: z.string().url().optional(),
    on: z.array(z.enum(["run.completed", "run.failed", "task.failed", "merge.refused"])).optional(),
  }).strict().optional(),
  network: z.object({
    allowed_ips: z.array(z.string().min(1)),
    // Hosts agents may reach through the sandbox's egress proxy besides their model endpoint
    // and the task server (host, host:port, *.suffix or a URL).
    egress: z.array(z.string().min(1)).optional(),
  }).strict(),
  // How agents are isolated: auto (the sandbox where it works), sandbox (required), none.
  isolation: z.enum(["auto", "sandbox", "none"]),
  sandbox: z.object({
    // More absolute paths agents see read-only (tools outside the system folders).
    read_only: z.array(z.string().min(1).regex(/^\//, "must be an absolute path")),
  }).strict().optional(),
  quality_gates: z.object({
    run_config: z.boolean(),
    secrets: z.boolean(),
    tests: GateCommand.optional(),
    lint: GateCommand.optional(),
  }).strict(),
  github: z.object({ sync_backlog: z.boolean() }).strict(),
  bridges: z.record(z.string(), z.unknown()).optional(),
  lineage: z.object({ enabled: z.boolean(), strict: z.boolean() }).strict(),
  compliance: z.object({
    risk_paths: z.array(z.string().min(1)),
    remote_biometric_identification: z.boolean(),
    retention_days: positiveInt,
  }).strict(),
  tuning: TuningSchema,
}).strict();

/** One layer: any subset of the config. */
export const LayerSchema = ConfigSchema.deepPartial();

/** The effective configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** The top-level keys of `bernstein.yaml`. */
export const TOP_LEVEL_KEYS: readonly string[] = Object.keys(ConfigSchema.shape);
