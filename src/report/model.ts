// The run model: one pure function from a run's records to everything the report, the
// dashboard and `runs report --json` show — summary, attempts (with their phases for the
// timeline), cost and tokens per task and per adapter, gates, merges, refused merges,
// attachments, warnings and the task graph.
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import { JsonFloat } from "../canonical/mod.ts";
import type { Task } from "../tasks/mod.ts";
import type { RunEventRecord, RunRecords, RunSourceView, Verification } from "./records.ts";
import { assignLanes } from "./timeline.ts";

/** Version of the JSON shape of {@linkcode RunModel}. */
export const RUN_MODEL_VERSION = 1;

/** How an attempt ended (or that it has not). */
export type AttemptOutcome =
  | "running"
  | "merged"
  | "no-changes"
  | "refused"
  | "failed"
  | "spawn-failed"
  | "interrupted";

/** One phase of an attempt on the timeline. */
export interface AttemptPhase {
  /** `spawn` (claim → process started), `work`, `gate` (commit, signals, gates), `merge`. */
  phase: "spawn" | "work" | "gate" | "merge";
  /** Milliseconds since the run started. */
  start_ms: number;
  /** Milliseconds since the run started. */
  end_ms: number;
}

/** One agent attempt at a task: one claim, at most one process. */
export interface AttemptView {
  /** Session id (also the agent's id). */
  session: string;
  /** Task id. */
  task_id: string;
  /** 1 for the first attempt, n for the (n-1)-th retry. */
  attempt: number;
  /** Adapter. */
  adapter: string;
  /** Model, when one was chosen. */
  model: string | null;
  /** Timeline lane (agent slot), from 0. */
  lane: number;
  /** A retry of an earlier failed attempt. */
  retry: boolean;
  /** Adapter or model changed from the previous attempt of the task (a model ladder step). */
  escalated: boolean;
  /** How it ended. */
  outcome: AttemptOutcome;
  /** Why it failed or was refused, in one line. */
  reason: string | null;
  /** ISO times. */
  claimed_at: string;
  /** When the process started, if it did. */
  spawned_at: string | null;
  /** When the process exited, if it did. */
  exited_at: string | null;
  /** When the attempt ended (merge, refusal, failure), if it did. */
  ended_at: string | null;
  /** Process exit code, when it exited. */
  exit_code: number | null;
  /** Turns reported by the CLI. */
  turns: number | null;
  /** Input tokens reported by the CLI. */
  tokens_in: number | null;
  /** Output tokens reported by the CLI. */
  tokens_out: number | null;
  /** USD reported by the CLI. */
  cost_usd: number | null;
  /** The last progress message the agent reported. */
  last_progress: string | null;
  /** Digests of the attachments its prompt carried. */
  attachment_digests: string[];
  /** Phases for the timeline. */
  phases: AttemptPhase[];
}

/** One task of the run with what its attempts cost. */
export interface TaskView {
  /** Task id. */
  id: string;
  /** Title. */
  title: string;
  /** Role. */
  role: string;
  /** Plan stage, when the task came from a plan. */
  stage: string | null;
  /** Current status. */
  status: string;
  /** Tasks that must merge first. */
  depends_on: string[];
  /** Parent task (a manager's children). */
  parent_task_id: string | null;
  /** Dependency depth (0 = no dependency), the column of the task graph. */
  depth: number;
  /** Attempts made. */
  attempts: number;
  /** Adapter of the last attempt. */
  adapter: string | null;
  /** Model of the last attempt. */
  model: string | null;
  /** Sum over attempts (null when no attempt reported it). */
  cost_usd: number | null;
  /** Sum over attempts. */
  tokens_in: number | null;
  /** Sum over attempts. */
  tokens_out: number | null;
  /** Sum over attempts. */
  turns: number | null;
  /** Merge commit, when merged. */
  merged_sha: string | null;
  /** Files the merge brought in. */
  files: string[];
  /** Why it failed. */
  terminal_reason: string | null;
  /** What the agent said it did. */
  result_summary: string | null;
}

