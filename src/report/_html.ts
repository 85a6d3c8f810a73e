// Small HTML helpers shared by the report and the dashboard: escaping (every value that reaches
// the page — agent text above all — goes through `esc`), number and time formatting, and the
// one mapping from task status / attempt outcome to a label and a colour class.

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for HTML element content and quoted attribute values. */
export function esc(value: unknown): string {
  return String(value ?? "").replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** `value` cut to `max` characters with an ellipsis. */
export function clip(value: string, max: number): string {
  return value.length > max ? value.slice(0, Math.max(0, max - 1)) + "…" : value;
}

/** A dash for unknown numbers, else the number with thousands separators. */
export function num(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  return Math.round(value).toString().replace(/\B(?=(\d{3})+(?!\d))/g, " ");
}

/** USD with four decimals below a dollar, two above; a dash when not reported. */
export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  return value < 1 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

/** `HH:MM:SS` (UTC) of an ISO time, or a dash. */
export function clockTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const m = /T(\d\d:\d\d:\d\d)/.exec(iso);
  return m ? m[1] : iso;
}

/** The label and colour class of a task status or an attempt outcome. */
export function stateStyle(state: string): { label: string; cls: string } {
  switch (state) {
    case "closed":
    case "merged":
      return { label: "merged", cls: "ok" };
    case "no-changes":
      return { label: "no changes", cls: "ok" };
    case "done":
    case "checking":
      // A task is `done` while its work is checked and queued for merge.
      return { label: "checking", cls: "check" };
    case "merging":
      return { label: "merging", cls: "check" };
    case "claimed":
    case "in_progress":
    case "running":
    case "waiting_for_subtasks":
      return { label: state === "claimed" ? "starting" : state.replaceAll("_", " "), cls: "run" };
    case "failed":
    case "refused":
    case "spawn-failed":
    case "orphaned":
      return { label: state.replaceAll("-", " "), cls: "bad" };
    case "blocked":
    case "cancelled":
    case "interrupted":
      return { label: state, cls: "warn" };
    default:
      return { label: state.replaceAll("_", " "), cls: "idle" };
  }
}

/** A status badge (text, not colour alone, carries the meaning). */
export function badge(state: string): string {
  const { label, cls } = stateStyle(state);
  return `<span class="badge b-${cls}">${esc(label)}</span>`;
}

/** A table wrapped in a scrollable, focusable region with an accessible name. */
export function table(label: string, head: string[], rows: string[][], empty: string): string {
  if (rows.length === 0) return `<p class="empty">${esc(empty)}</p>`;
  const th = head.map((h) => `<th scope="col">${esc(h)}</th>`).join("");
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`).join("\n");
  return `<div class="scroll" role="region" aria-label="${esc(label)}" tabindex="0">` +
    `<table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table></div>`;
}
