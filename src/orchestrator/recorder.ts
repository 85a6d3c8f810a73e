/**
 * The recorder: the one place a fact of the run becomes its records. Each domain fact (an
 * agent spawned, a gate failed, a merge landed, a task retried …) maps, by the pure
 * `recordsOf`, to at most one audit event (the HMAC chain), one work-ledger row, one progress
 * event (live view, `--json` stream) and, for a refused merge, one line of
 * `refused_merges.jsonl`. `Recorder.record` writes them and then tells its subscribers: the
 * event seam for notifications, dashboards and the run's own outcome tally. Task status
 * changes are not facts here: the task store records those itself.
 */
import type { AuditEventInput, AuditSink } from "../audit/mod.ts";
import type { SecretRedactor } from "../io/mod.ts";
import { type JsonObject, jsonValueOf } from "../canonical/mod.ts";
import type { LedgerEntryInput } from "../ledger/mod.ts";
import type { Delivery } from "../notify/mod.ts";
import type { PolicyCounts, PolicyDecision } from "../policy/mod.ts";
import type { RouteDecision } from "../providers/mod.ts";
import type { PlanningSource } from "./current_run.ts";
import type { AgentExit } from "./executor.ts";
import type { GateResult } from "./gates.ts";
import type { RunEvent, RunReporter } from "./reporter.ts";
import type { RunEnd, RunOutcome } from "./outcome.ts";
import { recordRefusedMerge, type RefusedMerge } from "./run_state.ts";

