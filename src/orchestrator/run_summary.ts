/**
 * The end-of-run record: `summary.json` (how the run ended, its health, tasks by status,
 * merges, refusals, kept branches, cost by adapter and model, each attempt's provider and
 * model, the scorecard) and
 * `decisions.json` (every non-trivial scheduling tick, for replay), under
 * `.sdd/runs/<run-id>/`.
 */
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import { runDir, runFile, writeFileAtomic } from "../io/mod.ts";
import { DEAD_END_STATUSES, type Task } from "../tasks/mod.ts";
import type { ChannelTally } from "../notify/mod.ts";
import type { RunCheckpointRecord } from "./checkpoints.ts";
import type { CostRow, PolicyTally, RunEnd, RunOutcome } from "./outcome.ts";
import { isSkipped } from "./scheduler.ts";

/** End-of-run report (`.sdd/runs/<run-id>/summary.json`). */
export interface RunSummary {
  /** Run id. */
  run_id: string;
  /** How it ended. */
  end: RunEnd;
  /**
   * HEALTHY only when every task merged (or had nothing to merge, or was skipped) and nothing
   * was refused — a failure a recovery step recovered from aside.
   */
  health: "HEALTHY" | "UNHEALTHY";
  /** In words. */
  reason: string;
  /** Branch merges went into. */
  branch: string;
  /** Tasks by status (`skipped`: a recovery step whose condition did not hold, and its dependents). */
  tasks: Record<string, number>;
  /** Failed tasks a recovery step recovered from (they do not make the run unhealthy). */
  recovered: string[];
  /** Merged tasks. */
  merges: RunOutcome["merges"];
  /** Refused merges. */
  refused_merges: RunOutcome["refused"];
  /** Branches kept with the work of failed tasks. */
  kept_branches: RunOutcome["keptBranches"];
  /** Cost by adapter and model (USD where reported). */
  cost: { total_usd: number; by_adapter_model: CostTotal[] };
  /**
   * Every agent run in the order they ended: task, session, adapter, model, the provider that
   * served it (an endpoint profile and its URL, or the CLI's own), the agent's verdict, cost.
   */
  attempts: CostRow[];
  /** Scorecard file and digest. */
  scorecard: { path: string; sha256: string; outcome: JsonValue };
  /** The signed checkpoints covering the run's end, one per log (FORMATS.md §8). */
  checkpoints: RunCheckpointRecord[];
  /** Tool-call policy: on or off, adapters without a hook, decisions by action and task. */
  policy: PolicyTally & { enabled: boolean; unenforced_adapters: string[] };
  /** Notifications per channel: where they went, delivered, failed, dropped. */
  notifications: ChannelTally[];
  /** Summary file path. */
  path: string;
  /** The isolation in force and each agent's (`{requested, in_force, backend, reason, agents}`). */
  isolation?: IsolationSummary;
}

/** The isolation in force for a run and each agent's record (`summary.json` `isolation`). */
export interface IsolationSummary {
  /** What the configuration or `--isolation` asked for. */
  requested: string;
  /** What is in force: `sandbox` or `none`. */
  in_force: string;
  /** The sandbox backend, or null. */
  backend: string | null;
  /** Why the sandbox is not used, or null. */
  reason: string | null;
  /** Each agent session's isolation record (null when it recorded none). */
  agents: JsonObject;
}

/** The scorecard as written by the ledger. */
export interface ScorecardRef {
  /** File. */
  path: string;
  /** Its hex SHA-256. */
  sha256: string;
  /** Its content. */
  content: JsonObject;
}

/** Cost summed over one adapter and model. */
export interface CostTotal {
  adapter: string;
  model: string;
  runs: number;
  cost_usd: number | null;
  tokens: number | null;
  turns: number | null;
}

/** Cost rows summed by adapter and model. */
function costByAdapterModel(outcome: RunOutcome): CostTotal[] {
  const costs = new Map<string, CostTotal>();
  for (const c of outcome.costs) {
    const key = `${c.adapter}\0${c.model}`;
    const row = costs.get(key) ??
      { adapter: c.adapter, model: c.model, runs: 0, cost_usd: null, tokens: null, turns: null };
    row.runs++;
    if (c.cost_usd !== null) row.cost_usd = (row.cost_usd ?? 0) + c.cost_usd;
    if (c.tokens !== null) row.tokens = (row.tokens ?? 0) + c.tokens;
    if (c.turns !== null) row.turns = (row.turns ?? 0) + c.turns;
    costs.set(key, row);
  }
  return [...costs.values()];
}

// A run is unhealthy while any task ended here: it will not merge by itself (a task left
// `planned` was never opened, so its work was never done).
const UNHEALTHY: ReadonlySet<string> = new Set([...DEAD_END_STATUSES, "blocked", "planned"]);

/**
 * Failed tasks a recovery step recovered from: the upstream of a routed recovery step (one that
 * carries a receipt) that closed.
 */
