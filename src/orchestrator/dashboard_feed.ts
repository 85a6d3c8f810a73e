// Feeds a run's live dashboard: every audit record of the run (in chain order, as it becomes
// durable; a resumed run first reads its earlier ones back), the tasks in the store, the agents
// the loop runs and their log tails. It pokes the dashboard when the loop redraws its view and,
// once a second at most, when an agent printed something new.
import { type AuditKey, type AuditLog, scanAuditLog } from "../audit/mod.ts";
import { type LiveAgent, type RunHeader, RunJournal, selectRunEvents } from "../report/mod.ts";
import type { Task } from "../tasks/mod.ts";
import type { AgentRow, RunEvent, RunReporter } from "./reporter.ts";
import { readLogTails } from "./run_records.ts";
import type { CurrentRun } from "./current_run.ts";
import { sddFolder } from "../io/mod.ts";

/** Bytes of each agent log the dashboard shows. */
const LOG_TAIL_BYTES = 4096;

/** How often the feed looks whether an agent printed something (never faster than the page). */
const OUTPUT_CHECK_MS = 1000;

/** Where the feed's live parts come from once the run has them. */
export interface DashboardFeedParts {
  /** The run's tasks now. */
  tasks: () => Promise<Task[]>;
  /** The agents the loop runs now. */
  agents: () => LiveAgent[];
}

/** A run's dashboard feed. */
export interface DashboardFeed {
  /** What the task server serves. */
  journal: RunJournal;
  /** The run's reporter, which also pokes the dashboard when the live view redraws. */
  reporter: RunReporter;
  /** Connects the store and the loop (they exist after the server starts). */
  connect(parts: DashboardFeedParts): void;
  /** The run ended: last update, no more checks. */
  end(): void;
}

function headerOf(run: CurrentRun): RunHeader {
  const source = run.source;
  const detail = source.kind === "plan"
    ? source.path
    : source.kind === "backlog"
    ? source.dir
    : source.goal;
  return {
    run_id: run.run_id,
    branch: run.branch,
    goal: run.goal,
    source: { kind: source.kind, detail },
    host: run.host,
    started_at: run.started_at,
    max_agents: run.choices.max_agents,
    state: "running",
  };
}

/**
 * Starts the feed of run `run.run_id`: subscribes to the audit chain (after reading back
 * the run's earlier records when it resumes).
 *
 * @example
 * ```ts ignore
 * const feed = await startDashboardFeed({ sdd, run, audit, auditKey, reporter, resume });
 * // startTaskServer({ …, dashboard: { source: feed.journal, random } })
 * feed.connect({ tasks: () => store.list({}), agents: () => loop.liveAgents() });
 * ```
 */
export async function startDashboardFeed(options: {
  sdd: string;
  run: CurrentRun;
  audit: AuditLog;
  auditKey: AuditKey;
  reporter: RunReporter;
  resume: boolean;
}): Promise<DashboardFeed> {
  const { sdd, run } = options;
  let parts: DashboardFeedParts | undefined;
  const journal = new RunJournal(headerOf(run), {
    tasks: () => parts ? parts.tasks() : Promise.resolve([]),
    agents: () => parts?.agents() ?? [],
    logTails: (sessions) => readLogTails(sdd, sessions, LOG_TAIL_BYTES),
  });
  let inRun = false;
  if (options.resume) {
    const scan = await scanAuditLog(sddFolder(sdd, "audit"), options.auditKey);
    const earlier = selectRunEvents(scan.records.map((r) => r.record), run.run_id);
    for (const record of earlier) journal.add(record);
    inRun = earlier.length > 0;
  }
  const unsubscribe = options.audit.onAppend((record) => {
    // Only the run's own records: a fresh run starts at its `run.started`.
    if (
      record.resource_type === "run" && record.resource_id === run.run_id &&
      (record.event_type === "run.started" || record.event_type === "run.resumed")
    ) inRun = true;
    if (inRun) journal.add(record);
  });
  let lastSeen = "";
  const outputCheck = setInterval(() => {
    const agents = parts?.agents() ?? [];
    const seen = agents.map((a) => `${a.session}:${a.last_output_at}:${a.last_line}`).join("\n");
    if (seen !== lastSeen) {
      lastSeen = seen;
      journal.touch();
    }
  }, OUTPUT_CHECK_MS);
  const inner = options.reporter;
  const reporter: RunReporter = {
    event: (event: RunEvent) => inner.event(event),
    agents: (rows: AgentRow[], progress: { done: number; total: number }) => {
      inner.agents?.(rows, progress);
      journal.touch();
    },
    close: () => inner.close?.(),
  };
  return {
    journal,
    reporter,
    connect(p) {
      parts = p;
      journal.touch();
    },
    end() {
      clearInterval(outputCheck);
      unsubscribe();
      journal.end();
    },
  };
}
