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
  type RunSourceView,
  selectRunEvents,
  tasksFromEvents,
  UNCHECKED,
  type Verification,
} from "./records.ts";
export {
  type AttachmentView,
  type AttemptOutcome,
  type AttemptPhase,
  type AttemptView,
  buildRunModel,
  type BuildRunModelOptions,
  type CostRow,
  type GateView,
  type MergeView,
  type NoticeView,
  numberOf,
  type RefusedView,
  RUN_MODEL_VERSION,
  type RunModel,
  type TaskView,
  timestampMs,
} from "./model.ts";
export {
  assignLanes,
  axisTicks,
  formatDuration,
  type Interval,
  type LaneAssignment,
} from "./timeline.ts";
export { cspHash, renderReportHtml } from "./report_html.ts";
export {
  DASHBOARD_ASSET_PATHS,
  DASHBOARD_EVENTS_PATH,
  DASHBOARD_SECTION_IDS,
  type DashboardPageOptions,
  type DashboardSectionId,
  type DashboardView,
  type LiveAgent,
  renderDashboardPage,
  renderDashboardSections,
} from "./dashboard_html.ts";
export { DASHBOARD_ASSETS, type DashboardAsset } from "./assets.ts";
export { type DashboardSource, RunJournal, type RunJournalProviders } from "./live_journal.ts";
export {
  LinePrefixer,
  type LiveViewOptions,
  type LiveViewProgress,
  type LiveViewRow,
  logPrefix,
  renderLiveView,
  shortDuration,
  SPINNER_FRAMES,
  terminalSafe,
} from "./terminal.ts";