/** Something that happened in a run, worth recording. */
export type RunFact =
  | {
    kind: "run.started";
    runId: string;
    branch: string;
    attempt: number;
    source: PlanningSource;
    sourceKind: string;
    host: string;
    maxAgents: number;
  }
  | {
    kind: "run.resumed";
    runId: string;
    branch: string;
    /** The branch the run was started on (the ledger's). */
    runBranch: string;
    attempt: number;
    source: PlanningSource;
    host: string;
    /** Tasks still to do (not closed, failed or cancelled) after recovery. */
    open: number;
  }
  | { kind: "task.scheduled"; taskId: string; title: string; role: string }
  | { kind: "run.planned"; runId: string; tasks: number; source: string; branch: string }
  | { kind: "run.recovered"; runId: string; open: number }
  | { kind: "run.finished"; runId: string; end: RunEnd; reason: string }
  | { kind: "warning"; message: string }
  | { kind: "task.claimed"; taskId: string; session: string; attempt: number; adapter: string }
  | {
    kind: "agent.spawned";
    taskId: string;
    session: string;
    adapter: string;
    model: string | null;
    /** Which provider serves it (an endpoint profile, or the CLI's own). */
    provider?: string;
    attempt: number;
    pid: number;
    argv0: string;
    promptChannel: string;
    attachmentDigests: readonly string[];
    notes: readonly string[];
    /** The worker host it runs on (absent: this host). */
    worker?: string;
    /** How the agent was isolated: `{isolation: "none"}` or the sandbox's record. */
    isolation: JsonObject;
  }
  | {
    kind: "agent.spawn_failed";
    taskId: string;
    session: string;
    reason: string;
    failures: number;
  }
  | {
    kind: "agent.exited";
    taskId: string;
    session: string;
    adapter: string;
    model: string | null;
    /** Who served it (absent: not recorded, a session from before providers were). */
    provider?: string;
    exit: AgentExit;
    /** The worker host it ran on (absent: this host). */
    worker?: string;
  }
  | { kind: "agent.stalled"; taskId: string; session: string; silentS: number }
  | { kind: "agent.idle"; taskId: string; session: string; idleS: number }
  | { kind: "agent.deadline_extended"; taskId: string; session: string; fromS: number; toS: number }
  | { kind: "agent.leftover_ended"; taskId: string; session: string; pid: number }
  | { kind: "agent.start_aborted"; taskId: string; session: string; pid: number; reason: string }
  | {
    kind: "claim.expired";
    taskId: string;
    session: string;
    /** Worker host of the session (null: this host). */
    host: string | null;
    timeoutS: number;
  }
  | { kind: "claim.lost"; taskId: string; session: string; holder: string | null }
  | {
    kind: "config.reloaded";
    oldHash: string;
    newHash: string;
    applied: readonly string[];
    pending: readonly string[];
  }
  | { kind: "config.reload_refused"; code: string; message: string; location: string | null }
  | {
    kind: "network.refused";
    session: string;
    method: string;
    target: string;
    reason: string;
  }
  | { kind: "git.state_restored"; changes: string[]; when: string }
  | { kind: "task.done"; taskId: string; summary: string }
  | {
    kind: "task.failed";
    taskId: string;
    /** The ledger's name for the failure (`agent-failed`, `deadline`, `gate-failed` …). */
    code: string;
    /** The ledger's detail. */
    detail: string;
    /** The progress line's reason. */
    message: string;
    /** Present for a failed attempt: its cost, and its usage goes into the ledger row. */
    cost?: { usd: number | null };
    /** The task stays failed: no retry follows (notifications tell people only about these). */
    final?: boolean;
  }
  | { kind: "task.ended"; taskId: string; status: string; reason: string }
  | {
    kind: "task.routed";
    taskId: string;
    /** The failing (upstream) task the receipt is about. */
    source: string;
    sourceStatus: string;
    condition: string;
    /** The spine entry hash (`sha256:<hex>`): `metadata.recovery_receipt_hash`. */
    receiptHash: string;
    /** The receipt file, relative to the project root. */
    receipt: string;
  }
  | { kind: "task.skipped"; taskId: string; reason: string }
  | { kind: "task.retry"; taskId: string; attempt: number; delayS: number; rateLimited: boolean }
  | {
    kind: "model.escalated";
    taskId: string;
    /** Ladder rung of the failed attempt (0 = the role's own model). */
    fromStep: number;
    /** Rung of the next attempt. */
    toStep: number;
    /** The failure code that is the evidence (gate-failed, signals-unmet, max-turns, …). */
    evidence: string;
    /** The failure's first line. */
    detail: string;
  }
  | {
    kind: "routing.receipt";
    taskId: string;
    /** The decision (src/providers `decideRoute`), hash included. */
    decision: RouteDecision;
  }
  | { kind: "task.abandoned"; taskId: string; reason: string; detail?: string }
  | { kind: "gate.result"; taskId: string; session: string; gate: GateResult }
  | { kind: "gate.failed"; taskId: string; gate: string; reason: string }
  | { kind: "task.unchanged"; taskId: string; costUsd: number | null }
  | {
    kind: "merge.completed";
    taskId: string;
    session: string;
    branch: string;
    sha: string;
    files: string[];
    costUsd: number | null;
  }
  | { kind: "merge.refused"; refused: RefusedMerge }
  | { kind: "branch.kept"; taskId: string; branch: string; reason: string }
  | {
    kind: "run.manager_stalled";
    runId: string;
    report: JsonObject;
    aliveS: number;
    diagnostic: string;
  }
  | {
    kind: "run.stop_requested";
    runId: string;
    reason: string;
    force: boolean;
    running: number;
    /** Who asked: the operator, or the run itself (a spent error budget). */
    by?: "operator" | "orchestrator";
  }
  | {
    /** A stop went on without work that did not settle within its bound (stopping.ts). */
    kind: "run.stop_unsettled";
    runId: string;
    /** What was left: "agent watches and checks", "merges in progress". */
    what: string;
    /** How long the stop waited for it (s). */
    waitedS: number;
  }
  | {
    kind: "run.error_budget_spent";
    runId: string;
    finished: number;
    failed: number;
    budget: number;
    minFailures: number;
    reason: string;
  }
  | { kind: "run.backstop"; runId: string; reason: string; tasks: string[] }
  | {
    kind: "policy.decision";
    taskId: string;
    session: string;
    adapter: string;
    /** Tool name as the CLI sent it, and its family. */
    tool: string;
    family: string;
    /** `sha256:` of the canonical tool input. */
    inputSha256: string;
    toolUseId: string | null;
    decision: PolicyDecision;
    /** The approval of a parked call (its ask, and its outcome). */
    approval: { id: string; status: string; resolvedBy: string | null } | null;
  }
  | {
    kind: "policy.started";
    runId: string;
    enabled: boolean;
    /** Rules in force. */
    rules: number;
    /** Rule file problems, `location: message`. */
    problems: string[];
    /** Adapters of the run whose agents get no pre-tool hook. */
    unenforced: string[];
  }
  | {
    kind: "notify.started";
    /** Channels in use: name, where they go (printable), their events. */
    channels: { name: string; target: string; events: string[] }[];
    /** Configured channels that are off, and why. */
    off: string[];
  }
  | {
    kind: "notify.delivery";
    /** Where the channel goes (printable, never a secret). */
    target: string;
    delivery: Delivery;
  }
  | {
    kind: "policy.parked";
    taskId: string;
    session: string;
    approvalId: string;
    summary: string;
    timeoutS: number;
  };

