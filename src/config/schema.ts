/**
 * The zod schema of `bernstein.yaml` and of every other configuration layer. Each key carries
 * its one-line description (`.describe()`): the README's configuration reference, `config
 * list` and the schema-walk test (tests/config/schema_walk_test.ts) are all read from here.
 * Built-in values live in resolve.ts (`DEFAULT_CONFIG`) and defaults.ts (`tuning:`).
 */
import { z } from "zod";

const positive = z.number().positive().finite();
const positiveInt = z.number().int().positive();
const nonNegative = z.number().nonnegative().finite();

/** `tuning:` — every key of defaults.ts; all required here, the defaults layer supplies them. */
export const TuningSchema = z.object({
  orchestrator: z.object({
    tick_interval_s: positive.describe(
      "Backstop tick of the scheduler; events (task done, agent exited) act at once.",
    ),
    drain_timeout_s: nonNegative.describe(
      "How long `stop` waits for running agents to finish before killing them.",
    ),
    stale_claim_timeout_s: positive.describe(
      "A claim with no heartbeat or activity for this long is released.",
    ),
    stalled_manager_threshold_s: positive.describe(
      "A manager alive this long without creating any task aborts the run " +
        "(BERNSTEIN_STALL_THRESHOLD_S).",
    ),
    max_agent_runtime_s: positive.describe(
      "Floor of every agent's wall-clock deadline; the scope buckets can only raise it.",
    ),
    scope_runtime_s: z.object({
      small: positive.describe("Deadline of a small task before the floor is applied."),
      medium: positive.describe("Deadline of a medium task before the floor is applied."),
      large: positive.describe("Deadline of a large task before the floor is applied."),
      xl: positive.describe("Deadline of an xl task before the floor is applied."),
    }).strict(),
    stalled_run_grace_s: positive.describe(
      "The zero-terminal backstop waits this long with an unchanged task fingerprint…",
    ),
    stalled_run_ticks: positive.describe("…and over at least this many ticks, before failing."),
    deadline_extension_s: positive.describe(
      "An agent that reported progress since the last check gets this much more at its deadline…",
    ),
    deadline_max_s: positive.describe(
      "…cycle after cycle, up to this total (a deadline above it is never extended).",
    ),
  }).strict(),
  spawn: z.object({
    spawn_backoff_base_s: nonNegative.describe(
      "First retry delay after a failed spawn; doubles per consecutive failure.",
    ),
    spawn_backoff_max_s: nonNegative.describe("Cap of the spawn backoff."),
    rate_limit_cooldown_s: nonNegative.describe(
      "Least wait before retrying a task whose agent hit a rate limit (HTTP 429, quota).",
    ),
  }).strict(),
  agent: z.object({
    max_turns: positiveInt.nullable().describe(
      "Turn limit passed to adapters that support one; null: no turn limit.",
    ),
    idle_log_age_threshold_s: positive.describe(
      "An agent whose log has not grown for this long is reported idle (once, audited).",
    ),
    stall_threshold_s: positive.describe(
      "No heartbeat, log or git activity for this long marks an agent stalled.",
    ),
    heartbeat_interval_s: positive.describe(
      "How often agents are asked (in their prompt) to report progress on long work, and workers on other hosts heartbeat their agents (a stop waits two of them).",
    ),
    kill_grace_s: nonNegative.describe(
      "Grace between SIGTERM and SIGKILL of an agent's process group.",
    ),
    probe_timeout_s: positive.describe(
      "Deadline of each version/help probe of an agent CLI (adapters list|check, doctor).",
    ),
  }).strict(),
  slo: z.object({
    // Negative values are clamped to 0 by resolveConfig (documented behaviour), not refused.
    error_budget_min_failures: z.number().int().describe(
      "Floor of the error budget: a run pauses (no new agents; the rest resumes next run) once " +
        "its final task failures reach the larger of this and 10% of its finished tasks; " +
        "negative clamps to 0.",
    ),
  }).strict(),
  gates: z.object({
    timeout_s: positive.describe("Default timeout of a gate command (tests, lint)."),
  }).strict(),
  server: z.object({
    port: z.number().int().min(0).max(65535).describe(
      "Task server port on 127.0.0.1; 0 picks a free one (.sdd/runtime/server.port).",
    ),
    max_body_bytes: positiveInt.describe("Largest request body the task server accepts."),
    client_connect_attempts: positiveInt.describe(
      "Connection attempts of `bernstein task …` while the server refuses connections.",
    ),
    client_retry_base_ms: nonNegative.describe(
      "First delay between those attempts; doubles per attempt.",
    ),
    hold_default_ttl_s: positive.describe(
      "Lifetime of an orchestrator hold created without ttl_s.",
    ),
    hold_max_ttl_s: positive.describe(
      "Longest hold accepted, so a forgotten hold cannot keep a run alive for ever.",
    ),
    max_connections: positiveInt.describe(
      "Connections served at once; one more is answered 503 and closed.",
    ),
    idle_timeout_s: positive.describe(
      "Seconds a connection may sit idle between requests before it is closed.",
    ),
    request_timeout_s: positive.describe(
      "Seconds from a request's first byte until its head and body must have arrived.",
    ),
    max_json_depth: positiveInt.describe(
      "Deepest JSON nesting a request body may have (checked before parsing; 400 past it).",
    ),
  }).strict(),
  tasks: z.object({
    default_priority: positiveInt.describe("Priority of a task created without one (1 highest)."),
    default_max_retries: z.number().int().nonnegative().describe(
      "Retries of a task created without max_retries.",
    ),
    jsonl_compact_min_records: positiveInt.describe(
      "The JSONL task log is rewritten as a snapshot past this many records.",
    ),
  }).strict(),
  storage: z.object({
    connect_timeout_s: positive.describe(
      "Longest a connection to PostgreSQL or Redis may take (store, doctor, preflight).",
    ),
    statement_timeout_s: positive.describe(
      "Server-side limit of every PostgreSQL statement; a stuck query fails the call.",
    ),
    pool_size: positiveInt.describe("Connections in each PostgreSQL pool."),
    claim_lock_ttl_s: positive.describe("Lifetime of a Redis claim lock."),
  }).strict(),
  workers: z.object({
    poll_wait_s: positive.describe(
      "Longest the orchestrator holds a worker's poll open while it has nothing for it.",
    ),
    start_timeout_s: positive.describe(
      "Longest wait for a worker to start an agent it was assigned (then the spawn failed).",
    ),
    sign_timeout_s: positive.describe(
      "Longest wait for a worker to sign a lineage entry of its agent's merged file.",
    ),
  }).strict(),
  checkpoints: z.object({
    every_entries: z.number().int().nonnegative().describe(
      "A run signs a checkpoint of the lineage log (and of the audit log) after this many " +
        "entries it appended to it since the last; 0: only at the end of the run and at packs.",
    ),
  }).strict(),
  notify: z.object({
    timeout_s: positive.describe("Deadline of one delivery attempt (HTTP request, SMTP session)."),
    max_attempts: positiveInt.describe(
      "Attempts of a delivery that fails with a 5xx, a timeout or no connection.",
    ),
    backoff_base_s: nonNegative.describe("Wait before the second attempt; doubles per attempt…"),
    backoff_max_s: nonNegative.describe("…up to this."),
    queue_size: positiveInt.describe(
      "Notifications waiting per channel; more are dropped, counted and reported.",
    ),
    drain_timeout_s: nonNegative.describe(
      "How long the end of a run waits for notifications still queued or retrying.",
    ),
  }).strict(),
  github: z.object({
    max_issues: positiveInt.describe("Most open issues one backlog sync takes."),
    request_timeout_s: positive.describe("Deadline of one GitHub API request."),
    max_rate_wait_s: nonNegative.describe(
      "Longest wait for a GitHub rate limit to reset before the sync gives up.",
    ),
  }).strict(),
  policy: z.object({
    approval_timeout_s: positive.describe(
      "How long a parked tool call (an ask) waits for an operator before it is denied.",
    ),
    hook_timeout_s: positive.describe(
      "How long an agent's hook waits for the task server's answer beyond an approval wait.",
    ),
    max_rule_file_bytes: positiveInt.describe(
      "Largest .bernstein/ rule file read; a larger one makes every call ask, never allow.",
    ),
    max_hook_input_bytes: positiveInt.describe(
      "Largest hook input (one tool call) accepted; a larger one is denied.",
    ),
  }).strict(),
  providers: z.object({
    receipt_max_age_days: positive.describe(
      "An endpoint certification receipt older than this is stale (re-run its doctor command).",
    ),
    request_timeout_s: positive.describe(
      "Deadline of each conformance request when the endpoint profile sets no timeout.",
    ),
    latency_requests: positiveInt.describe(
      "Requests `doctor --endpoint` times for the latency percentiles.",
    ),
    context_probe_max_tokens: positiveInt.describe(
      "Largest prompt (in tokens, ~4 characters each) sent to check a claimed context length.",
    ),
    probe_timeout_s: positive.describe(
      "Deadline of one health probe of a provider_availability chain element.",
    ),
  }).strict(),
}).strict();

