/**
 * Seeing a run: pure functions from a run's records (its window of the audit chain, its tasks,
 * its summary, the verification done at report time) to the run model (`runs report --json`),
 * the self-contained HTML report with its Gantt timeline, and the live dashboard's page and
 * sections. No I/O here: the run gathers the records, the task server serves the pages.
 *
 * @example
 * ```ts ignore
 * import { buildRunModel, renderReportHtml, selectRunEvents } from "./mod.ts";
 * const events = selectRunEvents(auditRecords, runId);
 * const model = buildRunModel({ header, events, tasks, summary, logTails, verification }, {
 *   nowMs: Date.now(),
 * });
 * await Deno.writeTextFile("report.html", renderReportHtml(model));
 * ```
 *
 * @module
 */
export {
  type CheckResult,
  type RunEventRecord,
  type RunHeader,
  type RunRecords,
  selectRunEvents,
  tasksFromEvents,
  UNCHECKED,
  type Verification,
} from "./records.ts";
export { buildRunModel, numberOf } from "./model.ts";
export { assignLanes } from "./timeline.ts";
export { renderReportHtml } from "./report_html.ts";
export {
  DASHBOARD_EVENTS_PATH,
  type LiveAgent,
  renderDashboardPage,
  renderDashboardSections,
} from "./dashboard_html.ts";
export { DASHBOARD_ASSETS } from "./assets.ts";
export { type DashboardSource, RunJournal } from "./live_journal.ts";
export {
  LinePrefixer,
  logPrefix,
  renderLiveView,
  shortDuration,
  terminalSafe,
} from "./terminal.ts";