/** The records of one fact. */
export interface FactRecords {
  /** Audit event (HMAC chain). */
  audit?: AuditEventInput;
  /** Work-ledger row. */
  ledger?: LedgerEntryInput;
  /** Progress event (live view, `--json`). */
  progress?: RunEvent;
  /** Line of `refused_merges.jsonl`. */
  refusedMerge?: RefusedMerge;
}

/** Usage of a task's last agent run (turns, tokens), carried into its ledger rows. */
export type TaskUsage = JsonObject;

function orchestratorEvent(
  event_type: string,
  resource_type: string,
  resource_id: string,
  details: JsonObject,
): AuditEventInput {
  return { actor: "orchestrator", event_type, resource_type, resource_id, details };
}

function warning(message: string): RunEvent {
  return { type: "run.warning", message };
}

/** A routing decision: the audit chain's `routing.receipt`, and one progress line. */
function routingRecords(fact: Extract<RunFact, { kind: "routing.receipt" }>): FactRecords {
  const d = fact.decision;
  const chosen = d.chosen === null ? null : d.chain[d.chosen];
  return {
    audit: orchestratorEvent("routing.receipt", "task", fact.taskId, {
      role: d.role,
      chain_name: d.chain_name,
      chain: d.chain.map((e) => ({
        adapter: e.adapter,
        model: e.model ?? null,
        conformance: e.conformance,
        endpoint: e.endpoint ?? null,
      })),
      probes: d.probes.map((p) => ({
        status: p.status,
        healthy: p.healthy,
        kind: p.kind,
        detail: p.detail,
        ms: p.ms,
      })),
      excluded: d.excluded,
      chosen: d.chosen,
      reason: d.reason,
      decision_hash: d.hash,
    }),
    progress: d.reason === "primary_healthy" ? undefined : {
      type: "provider.routed",
      task_id: fact.taskId,
      role: d.role,
      reason: d.reason,
      adapter: chosen?.adapter ?? null,
      model: chosen?.model ?? null,
    },
  };
}

/** The records of a run-level fact (start, resume, plan, end). */
function runRecords(fact: RunFact): FactRecords | undefined {
  switch (fact.kind) {
    case "run.started":
      return {
        audit: orchestratorEvent("run.started", "run", fact.runId, {
          branch: fact.branch,
          attempt: fact.attempt,
          source: jsonValueOf(fact.source),
        }),
        ledger: {
          kind: "run.open",
          payload: {
            branch: fact.branch,
            host: fact.host,
            source: fact.sourceKind,
            max_agents: fact.maxAgents,
          },
        },
      };
    case "run.resumed":
      return {
        audit: orchestratorEvent("run.resumed", "run", fact.runId, {
          branch: fact.branch,
          attempt: fact.attempt,
          source: jsonValueOf(fact.source),
          open: fact.open,
        }),
        ledger: {
          kind: "run.resumed",
          payload: {
            attempt: fact.attempt,
            host: fact.host,
            branch: fact.runBranch,
            open: fact.open,
          },
        },
        progress: {
          type: "run.resumed",
          run_id: fact.runId,
          attempt: fact.attempt,
          open: fact.open,
        },
      };
    case "task.scheduled":
      return {
        ledger: {
          kind: "task.scheduled",
          task_id: fact.taskId,
          payload: { title: fact.title, role: fact.role },
        },
      };
    case "run.planned":
      return {
        progress: {
          type: "run.started",
          run_id: fact.runId,
          tasks: fact.tasks,
          source: fact.source,
          branch: fact.branch,
        },
      };
    case "run.recovered":
      return { progress: { type: "run.recovered", run_id: fact.runId, open: fact.open } };
    case "run.finished":
      return {
        ledger: { kind: "run.closed", payload: { reason: fact.end, detail: fact.reason } },
        audit: orchestratorEvent("run.finished", "run", fact.runId, {
          end: fact.end,
          reason: fact.reason,
        }),
      };
    default:
      return undefined;
  }
}

/** The records of an agent's start: its audit event, the ledger's task.started, the live view. */
function spawnedRecords(fact: Extract<RunFact, { kind: "agent.spawned" }>): FactRecords {
  return {
    audit: orchestratorEvent("agent.spawned", "agent", fact.session, {
      task_id: fact.taskId,
      adapter: fact.adapter,
      model: fact.model,
      ...(fact.provider === undefined ? {} : { provider: fact.provider }),
      pid: fact.pid,
      argv0: fact.argv0,
      prompt_channel: fact.promptChannel,
      attachment_digests: [...fact.attachmentDigests],
      // What the adapter could not honour or chose (root permission mode, ignored effort).
      notes: [...fact.notes],
      ...(fact.worker === undefined ? {} : { worker: fact.worker }),
      isolation: fact.isolation,
    }),
    ledger: {
      kind: "task.started",
      task_id: fact.taskId,
      payload: {
        session: fact.session,
        adapter: fact.adapter,
        model: fact.model,
        ...(fact.provider === undefined ? {} : { provider: fact.provider }),
        attempt: fact.attempt,
      },
    },
    progress: {
      type: "task.spawned",
      task_id: fact.taskId,
      session: fact.session,
      adapter: fact.adapter,
      model: fact.model,
      ...(fact.provider === undefined ? {} : { provider: fact.provider }),
      attempt: fact.attempt,
      ...(fact.worker === undefined ? {} : { worker: fact.worker }),
    },
  };
}