/** Cost and usage of one adapter and model. */
export interface CostRow {
  /** Adapter. */
  adapter: string;
  /** Model (`default` when none was chosen). */
  model: string;
  /** Agent runs that exited. */
  runs: number;
  /** USD, null when never reported. */
  cost_usd: number | null;
  /** Input tokens. */
  tokens_in: number | null;
  /** Output tokens. */
  tokens_out: number | null;
  /** Turns. */
  turns: number | null;
}

/** One quality gate result. */
export interface GateView {
  /** Task id. */
  task_id: string;
  /** Session. */
  session: string | null;
  /** `run_config`, `tests`, `lint`. */
  gate: string;
  /** Passed. */
  ok: boolean;
  /** One line. */
  reason: string;
  /** Tail of the gate's output. */
  output_tail: string;
  /** ISO time. */
  at: string;
}

/** One merge into the run's branch. */
export interface MergeView {
  /** Task id. */
  task_id: string;
  /** Session. */
  session: string | null;
  /** Merge commit. */
  sha: string;
  /** Files it brought in. */
  files: string[];
  /** ISO time. */
  at: string;
}

/** One refused merge: the work stays on its branch. */
export interface RefusedView {
  /** Task id. */
  task_id: string;
  /** Session. */
  session: string | null;
  /** Kept branch. */
  branch: string;
  /** `gate-failed`, `merge-conflict`, `lineage-refused`, `signals-unmet`. */
  reason: string;
  /** Details (gate, files, output tail). */
  detail: string;
  /** ISO time. */
  at: string;
}

/** One attachment handed to an agent. */
export interface AttachmentView {
  /** Session that received it. */
  session: string;
  /** Task of that session, when known. */
  task_id: string | null;
  /** SHA-256 of the attached bytes. */
  sha256: string;
  /** MIME type. */
  mime: string;
  /** Repository path of a text attachment. */
  path: string | null;
  /** ISO time. */
  at: string;
}

/** A notable event: a stall, a failed spawn, a stop, the backstop. */
export interface NoticeView {
  /** ISO time. */
  at: string;
  /** `warning` or `info`. */
  level: "warning" | "info";
  /** One line. */
  message: string;
}

/** Everything shown about one run. Stable JSON (`runs report --json`). */
export interface RunModel {
  /** `bernstein-run-report`. */
  schema: "bernstein-run-report";
  /** {@linkcode RUN_MODEL_VERSION}. */
  version: number;
  /** ISO time the model was built (the report's "as of"). */
  generated_at: string;
  /** The run as a whole. */
  run: {
    run_id: string;
    state: "running" | "finished" | "interrupted";
    /** `HEALTHY`, `UNHEALTHY`, or for an unfinished run what holds so far. */
    health: "HEALTHY" | "UNHEALTHY";
    /** How it ended (`quiescent`, `stopped`, `backstop`, …), null while running. */
    end: string | null;
    /** In words. */
    reason: string;
    branch: string | null;
    goal: string | null;
    source: RunSourceView | null;
    host: string | null;
    started_at: string | null;
    /** When it ended (or the last record of an interrupted run). */
    ended_at: string | null;
    /** Seconds from start to end (or to `generated_at` while running). */
    elapsed_s: number;
    /** Times the run was started (1 + resumes). */
    starts: number;
    max_agents: number | null;
  };
  /** Counts for the headline. */
  counts: {
    tasks: number;
    merged: number;
    refused: number;
    failed: number;
    running: number;
    waiting: number;
    attempts: number;
    by_status: Record<string, number>;
  };
  /** Cost so far. */
  cost: { total_usd: number; reported: boolean; by_adapter: CostRow[] };
  /** Tasks in creation order. */
  tasks: TaskView[];
  /** Attempts in claim order. */
  attempts: AttemptView[];
  /** Lanes of the timeline (agent slots used). */
  lanes: number;
  /** Timeline span in ms from the run's start. */
  span_ms: number;
  gates: GateView[];
  merges: MergeView[];
  refused_merges: RefusedView[];
  attachments: AttachmentView[];
  notices: NoticeView[];
  verification: Verification;
}

