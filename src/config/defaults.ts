/**
 * Every tunable number in one place, with its default and why it has that value. Each is
 * overridable under `tuning:` in any config layer (e.g. `tuning.agent.max_turns: 50`).
 */

/** Orchestrator loop and run-level watchdogs. */
export interface OrchestratorTuning {
  /** Backstop tick of the scheduler; events (task done, agent exited) act at once. */
  tick_interval_s: number;
  /** How long `stop` waits for running agents to finish before killing them. */
  drain_timeout_s: number;
  /** A claim with no heartbeat or activity for this long is released. */
  stale_claim_timeout_s: number;
  /** A manager alive this long without creating any task aborts the run. */
  stalled_manager_threshold_s: number;
  /** Floor of every agent's wall-clock deadline; the scope buckets can only raise it. */
  max_agent_runtime_s: number;
  /** Wall-clock deadline per task scope before the floor is applied. */
  scope_runtime_s: { small: number; medium: number; large: number; xl: number };
  /** The zero-terminal backstop waits this long with an unchanged task fingerprint… */
  stalled_run_grace_s: number;
  /** …and over at least this many ticks, before failing the unfinished tasks. */
  stalled_run_ticks: number;
}

/** Spawning agents. */
export interface SpawnTuning {
  /** First retry delay after a failed spawn; doubles per consecutive failure. */
  spawn_backoff_base_s: number;
  /** Cap of the spawn backoff. */
  spawn_backoff_max_s: number;
  /**
   * Least wait before retrying a task whose agent failed on a rate limit (HTTP 429, "rate
   * limit", quota exhausted): retrying at the normal backoff would hit the same limit.
   */
  rate_limit_cooldown_s: number;
}

/** Per-agent limits and liveness. */
export interface AgentTuning {
  /** Turn limit passed to adapters that support one. */
  max_turns: number;
  /** An agent whose log has not grown for this long counts as idle. */
  idle_log_age_threshold_s: number;
  /** No heartbeat, log or git activity for this long marks the agent stalled. */
  stall_threshold_s: number;
  /** How often agents are asked to heartbeat. */
  heartbeat_interval_s: number;
  /** Grace between SIGTERM and SIGKILL of an agent's process group. */
  kill_grace_s: number;
  /** Deadline of each version/help probe of an agent CLI (`adapters list|check`, doctor). */
  probe_timeout_s: number;
}

/** Error-budget (SLO) tracking. */
export interface SloTuning {
  /** Failures tolerated before the error budget counts as burnt; negative clamps to 0. */
  error_budget_min_failures: number;
}

/** Quality gates. */
export interface GateTuning {
  /** Default timeout of a gate command (tests, lint). */
  timeout_s: number;
}

/** Task server and its clients (`bernstein task …`). */
export interface ServerTuning {
  /** Port on 127.0.0.1; 0 picks a free port (written to `.sdd/runtime/server.port`). */
  port: number;
  /** Largest request body accepted. */
  max_body_bytes: number;
  /** Connection attempts of `bernstein task …` while the server refuses connections. */
  client_connect_attempts: number;
  /** First delay between those attempts; doubles per attempt (100 ms → 3.1 s over 6 tries). */
  client_retry_base_ms: number;
  /** Lifetime of an orchestrator hold created without `ttl_s`. */
  hold_default_ttl_s: number;
  /** Longest hold accepted, so a forgotten hold cannot keep a run alive for ever. */
  hold_max_ttl_s: number;
  /** Connections served at once; one more is answered 503 and closed. */
  max_connections: number;
  /** Seconds a connection may sit idle between requests before it is closed. */
  idle_timeout_s: number;
  /** Seconds from a request's first byte until its head and body must have arrived. */
  request_timeout_s: number;
  /** Deepest JSON nesting a request body may have (checked before parsing; 400 past it). */
  max_json_depth: number;
}

