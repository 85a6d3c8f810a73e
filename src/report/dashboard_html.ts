// The live dashboard's HTML: the whole page (served at `/`, a complete static snapshot that
// needs no script) and its sections by element id (pushed over Server-Sent Events and swapped
// in by dashboard.js). One renderer for both, so the snapshot and the live page never differ.
import { badge, clip, clockTime, esc, num, table, usd } from "./_html.ts";
import { taskGraphSvg } from "./graph_svg.ts";
import type { AttemptView, RunModel } from "./model.ts";
import { headline, noticesList, refusedList, tasksTable } from "./sections.ts";
import { formatDuration } from "./timeline.ts";

/** One agent as the run loop sees it right now. */
export interface LiveAgent {
  /** Session id. */
  session: string;
  /** Task id. */
  task_id: string;
  /** Adapter. */
  adapter: string;
  /** Model, when chosen. */
  model: string | null;
  /** `running`, `checking` (signals and gates), `merging`. */
  state: string;
  /** ISO time the agent started. */
  started_at: string;
  /** ISO time of its last output, when it printed anything. */
  last_output_at: string | null;
  /** The last text it printed. */
  last_line: string;
  /** Turns so far, when the CLI reports them while it runs. */
  turns: number | null;
  /** Tokens so far, when reported while it runs. */
  tokens: number | null;
  /** USD so far, when reported while it runs. */
  cost_usd: number | null;
}

/** What the dashboard shows: the run model plus what only the live run knows. */
export interface DashboardView {
  /** The run model (same builder as the report). */
  model: RunModel;
  /** Agents the loop is running or checking. */
  agents: LiveAgent[];
  /** Last lines of each session's output log. */
  logTails: Record<string, string>;
}

/** Where the dashboard's files are served from (one path per asset). */
export const DASHBOARD_ASSET_PATHS = {
  css: "/dashboard/assets/dashboard.css",
  js: "/dashboard/assets/dashboard.js",
} as const;

/** The SSE endpoint the page's script connects to. */
export const DASHBOARD_EVENTS_PATH = "/dashboard/events";

/** Log tails the dashboard shows at most (running agents first, then the most recent). */
export const DASHBOARD_LOG_TAILS = 12;

/** Element ids of the sections, in page order. */
export const DASHBOARD_SECTION_IDS = [
  "d-headline",
  "d-agents",
  "d-queue",
  "d-refused",
  "d-graph",
  "d-tasks",
  "d-logs",
  "d-notices",
] as const;

/** A section id. */
export type DashboardSectionId = typeof DASHBOARD_SECTION_IDS[number];

function since(iso: string | null, nowMs: number): string {
  if (iso === null) return `<span class="muted">no output yet</span>`;
  const ago = Math.max(0, nowMs - Date.parse(iso));
  return `<span data-since="${esc(iso)}">${esc(formatDuration(ago))}</span> ago`;
}

function liveAgents(view: DashboardView): LiveAgent[] {
  if (view.agents.length > 0) return view.agents;
  // No live feed (a snapshot of a run another process runs): what the records say.
  return view.model.attempts.filter((a) => a.outcome === "running").map((a) => ({
    session: a.session,
    task_id: a.task_id,
    adapter: a.adapter,
    model: a.model,
    state: a.exited_at === null ? "running" : "checking",
    started_at: a.spawned_at ?? a.claimed_at,
    last_output_at: null,
    last_line: a.last_progress ?? "",
    turns: a.turns,
    tokens: null,
    cost_usd: a.cost_usd,
  }));
}

function sumOrNull(a: number | null | undefined, b: number | null | undefined): number | null {
  return a === null || a === undefined ? b ?? null : a + (b ?? 0);
}