/** Every tunable, as `tuning:` holds it after defaults are applied. */
export type Tuning = z.infer<typeof TuningSchema>;

/** Reasoning effort names understood by adapters. */
export const EFFORTS = ["low", "medium", "high", "max"] as const;

const LadderStep = z.object({
  cli: z.string().min(1).optional().describe("Adapter of this rung (default: the role's)."),
  model: z.string().min(1).optional().describe("Model of this rung."),
  effort: z.enum(EFFORTS).optional().describe("Effort of this rung."),
}).strict();

/** One role's model policy. */
export const RolePolicySchema = z.object({
  cli: z.string().min(1).optional().describe(
    "Adapter used exclusively for this role (--cli does not override it).",
  ),
  model: z.string().min(1).optional().describe("Model passed to the role's adapter."),
  effort: z.enum(EFFORTS).optional().describe("Reasoning effort."),
  endpoint: z.string().min(1).optional().describe(
    "Name of a local_endpoints entry the role's agents talk to.",
  ),
  ladder: z.array(LadderStep).optional().describe(
    "Models tried in turn when the role's agent fails (model ladder).",
  ),
  fallback_model: z.string().min(1).optional().describe(
    "Model retried once when the first attempt failed on a model error.",
  ),
}).strict();

/** A local (OpenAI-/Anthropic-/Gemini-compatible) model endpoint. */
export const LocalEndpointSchema = z.object({
  base_url: z.string().url().describe("Base URL of the model server."),
  api: z.enum(["openai-chat", "openai-responses", "anthropic", "gemini"]).optional().describe(
    "Wire protocol of the server.",
  ),
  api_key_env: z.string().regex(
    /^[A-Z_][A-Z0-9_]{0,63}$/,
    "must be the NAME of an environment variable (A-Z, 0-9, _), never the key itself",
  ).refine((name) => !looksLikeKey(name), {
    message: "looks like a literal key; give the NAME of the variable that holds it",
  }).optional().describe("NAME of the variable holding the key (a literal key is refused)."),
  model: z.string().min(1).optional().describe("Model served."),
  engine: z.string().min(1).optional().describe(
    "Free-form label of the serving engine (ollama, vllm, …), recorded in the certification " +
      "receipt; a receipt for another engine is stale.",
  ),
  timeout: positive.optional().describe(
    "Request timeout in seconds, given to the agent CLI (or enforced by the watchdog).",
  ),
}).strict();