/** Task defaults and the embedded task store. */
export interface TasksTuning {
  /** Priority of a task created without one (1 is highest). */
  default_priority: number;
  /** Retries of a task created without `max_retries`. */
  default_max_retries: number;
  /** The JSONL task log is rewritten as a snapshot once it holds this many records and more
   * than twice as many as there are tasks (keeps replay after a crash short). */
  jsonl_compact_min_records: number;
}

/** Shared task stores: PostgreSQL (`storage.backend: postgres|redis`) and Redis. */
export interface StorageTuning {
  /** Longest a connection to PostgreSQL or Redis may take (store, doctor, preflight). */
  connect_timeout_s: number;
  /** Server-side limit of every PostgreSQL statement (`statement_timeout`); a stuck lock or a
   * runaway query fails the call with `task.store_unavailable` instead of hanging the run. */
  statement_timeout_s: number;
  /** Connections in each PostgreSQL pool (claims are serialised per process; reads share). */
  pool_size: number;
  /** Lifetime of a Redis claim lock: long enough for one claim transaction, short enough that
   * a claimer killed mid-claim frees the task at once. The claim itself lives in PostgreSQL. */
  claim_lock_ttl_s: number;
}

/** All tunables. */
export interface Tuning {
  /** Orchestrator loop. */
  orchestrator: OrchestratorTuning;
  /** Spawning. */
  spawn: SpawnTuning;
  /** Agents. */
  agent: AgentTuning;
  /** SLO. */
  slo: SloTuning;
  /** Gates. */
  gates: GateTuning;
  /** Task server. */
  server: ServerTuning;
  /** Tasks and the task store. */
  tasks: TasksTuning;
  /** PostgreSQL and Redis. */
  storage: StorageTuning;
}

/** The built-in defaults of every tunable. */
export const DEFAULT_TUNING: Tuning = {
  orchestrator: {
    tick_interval_s: 3.0,
    drain_timeout_s: 60,
    stale_claim_timeout_s: 900,
    stalled_manager_threshold_s: 170,
    max_agent_runtime_s: 1800,
    scope_runtime_s: { small: 900, medium: 1800, large: 3600, xl: 7200 },
    stalled_run_grace_s: 1800,
    stalled_run_ticks: 10,
  },
  spawn: {
    spawn_backoff_base_s: 5,
    spawn_backoff_max_s: 300,
    rate_limit_cooldown_s: 60,
  },
  agent: {
    max_turns: 30,
    idle_log_age_threshold_s: 180,
    stall_threshold_s: 120,
    heartbeat_interval_s: 30,
    kill_grace_s: 10,
    // Node-based CLIs take 1–3 s to print --help on a loaded 2-core machine.
    probe_timeout_s: 30,
  },
  slo: {
    error_budget_min_failures: 3,
  },
  gates: {
    timeout_s: 600,
  },
  server: {
    port: 0,
    max_body_bytes: 1024 * 1024,
    client_connect_attempts: 6,
    client_retry_base_ms: 100,
    hold_default_ttl_s: 600,
    hold_max_ttl_s: 86400,
    max_connections: 512,
    idle_timeout_s: 60,
    request_timeout_s: 30,
    max_json_depth: 64,
  },
  tasks: {
    default_priority: 2,
    default_max_retries: 2,
    jsonl_compact_min_records: 10000,
  },
  storage: {
    connect_timeout_s: 5,
    statement_timeout_s: 10,
    pool_size: 4,
    claim_lock_ttl_s: 5,
  },
};

/** Task scopes, smallest first. */
export type Scope = keyof OrchestratorTuning["scope_runtime_s"];

/** An agent's wall-clock deadline for a scope: the bucket, raised to the runtime floor. */
export function agentDeadlineSeconds(tuning: Tuning, scope: Scope): number {
  return Math.max(
    tuning.orchestrator.scope_runtime_s[scope],
    tuning.orchestrator.max_agent_runtime_s,
  );
}