/** The records of an agent's life: claimed, spawned (or not), exited. */
function agentRecords(fact: RunFact): FactRecords | undefined {
  switch (fact.kind) {
    case "task.claimed":
      return {
        audit: orchestratorEvent("scheduler.claim", "task", fact.taskId, {
          session: fact.session,
          attempt: fact.attempt,
          adapter: fact.adapter,
        }),
      };
    case "agent.spawned":
      return spawnedRecords(fact);
    case "agent.spawn_failed":
      return {
        audit: orchestratorEvent("agent.spawn_failed", "task", fact.taskId, {
          session: fact.session,
          reason: fact.reason,
          failures: fact.failures,
        }),
      };
    case "agent.exited": {
      const { result, timedOut, signal } = fact.exit;
      return {
        audit: orchestratorEvent("agent.exited", "agent", fact.session, {
          task_id: fact.taskId,
          exit_code: result.exit_code,
          signal,
          timed_out: timedOut,
          ok: result.ok,
          turns: result.turns,
          cost_usd: result.cost_usd,
          tokens_in: result.tokens?.input ?? null,
          tokens_out: result.tokens?.output ?? null,
          subtype: result.subtype,
          error: result.error,
          ...(fact.worker === undefined ? {} : { worker: fact.worker }),
        }),
      };
    }
    default:
      return undefined;
  }
}

/** The records of what the watchdogs saw: leftover agents, deadlines, idle and stalled agents, claims. */
function agentWatchRecords(fact: RunFact): FactRecords | undefined {
  switch (fact.kind) {
    case "agent.start_aborted":
      return {
        audit: orchestratorEvent("agent.start_aborted", "agent", fact.session, {
          task_id: fact.taskId,
          pid: fact.pid,
          reason: fact.reason,
        }),
        progress: warning(
          `${fact.taskId}: agent ${fact.session} (pid ${fact.pid}) started but its start could ` +
            `not be recorded (${fact.reason}); stopping it`,
        ),
      };
    case "agent.leftover_ended":
      return {
        audit: orchestratorEvent("agent.leftover_ended", "agent", fact.session, {
          task_id: fact.taskId,
          pid: fact.pid,
          reason: "left running by an orchestrator that died",
        }),
        progress: warning(
          `${fact.taskId}: agent ${fact.session} (pid ${fact.pid}) was left running by a dead ` +
            "run; ended it",
        ),
      };
    case "agent.deadline_extended":
      return {
        audit: orchestratorEvent("agent.deadline_extended", "agent", fact.session, {
          task_id: fact.taskId,
          from_s: fact.fromS,
          to_s: fact.toS,
        }),
        progress: {
          type: "agent.deadline_extended",
          task_id: fact.taskId,
          session: fact.session,
          deadline_s: fact.toS,
        },
      };
    case "agent.idle":
      return {
        audit: orchestratorEvent("agent.idle", "agent", fact.session, {
          task_id: fact.taskId,
          idle_s: fact.idleS,
        }),
        progress: warning(
          `${fact.taskId}: agent ${fact.session} is idle (its log has not grown for ` +
            `${fact.idleS}s, tuning.agent.idle_log_age_threshold_s)`,
        ),
      };
    case "agent.stalled":
      return {
        audit: orchestratorEvent("agent.stalled", "agent", fact.session, {
          task_id: fact.taskId,
          silent_s: fact.silentS,
        }),
        progress: warning(
          `${fact.taskId}: agent ${fact.session} stalled (no output or heartbeat for ${fact.silentS}s); stopping it`,
        ),
      };
    case "claim.expired":
      return {
        progress: warning(
          `${fact.taskId}: the claim of ${fact.session}${
            fact.host === null ? "" : ` on worker ${fact.host}`
          } expired (no heartbeat for ${fact.timeoutS}s); the task runs again`,
        ),
      };
    case "claim.lost":
      return {
        progress: warning(
          `${fact.taskId}: ${fact.session} exited after losing its claim${
            fact.holder === null ? "" : ` (now held by ${fact.holder})`
          }; its result is not used`,
        ),
      };
    default:
      return undefined;
  }
}