function agentsTable(view: DashboardView, nowMs: number): string {
  const attempts = new Map<string, AttemptView>(view.model.attempts.map((a) => [a.session, a]));
  const rows = liveAgents(view).map((a) => {
    const attempt = attempts.get(a.session);
    const progress = attempt?.last_progress ?? "";
    const line = a.last_line || progress;
    // What the CLI reports at exit is known once the agent is being checked or merged.
    const turns = a.turns ?? attempt?.turns ?? null;
    const tokens = a.tokens ?? sumOrNull(attempt?.tokens_in, attempt?.tokens_out);
    const cost = a.cost_usd ?? attempt?.cost_usd ?? null;
    return [
      `<a href="#task-${esc(a.task_id)}"><code>${esc(a.task_id)}</code></a>` +
      (attempt && attempt.attempt > 1
        ? ` <span class="muted">attempt ${attempt.attempt}</span>`
        : ""),
      esc(a.adapter),
      esc(a.model ?? "default"),
      badge(a.state),
      num(turns),
      num(tokens),
      esc(usd(cost)),
      `<span class="progress-line">${
        esc(clip(line, 160)) || '<span class="muted">—</span>'
      }</span>`,
      since(a.last_output_at, nowMs),
      `<span data-since="${esc(a.started_at)}">${
        esc(formatDuration(Math.max(0, nowMs - Date.parse(a.started_at))))
      }</span>`,
    ];
  });
  const unknown = liveAgents(view).some((a) => a.state === "running" && a.turns === null);
  const note = unknown
    ? `<p class="muted small">Turns, tokens and cost are what each agent's CLI reports when it exits; until then they show —.</p>`
    : "";
  return tableOf(view, rows) + note;
}

function tableOf(view: DashboardView, rows: string[][]): string {
  return table(
    "Agents",
    [
      "task",
      "adapter",
      "model",
      "state",
      "turns",
      "tokens",
      "cost",
      "last progress",
      "last output",
      "running for",
    ],
    rows,
    view.model.run.state === "running" ? "No agent is running right now." : "The run has ended.",
  );
}

function mergeQueue(view: DashboardView): string {
  const queued = liveAgents(view).filter((a) => a.state === "checking" || a.state === "merging");
  if (queued.length === 0) return `<p class="empty">Nothing waiting to merge.</p>`;
  return `<ol class="queue">${
    queued.map((a) =>
      `<li><code>${esc(a.task_id)}</code> ${badge(a.state)} <span class="muted">${
        esc(a.session)
      }</span></li>`
    ).join("")
  }</ol>`;
}

function logTails(view: DashboardView): string {
  const attempts = view.model.attempts;
  const live = new Set(liveAgents(view).map((a) => a.session));
  // Running sessions first, then the most recent others.
  const sessions = [
    ...attempts.filter((a) => live.has(a.session)),
    ...attempts.filter((a) => !live.has(a.session)).reverse(),
  ].filter((a) => view.logTails[a.session] !== undefined).slice(0, DASHBOARD_LOG_TAILS);
  if (sessions.length === 0) return `<p class="empty">No agent output yet.</p>`;
  const started = attempts.filter((a) => a.spawned_at !== null).length;
  const more = started > sessions.length
    ? `<p class="muted small">${
      started - sessions.length
    } older agent log(s) not shown here: <code>bernstein logs &lt;task&gt;</code> prints any of them.</p>`
    : "";
  const seen = new Set<string>();
  return sessions.map((a) => {
    const first = !seen.has(a.task_id);
    seen.add(a.task_id);
    const id = first ? ` id="task-${esc(a.task_id)}"` : "";
    // The tail: the last lines only, however much the log holds.
    const tail = (view.logTails[a.session] ?? "").split("\n").slice(-40).join("\n");
    return `<details class="log"${id} data-session="${esc(a.session)}"${
      live.has(a.session) ? " open" : ""
    }><summary><code>${esc(a.task_id)}</code> ${badge(a.outcome)} <span class="muted">${
      esc(a.session)
    }</span></summary><pre tabindex="0" aria-label="Last output lines of ${esc(a.session)}">${
      esc(tail) || '<span class="muted">(empty)</span>'
    }</pre></details>`;
  }).join("\n") + more;
}