export function recoveredTasks(tasks: readonly Task[]): string[] {
  const out = new Set<string>();
  for (const t of tasks) {
    const c = t.metadata.condition as { on?: unknown } | undefined;
    if (t.status !== "closed" || typeof t.metadata.recovery_receipt_hash !== "string") continue;
    for (const id of Array.isArray(c?.on) ? c.on : []) {
      if (tasks.some((u) => u.id === id && u.status === "failed")) out.add(String(id));
    }
  }
  return [...out].sort();
}

/** A task's status as the summary counts it: a skipped step is its own count. */
function summaryStatus(t: Task): string {
  return isSkipped(t) ? "skipped" : t.status;
}

/**
 * HEALTHY only when the run ended quiescent, nothing was refused and no task is stuck (a
 * failure a recovery step recovered from does not count).
 */
export function runHealth(outcome: RunOutcome, tasks: readonly Task[]): "HEALTHY" | "UNHEALTHY" {
  const recovered = new Set(recoveredTasks(tasks));
  const failed = tasks.filter((t) => UNHEALTHY.has(summaryStatus(t)) && !recovered.has(t.id));
  const refused = outcome.refused.filter((r) => !recovered.has(r.task_id));
  const healthy = outcome.end === "quiescent" && refused.length === 0 && failed.length === 0;
  return healthy ? "HEALTHY" : "UNHEALTHY";
}

/** The summary of a finished run. */
export function buildSummary(
  run: { runId: string; branch: string; sdd: string },
  outcome: RunOutcome,
  tasks: readonly Task[],
  scorecard: ScorecardRef,
  checkpoints: readonly RunCheckpointRecord[] = [],
  policy: { enabled: boolean; unenforced: readonly string[] } = { enabled: false, unenforced: [] },
  notifications: readonly ChannelTally[] = [],
): RunSummary {
  const byStatus: Record<string, number> = {};
  // A skipped step (its condition did not hold) is its own count, not a cancellation.
  for (const t of tasks) byStatus[summaryStatus(t)] = (byStatus[summaryStatus(t)] ?? 0) + 1;
  const costs = costByAdapterModel(outcome);
  const totalUsd = costs.reduce((sum, r) => sum + (r.cost_usd ?? 0), 0);
  const recovered = new Set(recoveredTasks(tasks));
  return {
    run_id: run.runId,
    end: outcome.end,
    health: runHealth(outcome, tasks),
    reason: outcome.reason,
    branch: run.branch,
    tasks: { total: tasks.length, ...byStatus },
    recovered: [...recovered],
    merges: outcome.merges,
    refused_merges: outcome.refused,
    kept_branches: outcome.keptBranches,
    cost: {
      total_usd: Math.round(totalUsd * 1e6) / 1e6,
      by_adapter_model: costs,
    },
    attempts: outcome.costs.map((c) => ({ ...c })),
    scorecard: {
      path: scorecard.path,
      sha256: scorecard.sha256,
      outcome: scorecard.content.outcome ?? null,
    },
    checkpoints: [...checkpoints],
    policy: {
      enabled: policy.enabled,
      unenforced_adapters: [...policy.unenforced],
      decisions: outcome.policy.decisions,
      allow: outcome.policy.allow,
      deny: outcome.policy.deny,
      ask: outcome.policy.ask,
      by_task: outcome.policy.by_task,
    },
    notifications: notifications.map((n) => ({ ...n })),
    path: runFile(run.sdd, run.runId, "summary"),
  };
}

/** Attempts the closing summary shows; the rest are counted (all are in summary.json). */
export const SHOWN_ATTEMPTS = 20;

/**
 * The closing summary's attempt lines: task, adapter/model, provider, the agent's verdict.
 *
 * @example
 * ```ts
 * attemptLines([{ task_id: "t1", adapter: "codex", model: "gpt-5", provider: "codex (its own provider)", ok: true }]);
 * // ["t1: codex/gpt-5 on codex (its own provider) — agent ok"]
 * ```
 */
export function attemptLines(
  attempts: readonly Pick<CostRow, "task_id" | "adapter" | "model" | "provider" | "ok">[],
): string[] {
  const lines = attempts.slice(0, SHOWN_ATTEMPTS).map((a) =>
    `${a.task_id}: ${a.adapter}/${a.model} on ${a.provider} — ${a.ok ? "agent ok" : "agent failed"}`
  );
  if (attempts.length > SHOWN_ATTEMPTS) {
    lines.push(`… ${attempts.length - SHOWN_ATTEMPTS} more in summary.json`);
  }
  return lines;
}

/** Writes `summary.json` and `decisions.json` of the run. */
export async function writeRunRecord(
  sdd: string,
  summary: RunSummary,
  decisions: readonly unknown[],
): Promise<void> {
  await Deno.mkdir(runDir(sdd, summary.run_id), { recursive: true });
  await writeFileAtomic(summary.path, JSON.stringify(summary, null, 2) + "\n");
  await writeFileAtomic(
    runFile(sdd, summary.run_id, "decisions"),
    JSON.stringify(decisions) + "\n",
  );
}