/** Options of {@linkcode buildRunModel}. */
export interface BuildRunModelOptions {
  /** The "as of" time (ms since the epoch): running attempts end here on the timeline. */
  nowMs: number;
}

/** A number from a JSON value (integers, floats, integral floats, small bigints). */
export function numberOf(value: JsonValue | undefined): number | null {
  if (typeof value === "number") return Number.isFinite(value) ? value : null;
  if (typeof value === "bigint") return Number(value);
  if (value instanceof JsonFloat) return value.value;
  return null;
}

function textOf(value: JsonValue | undefined): string | null {
  return typeof value === "string" ? value : null;
}

function stringsOf(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/** Milliseconds since the epoch of an audit timestamp (microseconds are cut). */
export function timestampMs(iso: string): number {
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? 0 : ms;
}

function firstLine(text: string, max = 300): string {
  const line = text.split("\n")[0];
  return line.length > max ? line.slice(0, max - 1) + "…" : line;
}

function addNullable(a: number | null, b: number | null): number | null {
  if (b === null) return a;
  return (a ?? 0) + b;
}

/** USD sums to the micro-dollar: float addition must not show `0.30000000000000004`. */
function roundUsd(value: number | null): number | null {
  return value === null ? null : Math.round(value * 1e6) / 1e6;
}

interface MutableAttempt extends AttemptView {
  gatedAt: string | null;
}

const FAILED_STATUSES = new Set(["failed", "cancelled", "orphaned", "blocked"]);
const ACTIVE_STATUSES = new Set(["claimed", "in_progress", "waiting_for_subtasks", "done"]);

/**
 * Builds the run model. Pure: the same records and `nowMs` give the same model.
 *
 * @example
 * ```ts ignore
 * const model = buildRunModel(records, { nowMs: Date.now() });
 * console.log(model.counts.merged, model.attempts.length);
 * ```
 */
export function buildRunModel(records: RunRecords, options: BuildRunModelOptions): RunModel {
  const { header, events } = records;
  const startIso = header.started_at ?? events[0]?.timestamp ?? new Date(options.nowMs)
    .toISOString();
  const startMs = timestampMs(startIso);
  const fold = new RunFold();
  for (const e of events) fold.apply(e);
  const lastEventIso = events.at(-1)?.timestamp ?? startIso;
  const endIso = fold.finished?.timestamp ??
    (header.state === "running" ? new Date(options.nowMs).toISOString() : lastEventIso);
  const endMs = Math.max(startMs, timestampMs(endIso));
  const { attempts, merges, refused } = fold;
  const lanes = settleAttempts(attempts, header.state, { startMs, endMs, endIso });
  const tasks = taskViews(records.tasks, attempts, merges);
  const byStatus: Record<string, number> = {};
  for (const t of tasks) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
  const failed = tasks.filter((t) => FAILED_STATUSES.has(t.status)).length;
  return {
    schema: "bernstein-run-report",
    version: RUN_MODEL_VERSION,
    generated_at: new Date(options.nowMs).toISOString(),
    run: runView(records, fold, { startIso, endIso, startMs, endMs, failed }),
    counts: {
      tasks: tasks.length,
      merged: merges.length,
      refused: refused.length,
      failed,
      running: attempts.filter((a) => a.outcome === "running").length,
      waiting: tasks.filter((t) => t.status === "open" || t.status === "planned").length,
      attempts: attempts.length,
      by_status: byStatus,
    },
    cost: costRows(attempts),
    tasks,
    attempts: attempts.map(({ gatedAt: _, ...a }) => a),
    lanes,
    span_ms: endMs - startMs,
    gates: fold.gates,
    merges,
    refused_merges: refused,
    attachments: fold.attachments,
    notices: fold.notices,
    verification: records.verification,
  };
}

/** Where the run's time span starts and ends, and its failed task count. */
interface RunSpan {
  startIso: string;
  endIso: string;
  startMs: number;
  endMs: number;
  failed: number;
}

/** The model's `run` section: identity, state, health and why it ended. */
function runView(records: RunRecords, fold: RunFold, span: RunSpan): RunModel["run"] {
  const { header, summary } = records;
  const health =
    summary !== null && (summary.health === "HEALTHY" || summary.health === "UNHEALTHY")
      ? summary.health
      : fold.refused.length === 0 && span.failed === 0 && header.state !== "interrupted"
      ? "HEALTHY"
      : "UNHEALTHY";
  const reason = textOf(fold.finished?.details.reason) ??
    (header.state === "running"
      ? "in progress"
      : header.state === "interrupted"
      ? "interrupted: the orchestrator stopped without finishing ('bernstein run' resumes it)"
      : "finished");
  return {
    run_id: header.run_id,
    state: header.state,
    health,
    end: textOf(fold.finished?.details.end) ?? textOf(summary?.end ?? undefined),
    reason,
    branch: header.branch,
    goal: header.goal,
    source: header.source,
    host: header.host,
    started_at: span.startIso,
    ended_at: header.state === "running" ? null : span.endIso,
    elapsed_s: Math.round((span.endMs - span.startMs) / 100) / 10,
    starts: Math.max(fold.starts, 1),
    max_agents: header.max_agents,
  };
}

/**
 * Ends the attempts a finished run left open (interrupted), gives every attempt its timeline
 * phases, marks escalations and lays them out in lanes; returns the number of lanes.
 */
function settleAttempts(
  attempts: MutableAttempt[],
  state: RunRecords["header"]["state"],
  span: { startMs: number; endMs: number; endIso: string },
): number {
  for (const a of attempts) {
    if (a.ended_at === null && state !== "running") {
      // The run ended (or died) with this attempt unfinished.
      a.outcome = "interrupted";
      a.ended_at = span.endIso;
      a.reason ??= state === "interrupted" ? "the run was interrupted" : "the run ended first";
    }
    a.phases = phasesOf(a, span.startMs, span.endMs);
  }
  markEscalations(attempts);
  const lanes = assignLanes(attempts.map((a) => ({
    start: a.phases[0]?.start_ms ?? 0,
    end: a.phases.at(-1)?.end_ms ?? 0,
  })));
  attempts.forEach((a, i) => (a.lane = lanes.lanes[i]));
  return lanes.count;
}

/** A run's attempts, gates, merges, attachments and notices, folded from its events in order. */
class RunFold {
  readonly attempts: MutableAttempt[] = [];
  readonly bySession = new Map<string, MutableAttempt>();
  readonly currentOfTask = new Map<string, MutableAttempt>();
  readonly gates: GateView[] = [];
  readonly merges: MergeView[] = [];
  readonly refused: RefusedView[] = [];
  readonly attachments: AttachmentView[] = [];
  readonly notices: NoticeView[] = [];
  finished: RunEventRecord | undefined;
  starts = 0;

  /** Takes in one event. */
  apply(e: RunEventRecord): void {
    const notice = noticeOf(e);
    if (notice !== undefined) this.notices.push(notice);
    FOLD_STEPS.get(e.event_type)?.(this, e);
  }

  /** The attempt an event is about: its session's, else its task's current one. */
  attemptOf(e: RunEventRecord): MutableAttempt | undefined {
    const session = textOf(e.details.session) ??
      (e.resource_type === "agent" ? e.resource_id : null);
    if (session !== null && this.bySession.has(session)) return this.bySession.get(session);
    if (e.resource_type === "task") return this.currentOfTask.get(e.resource_id);
    return undefined;
  }

  /** A new attempt of `taskId` (a claim, or a spawn nobody saw claimed). */
  open(session: string, taskId: string, at: string, d: JsonObject): MutableAttempt {
    const previous = this.currentOfTask.get(taskId);
    const attempt: MutableAttempt = {
      session,
      task_id: taskId,
      attempt: numberOf(d.attempt) ?? (previous ? previous.attempt + 1 : 1),
      adapter: textOf(d.adapter) ?? "unknown",
      model: textOf(d.model),
      lane: 0,
      retry: false,
      escalated: false,
      outcome: "running",
      reason: null,
      claimed_at: at,
      spawned_at: null,
      exited_at: null,
      ended_at: null,
      exit_code: null,
      turns: null,
      tokens_in: null,
      tokens_out: null,
      cost_usd: null,
      last_progress: null,
      attachment_digests: [],
      phases: [],
      gatedAt: null,
    };
    attempt.retry = attempt.attempt > 1 || previous !== undefined;
    this.attempts.push(attempt);
    this.bySession.set(session, attempt);
    this.currentOfTask.set(taskId, attempt);
    return attempt;
  }
}

/** Ends an attempt (once: a later ending does not overwrite the first). */
function endAttempt(
  a: MutableAttempt | undefined,
  outcome: AttemptOutcome,
  at: string,
  why?: string,
): void {
  if (a === undefined || a.ended_at !== null) return;
  a.outcome = outcome;
  a.ended_at = at;
  if (why !== undefined) a.reason = firstLine(why);
}

type FoldStep = (fold: RunFold, e: RunEventRecord) => void;

/** What each event type changes in the fold (notices aside: {@linkcode noticeOf}). */
const FOLD_STEPS = new Map<string, FoldStep>([
  ["run.started", (fold) => void fold.starts++],
  ["run.resumed", (fold) => void fold.starts++],
  ["run.finished", (fold, e) => void (fold.finished = e)],
  ["scheduler.claim", (fold, e) => {
    const session = textOf(e.details.session);
    if (session !== null) fold.open(session, e.resource_id, e.timestamp, e.details);
  }],
  ["agent.spawned", foldSpawned],
  ["agent.spawn_failed", (fold, e) => {
    const why = textOf(e.details.reason) ?? "spawn failed";
    endAttempt(fold.attemptOf(e), "spawn-failed", e.timestamp, why);
  }],
  ["agent.exited", foldExited],
  ["task.progress", (fold, e) => {
    const a = fold.currentOfTask.get(e.resource_id);
    const message = textOf(e.details.message);
    if (a !== undefined && message !== null) a.last_progress = firstLine(message);
  }],
  ["gate.result", foldGate],
  ["merge.completed", foldMerged],
  ["merge.refused", foldRefused],
  ["task.transition", (fold, e) => {
    const a = fold.currentOfTask.get(e.resource_id);
    const to = textOf(e.details.to);
    const reason = textOf(e.details.reason) ?? "";
    if (to === "failed") endAttempt(a, "failed", e.timestamp, reason);
    if (to === "closed" && reason.startsWith("no changes")) {
      endAttempt(a, "no-changes", e.timestamp, reason);
    }
  }],
  ["multimodal.attach", (fold, e) => {
    const d = e.details;
    const session = textOf(d.worker_id) ?? "";
    fold.attachments.push({
      session,
      task_id: fold.bySession.get(session)?.task_id ?? null,
      sha256: textOf(d.sha256) ?? "",
      mime: textOf(d.mime) ?? "",
      path: textOf(d.path),
      at: e.timestamp,
    });
  }],
]);

function foldSpawned(fold: RunFold, e: RunEventRecord): void {
  const d = e.details;
  const taskId = textOf(d.task_id) ?? e.resource_id;
  const a = fold.bySession.get(e.resource_id) ?? fold.open(e.resource_id, taskId, e.timestamp, d);
  a.spawned_at = e.timestamp;
  a.adapter = textOf(d.adapter) ?? a.adapter;
  a.model = textOf(d.model);
  a.attachment_digests = stringsOf(d.attachment_digests);
}

function foldExited(fold: RunFold, e: RunEventRecord): void {
  const a = fold.bySession.get(e.resource_id);
  if (a === undefined) return;
  const d = e.details;
  a.exited_at = e.timestamp;
  a.exit_code = numberOf(d.exit_code);
  a.turns = numberOf(d.turns);
  a.tokens_in = numberOf(d.tokens_in);
  a.tokens_out = numberOf(d.tokens_out);
  a.cost_usd = numberOf(d.cost_usd);
  if (d.ok === false) {
    const why = d.timed_out === true
      ? "deadline: the agent was killed"
      : textOf(d.error) ?? `agent exited ${a.exit_code ?? "?"}`;
    a.reason = firstLine(why);
  }
}

function foldGate(fold: RunFold, e: RunEventRecord): void {
  const a = fold.attemptOf(e);
  if (a !== undefined) a.gatedAt = e.timestamp;
  const d = e.details;
  fold.gates.push({
    task_id: e.resource_id,
    session: textOf(d.session),
    gate: textOf(d.gate) ?? "?",
    ok: d.ok === true,
    reason: textOf(d.reason) ?? "",
    output_tail: textOf(d.output_tail) ?? "",
    at: e.timestamp,
  });
}

function foldMerged(fold: RunFold, e: RunEventRecord): void {
  endAttempt(fold.attemptOf(e), "merged", e.timestamp);
  const d = e.details;
  fold.merges.push({
    task_id: e.resource_id,
    session: textOf(d.session),
    sha: textOf(d.sha) ?? "",
    files: stringsOf(d.files),
    at: e.timestamp,
  });
}

function foldRefused(fold: RunFold, e: RunEventRecord): void {
  const d = e.details;
  const reason = textOf(d.reason) ?? "refused";
  const detail = textOf(d.detail) ?? "";
  endAttempt(fold.attemptOf(e), "refused", e.timestamp, `${reason}: ${detail}`);
  fold.refused.push({
    task_id: e.resource_id,
    session: textOf(d.session),
    branch: textOf(d.branch) ?? "",
    reason,
    detail,
    at: e.timestamp,
  });
}

/** The warning or note an event puts in the report, if any. */
function noticeOf(e: RunEventRecord): NoticeView | undefined {
  const d = e.details;
  const notice = (level: NoticeView["level"], message: string) => ({
    at: e.timestamp,
    level,
    message,
  });
  switch (e.event_type) {
    case "agent.spawn_failed":
      return notice("warning", `${e.resource_id}: ${textOf(d.reason) ?? "spawn failed"}`);
    case "agent.stalled":
      return notice(
        "warning",
        `${textOf(d.task_id) ?? e.resource_id}: agent ${e.resource_id} stalled (silent ${
          numberOf(d.silent_s) ?? "?"
        }s) and was stopped`,
      );
    case "run.stop_requested":
      return notice(
        "info",
        `stop requested: ${textOf(d.reason) ?? ""}${d.force === true ? " (force)" : ""}`,
      );
    case "run.backstop":
      return notice("warning", `backstop: ${textOf(d.reason) ?? ""}`);
    case "run.manager_stalled":
      return notice("warning", `the manager created no task in ${numberOf(d.alive_s) ?? "?"}s`);
    // Nobody heard of it: a notification that failed or was dropped (delivered ones are
    // the normal case and stay in the audit log).
    case "notify.failed":
    case "notify.dropped": {
      const why = [textOf(d.status), textOf(d.error)].filter((x) => x !== null).join(": ");
      return notice(
        "warning",
        `notification ${textOf(d.event) ?? "?"} to ${e.resource_id} ` +
          `${e.event_type.slice("notify.".length)} after ${numberOf(d.attempts) ?? "?"} ` +
          `attempt(s)${why === "" ? "" : ` (${why})`}`,
      );
    }
  }
  return undefined;
}

function phasesOf(a: MutableAttempt, runStartMs: number, runEndMs: number): AttemptPhase[] {
  const at = (iso: string | null) =>
    iso === null ? null : Math.max(0, timestampMs(iso) - runStartMs);
  const claimed = at(a.claimed_at) ?? 0;
  const spawned = at(a.spawned_at);
  const exited = at(a.exited_at);
  const gated = at(a.gatedAt);
  const ended = at(a.ended_at) ?? Math.max(claimed, runEndMs - runStartMs);
  const phases: AttemptPhase[] = [];
  const push = (phase: AttemptPhase["phase"], start: number, end: number) =>
    phases.push({ phase, start_ms: start, end_ms: Math.max(start, end) });
  if (spawned === null) {
    push("spawn", claimed, ended);
    return phases;
  }
  push("spawn", claimed, spawned);
  if (exited === null) {
    push("work", spawned, ended);
    return phases;
  }
  push("work", spawned, exited);
  if (gated === null) {
    if (ended > exited) push("gate", exited, ended);
    return phases;
  }
  push("gate", exited, gated);
  if (ended > gated) push("merge", gated, ended);
  return phases;
}

function markEscalations(attempts: MutableAttempt[]): void {
  const previous = new Map<string, MutableAttempt>();
  for (const a of attempts) {
    const before = previous.get(a.task_id);
    if (before !== undefined) {
      a.retry = true;
      a.escalated = before.adapter !== a.adapter || (before.model ?? "") !== (a.model ?? "");
    }
    previous.set(a.task_id, a);
  }
}

function stageOf(task: Task): string | null {
  const stage = (task.metadata as Record<string, unknown> | null)?.stage;
  return typeof stage === "string" ? stage : null;
}

function taskViews(
  tasks: readonly Task[],
  attempts: readonly MutableAttempt[],
  merges: readonly MergeView[],
): TaskView[] {
  const ids = new Set(tasks.map((t) => t.id));
  const depth = new Map<string, number>();
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const depthOf = (id: string, seen: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    const task = byId.get(id);
    if (task === undefined || seen.has(id)) return 0;
    seen.add(id);
    const deps = task.depends_on.filter((d) => ids.has(d));
    const value = deps.length === 0 ? 0 : 1 + Math.max(...deps.map((d) => depthOf(d, seen)));
    depth.set(id, value);
    return value;
  };
  return tasks.map((t) => {
    const mine = attempts.filter((a) => a.task_id === t.id);
    const last = mine.at(-1);
    const merge = merges.filter((m) => m.task_id === t.id).at(-1);
    let cost: number | null = null;
    let tokensIn: number | null = null;
    let tokensOut: number | null = null;
    let turns: number | null = null;
    for (const a of mine) {
      cost = addNullable(cost, a.cost_usd);
      tokensIn = addNullable(tokensIn, a.tokens_in);
      tokensOut = addNullable(tokensOut, a.tokens_out);
      turns = addNullable(turns, a.turns);
    }
    return {
      id: t.id,
      title: t.title,
      role: t.role,
      stage: stageOf(t),
      status: t.status,
      depends_on: [...t.depends_on],
      parent_task_id: t.parent_task_id,
      depth: depthOf(t.id, new Set()),
      attempts: mine.length,
      adapter: last?.adapter ?? null,
      model: last?.model ?? null,
      cost_usd: roundUsd(cost),
      tokens_in: tokensIn,
      tokens_out: tokensOut,
      turns,
      merged_sha: merge?.sha ?? null,
      files: merge?.files ?? [],
      terminal_reason: t.terminal_reason,
      result_summary: t.result_summary,
    };
  });
}

function costRows(attempts: readonly MutableAttempt[]): RunModel["cost"] {
  const rows = new Map<string, CostRow>();
  let total = 0;
  let reported = false;
  for (const a of attempts) {
    if (a.exited_at === null) continue;
    const model = a.model ?? "default";
    const key = `${a.adapter}\0${model}`;
    const row = rows.get(key) ?? {
      adapter: a.adapter,
      model,
      runs: 0,
      cost_usd: null,
      tokens_in: null,
      tokens_out: null,
      turns: null,
    };
    row.runs++;
    row.cost_usd = addNullable(row.cost_usd, a.cost_usd);
    row.tokens_in = addNullable(row.tokens_in, a.tokens_in);
    row.tokens_out = addNullable(row.tokens_out, a.tokens_out);
    row.turns = addNullable(row.turns, a.turns);
    if (a.cost_usd !== null) {
      total += a.cost_usd;
      reported = true;
    }
    rows.set(key, row);
  }
  return {
    total_usd: Math.round(total * 1e6) / 1e6,
    reported,
    by_adapter: [...rows.values()].map((r) => ({ ...r, cost_usd: roundUsd(r.cost_usd) })).sort((
      x,
      y,
    ) => x.adapter === y.adapter ? (x.model < y.model ? -1 : 1) : x.adapter < y.adapter ? -1 : 1),
  };
}

/** Whether a task counts as active (an agent holds it or its work is being checked). */
export function isActiveStatus(status: string): boolean {
  return ACTIVE_STATUSES.has(status);
}