/** The records of a change around the agents: configuration reloads, refused connections, git state. */
function environmentRecords(fact: RunFact): FactRecords | undefined {
  switch (fact.kind) {
    case "config.reloaded":
      return {
        audit: orchestratorEvent("config.reloaded", "config", fact.newHash, {
          old_hash: fact.oldHash,
          new_hash: fact.newHash,
          applied: [...fact.applied],
          pending: [...fact.pending],
        }),
        progress: {
          type: "config.reloaded",
          applied: [...fact.applied],
          pending: [...fact.pending],
        },
      };
    case "config.reload_refused":
      return {
        audit: orchestratorEvent("config.reload_refused", "config", "effective", {
          code: fact.code,
          message: fact.message,
          location: fact.location,
        }),
        progress: warning(
          `configuration edit refused, the running configuration is kept: ${
            fact.location ? fact.location + ": " : ""
          }${fact.message}`,
        ),
      };
    case "network.refused":
      return {
        audit: orchestratorEvent("network.refused", "agent", fact.session, {
          method: fact.method,
          target: fact.target,
          reason: fact.reason,
        }),
        progress: warning(
          `agent ${fact.session}: connection to ${fact.target} refused (${fact.reason})`,
        ),
      };
    case "git.state_restored":
      return {
        audit: orchestratorEvent("git.state_restored", "repository", ".git", {
          changes: [...fact.changes],
          when: fact.when,
        }),
        progress: warning(
          `the repository's git state changed during the run and was restored: ${
            fact.changes.join(", ")
          }`,
        ),
      };
    default:
      return undefined;
  }
}

/** The records of a task outcome (done, failed, retried, abandoned). */
function taskRecords(fact: RunFact, usage: TaskUsage | undefined): FactRecords | undefined {
  switch (fact.kind) {
    case "task.done":
      return { progress: { type: "task.done", task_id: fact.taskId, summary: fact.summary } };
    case "task.failed":
      return {
        ledger: {
          kind: "task.failed",
          task_id: fact.taskId,
          payload: fact.cost === undefined
            ? { reason: fact.code, detail: fact.detail }
            : { reason: fact.code, detail: fact.detail, cost_usd: fact.cost.usd, ...usage },
        },
        progress: { type: "task.failed", task_id: fact.taskId, reason: fact.message },
      };
    case "task.routed":
      return {
        audit: orchestratorEvent("task.routed", "task", fact.taskId, {
          source_task: fact.source,
          source_status: fact.sourceStatus,
          condition: fact.condition,
          recovery_receipt_hash: fact.receiptHash,
          receipt: fact.receipt,
        }),
        progress: {
          type: "task.routed",
          task_id: fact.taskId,
          source_task: fact.source,
          source_status: fact.sourceStatus,
          condition: fact.condition,
          receipt_hash: fact.receiptHash,
        },
      };
    case "task.skipped":
      return {
        audit: orchestratorEvent("task.skipped", "task", fact.taskId, { reason: fact.reason }),
        progress: { type: "task.skipped", task_id: fact.taskId, reason: fact.reason },
      };
    case "task.ended":
      return {
        progress: {
          type: "task.failed",
          task_id: fact.taskId,
          reason: `${fact.status}: ${fact.reason}`,
        },
      };
    case "model.escalated":
      return {
        audit: orchestratorEvent("model.escalated", "task", fact.taskId, {
          from_step: fact.fromStep,
          to_step: fact.toStep,
          evidence: fact.evidence,
          detail: fact.detail,
        }),
        progress: {
          type: "model.escalated",
          task_id: fact.taskId,
          to_step: fact.toStep,
          evidence: fact.evidence,
        },
      };
    case "routing.receipt":
      return routingRecords(fact);
    case "task.retry":
      return {
        progress: {
          type: "task.retry",
          task_id: fact.taskId,
          attempt: fact.attempt,
          delay_s: fact.delayS,
          ...(fact.rateLimited ? { cooldown: "rate-limit" } : {}),
        },
      };
    case "task.abandoned":
      return {
        ledger: {
          kind: "task.abandoned",
          task_id: fact.taskId,
          payload: fact.detail === undefined
            ? { reason: fact.reason }
            : { reason: fact.reason, detail: fact.detail },
        },
      };
    default:
      return undefined;
  }
}

