// The Gantt timeline as inline SVG: one lane per agent slot, one bar (`g.attempt`) per attempt
// made of its phases (spawn, work, gate, merge), retries and model escalations marked, the
// outcome at the bar's end. Every bar carries a <title> and an aria-label; the attempts table
// next to it says the same in text.
import { clip, esc, stateStyle } from "./_html.ts";
import type { AttemptView, RunModel } from "./model.ts";
import { axisTicks, formatDuration } from "./timeline.ts";

const LABEL_W = 64;
const PLOT_W = 1000;
const LANE_H = 30;
const BAR_H = 20;
const AXIS_H = 26;
const PHASE_NAMES: Record<string, string> = {
  spawn: "spawn",
  work: "work",
  gate: "checks & gates",
  merge: "merge",
};

function describe(a: AttemptView): string {
  const parts = [
    `${a.task_id}, attempt ${a.attempt}`,
    `${a.adapter}${a.model ? "/" + a.model : ""}`,
    stateStyle(a.outcome).label,
  ];
  if (a.retry) parts.push("retry");
  if (a.escalated) parts.push("escalated");
  const phases = a.phases.map((p) =>
    `${PHASE_NAMES[p.phase]} ${formatDuration(p.end_ms - p.start_ms)}`
  );
  return `${parts.join(", ")}: ${phases.join(", ")}${a.reason ? ` — ${a.reason}` : ""}`;
}

/** The timeline of every attempt as an SVG element (empty-state text when none). */
export function timelineSvg(model: RunModel): string {
  if (model.attempts.length === 0) {
    return `<p class="empty">No agent was started in this run.</p>`;
  }
  const span = Math.max(model.span_ms, 1);
  const x = (ms: number) => LABEL_W + (ms / span) * PLOT_W;
  const height = AXIS_H + model.lanes * LANE_H + 6;
  const width = LABEL_W + PLOT_W + 16;
  const ticks = axisTicks(span).map((t) => {
    const tx = x(t).toFixed(1);
    return `<line class="tick" x1="${tx}" x2="${tx}" y1="${AXIS_H - 6}" y2="${height}"/>` +
      `<text class="axis" x="${tx}" y="${AXIS_H - 10}" text-anchor="middle">${
        esc(formatDuration(t))
      }</text>`;
  }).join("");
  const lanes = Array.from({ length: model.lanes }, (_, i) => {
    const y = AXIS_H + i * LANE_H;
    return `<rect class="lane${
      i % 2 ? " odd" : ""
    }" x="0" y="${y}" width="${width}" height="${LANE_H}"/>` +
      `<text class="lane-label" x="8" y="${y + LANE_H / 2 + 4}">slot ${i + 1}</text>`;
  }).join("");
  const bars = model.attempts.map((a) => attemptBar(a, x)).join("\n");
  return `<svg class="timeline" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" ` +
    `role="group" aria-label="Timeline: ${model.attempts.length} attempt(s) on ${model.lanes} agent slot(s) over ${
      esc(formatDuration(span))
    }" xmlns="http://www.w3.org/2000/svg">\n${lanes}${ticks}\n${bars}\n</svg>`;
}

function attemptBar(a: AttemptView, x: (ms: number) => number): string {
  const y = AXIS_H + a.lane * LANE_H + (LANE_H - BAR_H) / 2;
  const start = a.phases[0]?.start_ms ?? 0;
  const end = a.phases.at(-1)?.end_ms ?? start;
  const x0 = x(start);
  const x1 = Math.max(x(end), x0 + 3);
  const rects = a.phases.map((p) => {
    const px = x(p.start_ms);
    const w = Math.max(x(p.end_ms) - px, 1.5);
    return `<rect class="ph ph-${p.phase}" x="${px.toFixed(1)}" y="${y}" width="${
      w.toFixed(1)
    }" height="${BAR_H}"/>`;
  }).join("");
  const { cls } = stateStyle(a.outcome);
  const marks: string[] = [];
  if (a.retry) {
    marks.push(
      `<path class="mark-retry" d="M${(x0 - 1).toFixed(1)} ${y - 3}l6 0l-6 6z"/>`,
    );
  }
  const label = `${a.escalated ? "⤴ " : a.retry ? "↻ " : ""}${a.task_id}`;
  const room = x1 - x0 - 8;
  const text = room > 40
    ? `<text class="bar-label" x="${(x0 + 4).toFixed(1)}" y="${y + BAR_H / 2 + 4}">${
      esc(clip(label, Math.floor(room / 6.4)))
    }</text>`
    : "";
  const outcome = `<rect class="end end-${cls}" x="${(x1 - 3).toFixed(1)}" y="${
    y - 2
  }" width="3" height="${BAR_H + 4}"/>`;
  const title = describe(a);
  return `<g class="attempt outcome-${esc(a.outcome)}" data-session="${esc(a.session)}" ` +
    `data-task="${esc(a.task_id)}" role="img" aria-label="${esc(title)}" tabindex="0">` +
    `<title>${esc(title)}</title>${rects}${outcome}${marks.join("")}${text}</g>`;
}

/** The legend of the timeline's colours and marks. */
export function timelineLegend(): string {
  const item = (cls: string, text: string) =>
    `<li><svg width="14" height="14" aria-hidden="true"><rect class="${cls}" width="14" height="14"/></svg> ${text}</li>`;
  return `<ul class="legend" aria-label="Legend">` +
    item("ph ph-spawn", "spawn") + item("ph ph-work", "agent working") +
    item("ph ph-gate", "checks &amp; gates") + item("ph ph-merge", "merge") +
    item("end end-ok", "merged") + item("end end-bad", "refused / failed") +
    `<li>↻ retry</li><li>⤴ escalated (other model or adapter)</li></ul>`;
}