/**
 * The model as the live run knows it: the agents at work counted from the loop's table (an
 * attempt between its claim and its spawn is not at work yet), and the cost the running agents
 * reported so far added to the total.
 */
function withLive(view: DashboardView): RunModel {
  const m = view.model.run.state === "running" && view.agents.length > 0
    ? { ...view.model, counts: { ...view.model.counts, running: view.agents.length } }
    : view.model;
  const exited = new Set(m.attempts.filter((a) => a.exited_at !== null).map((a) => a.session));
  const live = liveAgents(view).filter((a) => a.cost_usd !== null && !exited.has(a.session));
  if (live.length === 0) return m;
  const extra = live.reduce((sum, a) => sum + (a.cost_usd ?? 0), 0);
  return {
    ...m,
    cost: {
      ...m.cost,
      reported: true,
      total_usd: Math.round((m.cost.total_usd + extra) * 1e6) / 1e6,
    },
  };
}

/**
 * The dashboard's sections by element id (what one SSE update carries).
 *
 * @example
 * ```ts ignore
 * const sections = renderDashboardSections(view, Date.now());
 * // { "d-headline": "<div class=…>", "d-agents": …, … }
 * ```
 */
export function renderDashboardSections(
  view: DashboardView,
  nowMs: number,
): Record<DashboardSectionId, string> {
  const m = view.model;
  return {
    "d-headline": headline(withLive(view)),
    "d-agents": agentsTable(view, nowMs),
    "d-queue": mergeQueue(view),
    "d-refused": refusedList(m),
    "d-graph": `<div class="figure graph-wrap">${taskGraphSvg(m, { linkTasks: true })}</div>`,
    "d-tasks": tasksTable(m),
    "d-logs": logTails(view),
    "d-notices": noticesList(m),
  };
}

/** Options of {@linkcode renderDashboardPage}. */
export interface DashboardPageOptions {
  /** The "as of" time in ms. */
  nowMs: number;
  /** Connect to the live feed (false renders a pure snapshot, e.g. after the run ended). */
  live: boolean;
}

/** The whole dashboard page: a complete snapshot that the script keeps current. */
export function renderDashboardPage(view: DashboardView, options: DashboardPageOptions): string {
  const s = renderDashboardSections(view, options.nowMs);
  const part = (id: DashboardSectionId, title: string, extra = "") =>
    `<section aria-labelledby="${id}-h"${extra}><h2 id="${id}-h">${
      esc(title)
    }</h2><div id="${id}">${s[id]}</div></section>`;
  const run = view.model.run;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>bernstein · ${esc(run.run_id)}</title>
<link rel="stylesheet" href="${DASHBOARD_ASSET_PATHS.css}">
<link rel="icon" href="data:,">
</head>
<body data-live="${options.live ? "1" : "0"}" data-events="${DASHBOARD_EVENTS_PATH}">
<a class="skip" href="#main">Skip to the dashboard</a>
<header class="top"><span class="brand">bernstein · live dashboard</span>` +
    `<span class="meta"><span id="conn" role="status" aria-live="polite">snapshot of ${
      esc(clockTime(view.model.generated_at))
    } UTC</span></span></header>
<main id="main">
<noscript><p class="note">JavaScript is off: this is a snapshot of ${
      esc(clockTime(view.model.generated_at))
    } UTC. Reload the page for a newer one.</p></noscript>
<div id="d-headline">${s["d-headline"]}</div>
${part("d-agents", "Agents")}
<div class="grid">${part("d-queue", "Merge queue")}${part("d-refused", "Refused merges")}</div>
${part("d-graph", "Task graph")}
${part("d-tasks", "Tasks")}
${part("d-logs", "Log tails")}
${part("d-notices", "Notices")}
</main>
<script src="${DASHBOARD_ASSET_PATHS.js}" defer></script>
</body>
</html>
`;
}