/** The records of a check or merge fact (gates, merges, refusals). */
function mergeRecords(fact: RunFact, usage: TaskUsage | undefined): FactRecords | undefined {
  switch (fact.kind) {
    case "gate.result":
      return {
        audit: orchestratorEvent("gate.result", "task", fact.taskId, {
          gate: fact.gate.gate,
          ok: fact.gate.ok,
          reason: fact.gate.reason,
          session: fact.session,
          output_tail: (fact.gate.output ?? "").slice(-2000),
        }),
      };
    case "gate.failed":
      return {
        progress: {
          type: "gate.failed",
          task_id: fact.taskId,
          gate: fact.gate,
          reason: fact.reason,
        },
      };
    case "task.unchanged":
      return {
        ledger: {
          kind: "task.completed",
          task_id: fact.taskId,
          payload: { merged: false, cost_usd: fact.costUsd, files: 0, ...usage },
        },
        progress: { type: "task.closed", task_id: fact.taskId, reason: "no changes" },
      };
    case "merge.completed":
      return {
        audit: orchestratorEvent("merge.completed", "task", fact.taskId, {
          session: fact.session,
          branch: fact.branch,
          sha: fact.sha,
          files: fact.files,
        }),
        ledger: {
          kind: "task.completed",
          task_id: fact.taskId,
          payload: {
            merged: true,
            cost_usd: fact.costUsd,
            files: fact.files.length,
            sha: fact.sha,
            ...usage,
          },
        },
        progress: {
          type: "task.merged",
          task_id: fact.taskId,
          files: fact.files.length,
          sha: fact.sha,
        },
      };
    case "merge.refused": {
      const r = fact.refused;
      return {
        refusedMerge: r,
        audit: orchestratorEvent("merge.refused", "task", r.task_id, {
          session: r.session,
          branch: r.branch,
          reason: r.reason,
          detail: r.detail,
        }),
        progress: {
          type: "merge.refused",
          task_id: r.task_id,
          reason: `${r.reason}: ${r.detail}`,
          branch: r.branch,
        },
      };
    }
    default:
      return undefined;
  }
}

/** The records of a stop (manager stall, operator stop, backstop). */
function stopRecords(fact: RunFact): FactRecords | undefined {
  switch (fact.kind) {
    case "run.manager_stalled":
      return {
        audit: orchestratorEvent("run.manager_stalled", "run", fact.runId, fact.report),
        progress: {
          type: "run.stopping",
          reason: `the manager created no task in ${fact.aliveS}s (diagnostic: ${fact.diagnostic})`,
        },
      };
    case "run.stop_requested":
      return {
        audit: {
          actor: fact.by ?? "operator",
          event_type: "run.stop_requested",
          resource_type: "run",
          resource_id: fact.runId,
          details: { reason: fact.reason, force: fact.force, running: fact.running },
        },
        progress: { type: "run.stopping", reason: fact.reason },
      };
    case "run.stop_unsettled":
      return {
        audit: orchestratorEvent("run.stop_unsettled", "run", fact.runId, {
          what: fact.what,
          waited_s: fact.waitedS,
        }),
        progress: warning(
          `stop: ${fact.what} did not settle within ${fact.waitedS}s; the run ends without them ` +
            "(their tasks are abandoned)",
        ),
      };
    case "run.error_budget_spent":
      return {
        audit: orchestratorEvent("run.error_budget_spent", "run", fact.runId, {
          finished: fact.finished,
          failed: fact.failed,
          budget: fact.budget,
          min_failures: fact.minFailures,
        }),
        progress: warning(fact.reason),
      };
    case "run.backstop":
      return {
        audit: orchestratorEvent("run.backstop", "run", fact.runId, {
          reason: fact.reason,
          tasks: fact.tasks,
        }),
        progress: {
          type: "run.stopping",
          reason: `backstop: ${fact.reason}; the goal was not met`,
        },
      };
    default:
      return undefined;
  }
}

