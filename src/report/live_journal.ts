// The live side of the dashboard: a journal of the run's audit records as they are written,
// plus providers for what only the running process knows (tasks in the store, the agents the
// loop runs, the tails of their logs). It answers the dashboard with the same pure builder as
// the report, and tells listeners when something changed.
import type { Task } from "../tasks/mod.ts";
import { DASHBOARD_LOG_TAILS, type DashboardView, type LiveAgent } from "./dashboard_html.ts";
import { buildRunModel } from "./model.ts";
import { type RunEventRecord, type RunHeader, tasksFromEvents, UNCHECKED } from "./records.ts";

/** What the dashboard's routes read. */
export interface DashboardSource {
  /** The view as of `nowMs`. */
  view(nowMs: number): Promise<DashboardView>;
  /** Calls `listener` after each change; returns the unsubscribe function. */
  onChange(listener: () => void): () => void;
  /** True once the run has ended (no more changes will come). */
  ended(): boolean;
}

/** Where a {@linkcode RunJournal} gets what the audit records do not say. */
export interface RunJournalProviders {
  /** The run's tasks now (the task store); default: rebuilt from the records. */
  tasks?: () => Promise<Task[]>;
  /** Agents the loop runs or checks now. */
  agents?: () => LiveAgent[];
  /** Last lines of the given sessions' logs. */
  logTails?: (sessions: readonly string[]) => Promise<Record<string, string>>;
}

/**
 * The records of a live run. The run appends every audit record it writes (`add`), pokes it
 * when an agent printed something (`touch`) and ends it (`end`); the dashboard reads `view`.
 *
 * @example
 * ```ts ignore
 * const journal = new RunJournal(header, { tasks: () => store.list({}) });
 * journal.add(record);
 * const view = await journal.view(Date.now());
 * ```
 */
export class RunJournal implements DashboardSource {
  #header: RunHeader;
  readonly #events: RunEventRecord[] = [];
  readonly #providers: RunJournalProviders;
  readonly #listeners = new Set<() => void>();
  #ended = false;

  constructor(header: RunHeader, providers: RunJournalProviders = {}) {
    this.#header = header;
    this.#providers = providers;
  }

  /** Records one audit record of the run (in chain order). */
  add(record: RunEventRecord): void {
    this.#events.push({
      timestamp: record.timestamp,
      actor: record.actor,
      event_type: record.event_type,
      resource_type: record.resource_type,
      resource_id: record.resource_id,
      details: record.details,
    });
    this.#notify();
  }

  /** Something only the providers know changed (an agent printed a line). */
  touch(): void {
    this.#notify();
  }

  /** The run ended: its state becomes `finished` and listeners hear it one last time. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#header = { ...this.#header, state: "finished" };
    this.#notify();
  }

  /** Records so far (a copy). */
  events(): RunEventRecord[] {
    return [...this.#events];
  }

  ended(): boolean {
    return this.#ended;
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async view(nowMs: number): Promise<DashboardView> {
    const events = [...this.#events];
    const tasks = this.#providers.tasks ? await this.#providers.tasks() : tasksFromEvents(events);
    const model = buildRunModel({
      header: this.#header,
      events,
      tasks,
      summary: null,
      logTails: {},
      verification: UNCHECKED,
    }, { nowMs });
    const agents = this.#ended ? [] : this.#providers.agents?.() ?? [];
    // Only the logs the page shows: the live agents' and the most recent others'.
    const live = new Set(agents.map((a) => a.session));
    const sessions = [
      ...live,
      ...model.attempts.map((a) => a.session).filter((x) => !live.has(x)).slice(
        -DASHBOARD_LOG_TAILS,
      ),
    ];
    const logTails = this.#providers.logTails ? await this.#providers.logTails(sessions) : {};
    return { model, agents, logTails };
  }

  #notify(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch {
        // A listener (an SSE connection) that fails must not fail the run's audit append.
      }
    }
  }
}