const ENV_NAME = /^[A-Z_][A-Z0-9_]*$/;

/**
 * An upper-case "name" that is really a key: a long run of characters with many digits
 * (variable names are words; keys are random).
 */
function looksLikeKey(name: string): boolean {
  const digits = name.replace(/[^0-9]/g, "").length;
  return name.length >= 20 && digits >= 6 && !name.includes("_");
}

/**
 * `adapters.<name>`: per-adapter settings. Common: `binary` (executable name or path instead
 * of the adapter's own), `extra_args` (appended to every invocation), `env` (more variable
 * names passed through). `claude` reads `root_permission`; `generic` reads the rest.
 */
export const AdapterSettingsSchema = z.object({
  binary: z.string().min(1).optional().describe("Executable name or path instead of the default."),
  extra_args: z.array(z.string()).optional().describe("Arguments appended to every invocation."),
  env: z.array(z.string().regex(ENV_NAME)).optional().describe(
    "More variable names passed through to the agent.",
  ),
  root_permission: z.enum(["accept_edits", "is_sandbox"]).optional().describe(
    "claude: how to run as root (accept_edits, or is_sandbox inside a sandbox).",
  ),
  command: z.array(z.string().min(1)).min(1).optional().describe("generic: argv of the agent."),
  prompt: z.enum(["argv", "stdin", "file"]).optional().describe(
    "generic: how the prompt is handed over.",
  ),
  prompt_flag: z.string().min(1).optional().describe("generic: flag before the prompt."),
  model_flag: z.string().min(1).optional().describe("generic: flag before the model."),
  max_turns_flag: z.string().min(1).optional().describe("generic: flag before the turn limit."),
  models: z.object({
    haiku: z.string().min(1).optional().describe("generic: model name for the haiku tier."),
    sonnet: z.string().min(1).optional().describe("generic: model name for the sonnet tier."),
    opus: z.string().min(1).optional().describe("generic: model name for the opus tier."),
  }).strict().optional(),
  version_args: z.array(z.string().min(1)).optional().describe(
    "generic: arguments printing the version.",
  ),
  help_args: z.array(z.string().min(1)).optional().describe(
    "generic: arguments printing the help.",
  ),
  flags: z.array(z.string().regex(/^-{1,2}[A-Za-z0-9][A-Za-z0-9-]*$/)).optional().describe(
    "generic: flags that must appear in --help (the flag contract).",
  ),
}).strict();