/** The records of a tool-call policy fact (a decision, a parked call). */
function policyRecords(fact: RunFact): FactRecords | undefined {
  switch (fact.kind) {
    case "policy.decision": {
      const d = fact.decision;
      const resolvedBy = fact.approval?.status === "pending" ? null : fact.approval?.resolvedBy;
      return {
        audit: {
          actor: resolvedBy ?? "policy",
          event_type: "policy.decision",
          resource_type: "tool_call",
          resource_id: fact.toolUseId ?? fact.inputSha256,
          details: {
            task_id: fact.taskId,
            session: fact.session,
            adapter: fact.adapter,
            tool: fact.tool,
            tool_family: fact.family,
            input_sha256: fact.inputSha256,
            action: d.action,
            decision_reason: d.decisionReason,
            rule_id: d.ruleId ?? null,
            rule_source: d.ruleSource ?? null,
            tier: d.tier ?? null,
            guards: d.guards ?? [],
            message: d.message === undefined ? null : d.message.slice(0, 1000),
            approval_id: fact.approval?.id ?? null,
          },
        },
        ...(d.action === "deny"
          ? {
            progress: {
              type: "policy.denied",
              task_id: fact.taskId,
              tool: fact.tool,
              reason: `${d.decisionReason}${d.ruleId ? ` ${d.ruleId}` : ""}${
                d.message ? `: ${d.message.slice(0, 200)}` : ""
              }`,
            },
          }
          : {}),
      };
    }
    case "policy.started": {
      const parts = fact.enabled
        ? [`${fact.rules} rule(s) from .bernstein/ in force`]
        : ["OFF (policy.enabled: false): no tool call is checked"];
      if (fact.problems.length > 0) {
        parts.push(
          `${fact.problems.length} rule file problem(s); calls they reach are asked about`,
        );
      }
      if (fact.enabled && fact.unenforced.length > 0) {
        parts.push(
          `agents of ${fact.unenforced.join(", ")} run WITHOUT tool-call policy (no pre-tool hook)`,
        );
      }
      return {
        audit: orchestratorEvent("policy.started", "run", fact.runId, {
          enabled: fact.enabled,
          rules: fact.rules,
          problems: fact.problems,
          unenforced_adapters: fact.unenforced,
        }),
        progress: { type: "policy.started", summary: parts.join("; ") },
      };
    }
    case "policy.parked":
      return {
        progress: {
          type: "policy.parked",
          task_id: fact.taskId,
          approval_id: fact.approvalId,
          summary: fact.summary,
          timeout_s: fact.timeoutS,
        },
      };
    default:
      return undefined;
  }
}

/**
 * The records of one fact, as a pure function. `usage` is the task's last agent usage
 * (turns, tokens), added to the ledger rows that close an attempt.
 */
export function recordsOf(fact: RunFact, usage?: TaskUsage): FactRecords {
  if (fact.kind === "warning") return { progress: warning(fact.message) };
  return runRecords(fact) ?? agentRecords(fact) ?? agentWatchRecords(fact) ??
    environmentRecords(fact) ??
    taskRecords(fact, usage) ??
    mergeRecords(fact, usage) ?? stopRecords(fact) ?? policyRecords(fact) ??
    notifyRecords(fact) ?? {};
}

/**
 * The records of a notification fact: the channels in use at the start, and every delivery
 * (an audit event each; a warning on the live view when one failed or was dropped).
 */
function notifyRecords(fact: RunFact): FactRecords | undefined {
  switch (fact.kind) {
    case "notify.started":
      return {
        audit: orchestratorEvent("notify.started", "notification", "channels", {
          channels: fact.channels.map((c) => ({ ...c })),
          off: [...fact.off],
        }),
      };
    case "notify.delivery": {
      const d = fact.delivery;
      const records: FactRecords = {
        audit: orchestratorEvent(`notify.${d.outcome}`, "notification", d.channel, {
          id: d.id,
          event: d.event,
          target: fact.target,
          outcome: d.outcome,
          attempts: d.attempts,
          status: d.status,
          error: d.error,
        }),
      };
      if (d.outcome !== "delivered") {
        const why = [d.status, d.error].filter((x) => x !== null).join(": ");
        records.progress = warning(
          `notification ${d.event} to ${d.channel} ${d.outcome} after ${d.attempts} attempt(s)` +
            (why === "" ? "" : ` (${why})`),
        );
      }
      return records;
    }
    default:
      return undefined;
  }
}

/** Receives each fact after its records are written. */
export type FactListener = (fact: RunFact) => void;

/** Where the recorder writes. */
export interface RecorderOptions {
  /** Audit chain. */
  audit: AuditSink;
  /** Work ledger. */
  ledger: { append(input: LedgerEntryInput): Promise<unknown> };
  /** Live view / event stream. */
  reporter: RunReporter;
  /** `.sdd/` (for `runtime/refused_merges.jsonl`). */
  sdd: string;
  /**
   * The run decides tool calls: the rows that close an attempt carry the task's `policy`
   * counts (cumulative over its attempts).
   */
  policyCounts?: boolean;
  /**
   * The run's redactor: a fact is redacted before anything sees it (records, the live view,
   * subscribers such as notifications), so a minted connection secret an agent echoed in its
   * text never leaves the run.
   */
  redactor?: SecretRedactor;
}

/**
 * Writes each fact's records (audit and ledger together: separate files), then its progress
 * event, then tells subscribers.
 *
 * @example
 * ```ts ignore
 * const recorder = new Recorder({ audit, ledger, reporter, sdd });
 * const off = recorder.on((fact) => { if (fact.kind === "merge.completed") notify(fact); });
 * await recorder.record({ kind: "task.done", taskId: "t1", summary: "added the parser" });
 * off();
 * ```
 */
