/**
 * Every tunable number in one place, with its default and why it has that value. Each is
 * overridable under `tuning:` in any config layer (e.g. `tuning.agent.max_turns: 50`); what
 * each one means is described once, in the schema (schema.ts, `TuningSchema`).
 */
import type { Tuning } from "./schema.ts";

export type { Tuning };

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
    // The design's self-extension: 600 s per cycle, up to 5400 s in all.
    deadline_extension_s: 600,
    deadline_max_s: 5400,
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
    // Long enough for one claim transaction, short enough that a claimer killed mid-claim
    // frees the task at once (the claim itself lives in PostgreSQL).
    claim_lock_ttl_s: 5,
  },
  workers: {
    poll_wait_s: 20,
    // A worker picks an assignment up within one poll; longer means it is gone or cut off.
    start_timeout_s: 30,
    sign_timeout_s: 60,
  },
  checkpoints: {
    // One Ed25519 signature and 1,000 leaf hashes: well under a millisecond per entry.
    every_entries: 1000,
  },
  notify: {
    timeout_s: 10,
    // 1 + 2 + 4 + 8 s between five attempts: a webhook receiver restarting is waited out.
    max_attempts: 5,
    backoff_base_s: 1,
    backoff_max_s: 60,
    queue_size: 100,
    drain_timeout_s: 30,
  },
  github: {
    max_issues: 500,
    request_timeout_s: 30,
    max_rate_wait_s: 300,
  },
  policy: {
    // Long enough for an operator to notice a parked call; a parked agent still counts
    // against its own deadline.
    approval_timeout_s: 300,
    hook_timeout_s: 30,
    max_rule_file_bytes: 1024 * 1024,
    max_hook_input_bytes: 1024 * 1024,
  },
  providers: {
    // A month: engines and quantisations change under an endpoint; re-certify regularly.
    receipt_max_age_days: 30,
    request_timeout_s: 120,
    latency_requests: 5,
    // 32k tokens: what merge-critical work on a real repository needs at least.
    context_probe_max_tokens: 32768,
    // A models list or a HEAD answers in milliseconds; a server silent for 5 s is not healthy.
    probe_timeout_s: 5,
  },
};

/** Task scopes, smallest first. */
export type Scope = keyof Tuning["orchestrator"]["scope_runtime_s"];

/**
 * The longest an agent of a scope may run with every extension: the hard backstop of its
 * process (the run's liveness check enforces the extensible deadline before it).
 */
export function agentDeadlineCapSeconds(tuning: Tuning, scope: Scope): number {
  return Math.max(agentDeadlineSeconds(tuning, scope), tuning.orchestrator.deadline_max_s);
}

/** The scope of a goal's manager task: its deadline is this scope's. */
export const MANAGER_SCOPE: Scope = "small";

/** An agent's wall-clock deadline for a scope: the bucket, raised to the runtime floor. */
export function agentDeadlineSeconds(tuning: Tuning, scope: Scope): number {
  return Math.max(
    tuning.orchestrator.scope_runtime_s[scope],
    tuning.orchestrator.max_agent_runtime_s,
  );
}