const GateCommand = z.object({
  command: z.array(z.string().min(1)).min(1).describe("argv of the gate, run in the worktree."),
  timeout_s: positive.optional().describe("Timeout (default tuning.gates.timeout_s)."),
}).strict();

/** A named cell: a team of roles with its own cap of agents at once. */
const CellSchema = z.object({
  name: z.string().min(1).describe("Cell name."),
  roles: z.array(z.string().min(1)).optional().describe("Roles whose tasks belong to the cell."),
  max_agents: positiveInt.optional().describe("Agents of this cell at once."),
}).strict();

/** One source of agent definitions (`catalogs:`). */
export const CatalogSchema = z.object({
  name: z.string().min(1).describe("Catalog name, shown by `bernstein agents list`."),
  type: z.enum(["agency", "generic", "plugin"]).describe("Layout of the definitions."),
  path: z.string().min(1).describe("Folder (or file) of the definitions, relative to the project."),
  priority: z.number().int().optional().describe(
    "Higher wins a role defined by several catalogs (default 50).",
  ),
  enabled: z.boolean().optional().describe("false: parsed but never loaded (default true)."),
  source_kind: z.enum(["file", "directory", "github", "git", "npm"]).optional().describe(
    "How path is resolved (default: read directly).",
  ),
}).strict();

/** Conformance levels of a provider, weakest first (src/providers grades them). */
export const CONFORMANCE_LEVELS = ["basic", "advanced", "expert"] as const;
/** One conformance level. */
export type ConformanceLevel = typeof CONFORMANCE_LEVELS[number];
const CONFORMANCE = CONFORMANCE_LEVELS;

const ChainElement = z.object({
  adapter: z.string().min(1).describe("Adapter of this element."),
  model: z.string().min(1).optional().describe("Model of this element."),
  conformance: z.enum(CONFORMANCE).describe("Capability level of this element."),
  endpoint: z.string().min(1).optional().describe(
    "local_endpoints profile this element talks to (its probe asks that server).",
  ),
}).strict();

/** `provider_availability:` — per-role fallback chains with conformance floors. */
export const ProviderAvailabilitySchema = z.object({
  probe_ttl_minutes: positive.optional().describe("How long a probe result is cached."),
  probes_enabled: z.boolean().optional().describe("false for offline runs (default true)."),
  roles: z.record(
    z.string(),
    z.object({
      conformance_floor: z.enum(CONFORMANCE).describe("Least conformance a fallback may have."),
      chain: z.array(ChainElement).min(1).describe("Ordered fallback chain, primary first."),
    }).strict().superRefine((role, ctx) => {
      const floor = CONFORMANCE.indexOf(role.conformance_floor);
      role.chain.forEach((element, i) => {
        if (CONFORMANCE.indexOf(element.conformance) < floor) {
          ctx.addIssue({
            code: z.ZodIssueCode.custom,
            path: ["chain", i, "conformance"],
            message: `${element.adapter}: conformance ${element.conformance} is below the ` +
              `role's conformance_floor ${role.conformance_floor}`,
          });
        }
      });
    }),
  ).optional().describe("Chain per role; `default` applies to roles without their own."),
}).strict();

