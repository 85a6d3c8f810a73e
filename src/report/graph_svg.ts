// The task graph as inline SVG: one column per dependency depth (headed by the plan stage when
// the column holds one stage), one node per task coloured by its state, an arrow per
// dependency. Each node has a <title> and an aria-label; the tasks table says the same in text.
import { clip, esc, stateStyle } from "./_html.ts";
import type { RunModel, TaskView } from "./model.ts";

const NODE_W = 210;
const NODE_H = 46;
const COL_GAP = 64;
const ROW_GAP = 12;
const HEAD_H = 26;
const PAD = 8;

/** The task graph as an SVG element (empty-state text when there is no task). */
export function taskGraphSvg(model: RunModel, options: { linkTasks?: boolean } = {}): string {
  const tasks = model.tasks;
  if (tasks.length === 0) return `<p class="empty">No task yet.</p>`;
  const columns: TaskView[][] = [];
  for (const t of tasks) (columns[t.depth] ??= []).push(t);
  const pos = new Map<string, { x: number; y: number }>();
  columns.forEach((col, c) =>
    col.forEach((t, r) =>
      pos.set(t.id, { x: PAD + c * (NODE_W + COL_GAP), y: HEAD_H + r * (NODE_H + ROW_GAP) })
    )
  );
  const rows = Math.max(...columns.map((c) => c?.length ?? 0));
  const width = PAD * 2 + columns.length * NODE_W + (columns.length - 1) * COL_GAP;
  const height = HEAD_H + rows * (NODE_H + ROW_GAP) + PAD;
  const heads = columns.map((col, c) => {
    const stages = new Set(col.map((t) => t.stage ?? ""));
    const name = stages.size === 1 && [...stages][0] !== ""
      ? [...stages][0]
      : c === 0
      ? "ready at start"
      : `after ${c} step${c > 1 ? "s" : ""}`;
    return `<text class="col-head" x="${PAD + c * (NODE_W + COL_GAP)}" y="16">${
      esc(clip(name, 30))
    }</text>`;
  }).join("");
  const edges: string[] = [];
  for (const t of tasks) {
    const to = pos.get(t.id);
    if (to === undefined) continue;
    for (const dep of t.depends_on) {
      const from = pos.get(dep);
      if (from === undefined) continue;
      const x1 = from.x + NODE_W;
      const y1 = from.y + NODE_H / 2;
      const x2 = to.x - 4;
      const y2 = to.y + NODE_H / 2;
      const mid = (x1 + x2) / 2;
      edges.push(
        `<path class="edge" d="M${x1} ${y1}C${mid} ${y1} ${mid} ${y2} ${x2} ${y2}" marker-end="url(#arrow)"/>`,
      );
    }
  }
  const nodes = tasks.map((t) => node(t, pos.get(t.id) ?? { x: 0, y: 0 }, options.linkTasks));
  return `<svg class="graph" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" ` +
    `role="group" aria-label="Task graph: ${tasks.length} task(s) in ${columns.length} column(s)" ` +
    `xmlns="http://www.w3.org/2000/svg"><defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" ` +
    `markerWidth="7" markerHeight="7" orient="auto"><path class="arrow" d="M0 0L8 4L0 8z"/></marker></defs>` +
    `${heads}${edges.join("")}\n${nodes.join("\n")}\n</svg>`;
}

function node(t: TaskView, p: { x: number; y: number }, link = false): string {
  const { label, cls } = stateStyle(t.status);
  const deps = t.depends_on.length > 0 ? `; after ${t.depends_on.join(", ")}` : "";
  const title = `${t.id}: ${t.title} (${label}${
    t.attempts > 1 ? `, ${t.attempts} attempts` : ""
  })${deps}`;
  const body =
    `<rect class="node n-${cls}" x="${p.x}" y="${p.y}" width="${NODE_W}" height="${NODE_H}" rx="6"/>` +
    `<text class="node-title" x="${p.x + 10}" y="${p.y + 19}">${esc(clip(t.title, 28))}</text>` +
    `<text class="node-sub" x="${p.x + 10}" y="${p.y + 36}">${esc(clip(t.id, 20))} · ${
      esc(label)
    }</text>`;
  const inner = `<title>${esc(title)}</title>${body}`;
  const g = `<g class="task-node" data-task="${esc(t.id)}" data-state="${esc(t.status)}" ` +
    `role="img" aria-label="${esc(title)}">${inner}</g>`;
  return link ? `<a href="#task-${esc(t.id)}">${g}</a>` : g;
}
