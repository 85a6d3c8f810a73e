// What the report and the dashboard are built from: one run's window of the audit chain, its
// tasks, its summary and the verification done at report time. Pure: the I/O that gathers them
// lives with the run (src/orchestrator/run_records.ts); these functions only select and shape.
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import type { Task } from "../tasks/mod.ts";

/** One audit record as the report reads it (the fields of an `AuditRecord` it needs). */
export interface RunEventRecord {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
  timestamp: string;
  /** `orchestrator`, `operator`, `agent:<id>`. */
  actor: string;
  /** `agent.spawned`, `merge.refused`, … */
  event_type: string;
  /** `task`, `agent`, `run`, … */
  resource_type: string;
  /** Task id, session, run id. */
  resource_id: string;
  /** Structured facts of the event. */
  details: JsonObject;
}

/** Where the run's work came from, as the session file records it. */
export interface RunSourceView {
  /** `plan`, `backlog` or `goal`. */
  kind: string;
  /** Plan file, backlog folder or goal text. */
  detail: string;
}

/** What is known about the run as a whole. */
export interface RunHeader {
  /** Run id. */
  run_id: string;
  /** Branch merges go into. */
  branch: string | null;
  /** Goal text, when there was one. */
  goal: string | null;
  /** Where the tasks came from. */
  source: RunSourceView | null;
  /** Host the run started on. */
  host: string | null;
  /** ISO start time (first record of the run when the session file is gone). */
  started_at: string | null;
  /** Agents at once. */
  max_agents: number | null;
  /**
   * `running` (its process is alive), `finished` (it wrote `run.finished`) or `interrupted`
   * (neither: the process died; `bernstein run` resumes it).
   */
  state: "running" | "finished" | "interrupted";
}

/** The result of one check done at report time. */
export interface CheckResult {
  /** `pass`, `fail` or `unchecked` (the input is missing: no key, no lineage, no scorecard). */
  status: "pass" | "fail" | "unchecked";
  /** One line: what was checked, or why it failed or could not be checked. */
  detail: string;
}

/** Verification of the run's records, computed when the report is made (never stored). */
export interface Verification {
  /** The HMAC-chained audit log. */
  audit: CheckResult;
  /** The signed lineage log (`lineage gate`). */
  lineage: CheckResult;
  /** The run's scorecard against its work ledger. */
  scorecard: CheckResult;
}

/** Everything the report of one run is built from. */
export interface RunRecords {
  /** The run as a whole. */
  header: RunHeader;
  /** The run's audit records, in chain order. */
  events: RunEventRecord[];
  /** The run's tasks (latest versions); derived from `events` when the task log is gone. */
  tasks: Task[];
  /** `.sdd/runs/<run-id>/summary.json`, when the run finished. */
  summary: JsonObject | null;
  /** The last lines of each session's output log, by session (the dashboard shows them). */
  logTails: Record<string, string>;
  /** Verification done at report time (the live dashboard leaves it unchecked). */
  verification: Verification;
}

/** A verification that was not done (the live dashboard, or a test). */
export const UNCHECKED: Verification = {
  audit: { status: "unchecked", detail: "not checked" },
  lineage: { status: "unchecked", detail: "not checked" },
  scorecard: { status: "unchecked", detail: "not checked" },
};

/**
 * The records of run `runId` in a chain of several runs: from its `run.started` to its
 * `run.finished` (resumes included), or up to the next run's `run.started` when it was
 * interrupted and never resumed. Runs of one project never overlap (a second `bernstein run`
 * is refused while one is in progress), so the window is exact.
 *
 * @example
 * ```ts ignore
 * const mine = selectRunEvents(allRecords, "brave-otter-3fa9c2");
 * ```
 */
export function selectRunEvents<R extends RunEventRecord>(
  records: readonly R[],
  runId: string,
): R[] {
  const out: R[] = [];
  let inside = false;
  for (const r of records) {
    const isRunEvent = r.resource_type === "run";
    if (isRunEvent && (r.event_type === "run.started" || r.event_type === "run.resumed")) {
      inside = r.resource_id === runId;
    }
    if (inside) out.push(r);
    if (isRunEvent && r.event_type === "run.finished" && r.resource_id === runId) inside = false;
  }
  return out;
}

function text(value: JsonValue | undefined): string | null {
  return typeof value === "string" ? value : null;
}

function strings(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

/**
 * Tasks rebuilt from the audit records alone (`task.created` and `task.transition`), for a
 * run whose task log was removed. Fields the audit does not carry are `null` or empty.
 */
export function tasksFromEvents(events: readonly RunEventRecord[]): Task[] {
  const tasks = new Map<string, Task>();
  for (const e of events) {
    if (e.resource_type !== "task") continue;
    const d = e.details;
    if (e.event_type === "task.created") {
      tasks.set(e.resource_id, {
        id: e.resource_id,
        title: text(d.title) ?? e.resource_id,
        description: "",
        role: text(d.role) ?? "backend",
        priority: 2,
        scope: "medium",
        complexity: "medium",
        depends_on: strings(d.depends_on),
        parent_task_id: text(d.parent_task_id),
        owned_files: [],
        completion_signals: [],
        cli: null,
        model: null,
        effort: null,
        attachments: [],
        max_retries: 0,
        retry_count: 0,
        assigned_agent: null,
        result_summary: null,
        terminal_reason: null,
        created_at: text(d.at) ?? e.timestamp,
        version: 1,
        metadata: {},
        status: "open",
        updated_at: text(d.at) ?? e.timestamp,
      });
      continue;
    }
    const task = tasks.get(e.resource_id);
    if (task === undefined || e.event_type !== "task.transition") continue;
    const to = text(d.to);
    if (to !== null) task.status = to as Task["status"];
    if (to === "failed") task.terminal_reason = text(d.reason);
    if (to === "done") task.result_summary = text(d.result_summary) ?? task.result_summary;
    if (to === "open" && text(d.from) === "failed") task.retry_count++;
    task.updated_at = text(d.at) ?? e.timestamp;
  }
  return [...tasks.values()];
}