/** `bridges.openclaw` — the OpenClaw gateway bridge. */
const OpenClawBridgeSchema = z.object({
  enabled: z.boolean().optional().describe("Turn the bridge on for runs."),
  url: z.string().regex(/^wss?:\/\/\S+$/, "must be a ws:// or wss:// URL").optional().describe(
    "Gateway WebSocket URL.",
  ),
  api_key: z.string().min(1).optional().describe("Gateway key; ${VAR} is read from the env."),
  agent_id: z.string().min(1).optional().describe("OpenClaw agent to target."),
  workspace_mode: z.literal("shared_workspace").optional().describe("Only shared_workspace."),
  fallback_to_local: z.boolean().optional().describe(
    "Fall back to a local CLI when the bridge refuses.",
  ),
  connect_timeout_s: positive.optional().describe("Connect/auth timeout."),
  request_timeout_s: positive.optional().describe("Per-run wait timeout."),
  session_prefix: z.string().min(1).optional().describe("Prefix of remote session keys."),
  max_log_bytes: positiveInt.optional().describe("Largest log read back."),
  model_override: z.string().min(1).nullable().optional().describe("Model pin forwarded."),
}).strict();

/**
 * Events a notification channel can carry (src/notify: what each means, and its default
 * filter — only what needs a person).
 */
export const NOTIFY_EVENTS = [
  "run.started",
  "run.completed",
  "run.unhealthy",
  "task.failed",
  "task.merged",
  "merge.refused",
  "manager.stalled",
  "run.backstop",
  "approval.needed",
] as const;

const NotifyEvents = z.array(z.enum(NOTIFY_EVENTS));

/** `notify.webhook:` — one HTTP endpoint. */
const WebhookSchema = z.object({
  url: z.string().url().optional().describe(
    "URL that receives a POST per event (Slack and Discord URLs hold a secret: prefer url_env).",
  ),
  url_env: z.string().regex(ENV_NAME).optional().describe("NAME of the variable holding the URL."),
  format: z.enum(["json", "slack", "discord"]).optional().describe(
    "Body: json (versioned, signed; default), slack or discord (their incoming-webhook shapes).",
  ),
  secret_env: z.string().regex(ENV_NAME).optional().describe(
    "NAME of the variable holding the HMAC key of X-Bernstein-Signature.",
  ),
  events: NotifyEvents.optional().describe("Events sent here (default: notify.on)."),
}).strict().refine(
  (w) => (w.url === undefined) !== (w.url_env === undefined),
  "set exactly one of url and url_env",
);

/** `notify:` — where run outcomes are announced (src/notify). */
const NotifySchema = z.object({
  webhook_url: z.string().url().optional().describe(
    "Shorthand for notify.webhook.url (JSON body).",
  ),
  on: NotifyEvents.optional().describe(
    "Events of channels without their own events (default: run.unhealthy, task.failed, " +
      "merge.refused, manager.stalled, run.backstop, approval.needed).",
  ),
  webhook: WebhookSchema.optional(),
  email: z.object({
    smtp_host: z.string().min(1).describe("SMTP server."),
    smtp_port: z.number().int().min(1).max(65535).optional().describe(
      "SMTP port (587; 465 with tls: implicit).",
    ),
    tls: z.enum(["starttls", "implicit", "none"]).optional().describe(
      "starttls (default: refused unless the server offers it), implicit (TLS from the first " +
        "byte) or none (loopback relays only).",
    ),
    ca_file: z.string().min(1).optional().describe(
      "PEM file of the CA certificates that sign the relay's (instead of the system's).",
    ),
    from: z.string().min(3).describe("Sender address."),
    to: z.array(z.string().min(3)).min(1).describe("Recipients."),
    username_env: z.string().regex(ENV_NAME).optional().describe("NAME of the user variable."),
    password_env: z.string().regex(ENV_NAME).optional().describe(
      "NAME of the password variable.",
    ),
    events: NotifyEvents.optional().describe("Events mailed (default: notify.on)."),
  }).strict().optional(),
  desktop: z.union([
    z.boolean(),
    z.object({
      enabled: z.boolean().optional().describe("Show desktop notifications (default true)."),
      events: NotifyEvents.optional().describe("Events shown (default: notify.on)."),
    }).strict(),
  ]).optional().describe(
    "Desktop notifications on this machine (notify-send, osascript, a PowerShell toast).",
  ),
}).strict();