export class Recorder {
  readonly #options: RecorderOptions;
  readonly #listeners = new Set<FactListener>();
  readonly #usage = new Map<string, TaskUsage>();
  readonly #policy = new Map<string, PolicyCounts>();

  constructor(options: RecorderOptions) {
    this.#options = options;
  }

  /** Subscribes to facts; returns the unsubscriber. */
  on(listener: FactListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Records one fact. */
  async record(raw: RunFact): Promise<void> {
    const redactor = this.#options.redactor;
    const fact = redactor === undefined || redactor.size === 0 ? raw : redactor.json(raw);
    if (fact.kind === "agent.exited") this.#usage.set(fact.taskId, usageOf(fact.exit));
    if (fact.kind === "policy.decision") countDecision(this.#policy, fact);
    const taskId = "taskId" in fact ? fact.taskId : undefined;
    const records = recordsOf(fact, taskId === undefined ? undefined : this.#usageOf(taskId));
    const { audit, ledger, sdd } = this.#options;
    await Promise.all([
      records.refusedMerge && recordRefusedMerge(sdd, records.refusedMerge),
      records.audit && audit.append(records.audit),
      records.ledger && ledger.append(records.ledger),
    ]);
    if (records.progress) this.#options.reporter.event(records.progress);
    for (const listener of this.#listeners) this.#tell(listener, fact);
  }

  /** Usage of a task's last agent run, with its policy counts when the run decides calls. */
  #usageOf(taskId: string): TaskUsage | undefined {
    const usage = this.#usage.get(taskId);
    if (!this.#options.policyCounts) return usage;
    const counts = this.#policy.get(taskId) ?? { decisions: 0, allow: 0, deny: 0, ask: 0 };
    return { ...usage, policy: { ...counts } };
  }

  /** Records a warning (progress only). */
  async warn(message: string): Promise<void> {
    await this.record({ kind: "warning", message });
  }

  #tell(listener: FactListener, fact: RunFact): void {
    try {
      listener(fact);
    } catch (error) {
      // A subscriber (notification, dashboard) never stops the run.
      this.#options.reporter.event(warning(`a run subscriber failed: ${(error as Error).message}`));
    }
  }
}

function countDecision(
  counts: Map<string, PolicyCounts>,
  fact: Extract<RunFact, { kind: "policy.decision" }>,
): void {
  const c = counts.get(fact.taskId) ?? { decisions: 0, allow: 0, deny: 0, ask: 0 };
  c.decisions++;
  c[fact.decision.action]++;
  counts.set(fact.taskId, c);
}

function usageOf(exit: AgentExit): TaskUsage {
  const { result } = exit;
  return {
    turns: result.turns,
    tokens_in: result.tokens?.input ?? null,
    tokens_out: result.tokens?.output ?? null,
  };
}

/** Adds a fact to the run's outcome (merges, refusals, kept branches, costs). */
export function tallyOutcome(outcome: RunOutcome, fact: RunFact): void {
  switch (fact.kind) {
    case "agent.exited": {
      const { result } = fact.exit;
      outcome.costs.push({
        task_id: fact.taskId,
        session: fact.session,
        adapter: fact.adapter,
        model: fact.model ?? "default",
        provider: fact.provider ?? `${fact.adapter} (its own provider)`,
        ok: result.ok,
        cost_usd: result.cost_usd,
        tokens: result.tokens === null ? null : result.tokens.input + result.tokens.output,
        turns: result.turns,
      });
      break;
    }
    case "merge.completed":
      outcome.merges.push({
        task_id: fact.taskId,
        session: fact.session,
        files: fact.files,
        sha: fact.sha,
      });
      break;
    case "merge.refused": {
      const r = fact.refused;
      outcome.refused.push({
        task_id: r.task_id,
        branch: r.branch,
        reason: r.reason,
        detail: r.detail,
      });
      break;
    }
    case "policy.decision": {
      const p = outcome.policy;
      p.decisions++;
      p[fact.decision.action]++;
      const t = p.by_task[fact.taskId] ?? { decisions: 0, allow: 0, deny: 0, ask: 0 };
      t.decisions++;
      t[fact.decision.action]++;
      p.by_task[fact.taskId] = t;
      break;
    }
    case "branch.kept":
      outcome.keptBranches.push({
        task_id: fact.taskId,
        branch: fact.branch,
        reason: fact.reason,
      });
      break;
    default:
      break;
  }
}