/** The whole `bernstein.yaml` (and every other layer), after defaults are applied. */
export const ConfigSchema = z.object({
  goal: z.string().min(1).optional().describe(
    "Goal a manager agent decomposes when no -g, plan or backlog is given.",
  ),
  cells: z.union([positiveInt, z.array(CellSchema)]).optional().describe(
    "Parallel work cells: a number (the goal's manager splits the work into that many), or a " +
      "list of {name, roles, max_agents} (the manager is told the cells; each caps its agents).",
  ),
  workspace: z.object({
    worktrees_dir: z.string().min(1).optional().describe(
      "Where agent worktrees are created, relative to the project root or absolute (default " +
        ".sdd/worktrees); created if missing, excluded from git inside the work tree, refused " +
        "inside another repository's work tree or the git folder.",
    ),
  }).strict().optional(),
  cli: z.string().min(1).describe(
    "Adapter for tasks without one (auto: the best available); BERNSTEIN_CLI, --cli.",
  ),
  max_agents: positiveInt.describe("Agents running at once; BERNSTEIN_MAX_AGENTS, --max-agents."),
  budget: z.object({
    usd: nonNegative.optional().describe("Stop starting agents past this reported cost."),
    max_tasks: positiveInt.optional().describe("Stop starting agents past this many tasks."),
  }).strict().optional(),
  role_model_policy: z.record(z.string(), RolePolicySchema).optional().describe(
    "Adapter, model and effort per role.",
  ),
  internal_llm_provider: z.string().min(1).optional().describe(
    "Adapter of the manager agent that decomposes a goal.",
  ),
  internal_llm_model: z.string().min(1).optional().describe("Model of that manager agent."),
  catalogs: z.array(CatalogSchema).optional().describe(
    "Folders of agent definitions, merged by priority.",
  ),
  local_endpoints: z.record(z.string(), LocalEndpointSchema).optional().describe(
    "Named local model servers that roles reference with endpoint:.",
  ),
  provider_availability: ProviderAvailabilitySchema.optional(),
  adapters: z.record(z.string(), AdapterSettingsSchema).optional().describe(
    "Settings per adapter name.",
  ),
  attachments: z.object({
    deny: z.array(z.string().min(1)).describe(
      "Repo-relative globs never attached (replaces the built-in list of secret-looking files).",
    ),
  }).strict().optional(),
  storage: z.object({
    backend: z.enum(["memory", "postgres", "redis"]).describe(
      "Task store: memory (embedded JSONL), postgres, or redis (postgres + redis locks).",
    ),
    database_url: z.string().min(1).optional().describe("PostgreSQL URL."),
    redis_url: z.string().min(1).optional().describe("Redis URL."),
    namespace: z.string().regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
      "must be 1-63 characters of A-Z a-z 0-9 . _ - starting with a letter or digit",
    ).optional().describe("One orchestrator at a time per namespace of a shared database."),
  }).strict(),
  notify: NotifySchema.optional(),
  workers: z.object({
    listen: z.string().regex(
      /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/,
      "must be host:port (an IPv6 address in brackets)",
    ).refine((v) => Number(v.slice(v.lastIndexOf(":") + 1)) <= 65535, "port above 65535")
      .optional().describe(
        "Address the task server also listens on for workers on other hosts and their agents " +
          "(host:port); unset: no workers.",
      ),
    url: z.string().url().optional().describe(
      "URL workers and their agents use when it differs from http://<listen> (NAT, a proxy).",
    ),
    local_agents: z.number().int().nonnegative().optional().describe(
      "Agents this host runs itself besides the workers' (default: max_agents; 0: workers only).",
    ),
  }).strict().optional().describe("Workers on other hosts (`bernstein worker`)."),
  network: z.object({
    allowed_ips: z.array(z.string().min(1)).describe(
      "Addresses or CIDR ranges allowed to call the task server.",
    ),
    egress: z.array(z.string().min(1)).optional().describe(
      "Hosts agents may reach through the sandbox's egress proxy besides their model " +
        "endpoint and the task server (host, host:port, *.suffix or a URL).",
    ),
  }).strict(),
  isolation: z.enum(["auto", "sandbox", "none"]).describe(
    "How agents are isolated: auto (the sandbox where it works), sandbox (required), none.",
  ),
  sandbox: z.object({
    read_only: z.array(z.string().min(1).regex(/^\//, "must be an absolute path")).describe(
      "More absolute paths agents see read-only (tools outside the system folders).",
    ),
    writable: z.array(z.string().min(1).regex(/^\//, "must be an absolute path")).optional()
      .describe("More absolute paths agents may write (shared caches); never inside .sdd."),
  }).strict().optional(),
  quality_gates: z.object({
    run_config: z.boolean().describe("Refuse diffs that touch bernstein's own configuration."),
    secrets: z.boolean().describe(
      "Refuse diffs that carry a token, key or private key block.",
    ),
    tests: GateCommand.optional(),
    lint: GateCommand.optional(),
  }).strict(),
  github: z.object({
    sync_backlog: z.boolean().describe(
      "Pull open GitHub issues into the backlog (BERNSTEIN_SYNC_GITHUB_BACKLOG).",
    ),
    repo: z.string().regex(
      /^[A-Za-z0-9][A-Za-z0-9-]*\/[A-Za-z0-9._-]+$/,
      "must be owner/name",
    ).optional().describe(
      "Repository to sync (default: the GitHub repository of the origin remote).",
    ),
    api_url: z.string().url().describe("REST API root (GitHub Enterprise: https://HOST/api/v3)."),
    labels: z.array(z.string().min(1)).optional().describe(
      "Sync only issues carrying one of these labels (default: every open issue).",
    ),
    comment_on_merge: z.boolean().describe(
      "Comment on a synced issue when its task merges (commit, verification).",
    ),
    // The fleet's name rule (src/fleet/names.ts; config ranks below fleet and cannot import it).
    connection: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,127}$/, "must be a connection name")
      .optional().describe(
        "bernstein conn connection holding the token (instead of GITHUB_TOKEN / GH_TOKEN).",
      ),
  }).strict(),
  bridges: z.object({ openclaw: OpenClawBridgeSchema.optional() }).strict().optional(),
  policy: z.object({
    enabled: z.boolean().describe(
      "Decide every tool call of agents whose CLI has a pre-tool hook (docs/POLICY.md).",
    ),
    unenforced: z.enum(["warn", "refuse"]).describe(
      "Agents whose CLI has no pre-tool hook: say so at the run start, or refuse to start them.",
    ),
  }).strict(),
  lineage: z.object({
    enabled: z.boolean().describe("Record a signed lineage entry for every agent write."),
    strict: z.boolean().describe(
      "Refuse a write whose lineage cannot be recorded (BERNSTEIN_LINEAGE_STRICT).",
    ),
  }).strict(),
  compliance: z.object({
    risk_paths: z.array(z.string().min(1)).describe(
      "Globs of high-risk paths, flagged in the compliance pack.",
    ),
    remote_biometric_identification: z.boolean().describe(
      "Declares the system does remote biometric identification (Article 12(3) facts).",
    ),
    retention_days: positiveInt.describe("Retention period stated in the pack."),
  }).strict(),
  tuning: TuningSchema,
}).strict();

/** One layer: any subset of the config. */
export const LayerSchema = ConfigSchema.deepPartial();

/** The effective configuration. */
export type Config = z.infer<typeof ConfigSchema>;

/** The top-level keys of `bernstein.yaml`. */
export const TOP_LEVEL_KEYS: readonly string[] = Object.keys(ConfigSchema.shape);
