/**
 * The documented table from an issue's labels to a backlog item's role and priority
 * (README, "GitHub backlog sync"). Case and separators do not matter (`Priority: High`,
 * `priority/high`, `priority-high`). Pure.
 */

/** Role and priority of a synced issue. */
export interface LabelMapping {
  /** Role (default `backend`). */
  role: string;
  /** 1 critical · 2 normal · 3 low (default 2). */
  priority: 1 | 2 | 3;
}

/** Labels naming a role, with their role. `role:X` / `role/X` names any role X. */
export const ROLE_LABELS: Readonly<Record<string, string>> = {
  backend: "backend",
  frontend: "frontend",
  ui: "frontend",
  qa: "qa",
  test: "qa",
  tests: "qa",
  testing: "qa",
  docs: "docs",
  documentation: "docs",
  security: "security",
  devops: "devops",
  ci: "devops",
  infra: "devops",
  infrastructure: "devops",
};

/** Labels naming a priority. */
export const PRIORITY_LABELS: Readonly<Record<string, 1 | 2 | 3>> = {
  p0: 1,
  p1: 1,
  critical: 1,
  urgent: 1,
  "priority:critical": 1,
  "priority:high": 1,
  p2: 2,
  "priority:medium": 2,
  "priority:normal": 2,
  p3: 3,
  p4: 3,
  low: 3,
  "priority:low": 3,
};

const ROLE = /^[a-z][a-z0-9_-]{0,63}$/;

/** A label as the table looks it up: lower case, `priority/high` and `priority - high` → `priority:high`. */
export function normalLabel(label: string): string {
  return label.trim().toLowerCase().replace(/\s*[:/]\s*/g, ":").replace(
    /^(priority|role)\s*-\s*/,
    "$1:",
  );
}

/**
 * Role and priority from labels: the first label that names a role wins, and the most
 * urgent priority label wins.
 */
export function mapLabels(labels: readonly string[]): LabelMapping {
  let role: string | undefined;
  let priority: 1 | 2 | 3 | undefined;
  for (const raw of labels) {
    const label = normalLabel(raw);
    const explicit = /^role:(.+)$/.exec(label)?.[1];
    const named = explicit !== undefined && ROLE.test(explicit) ? explicit : ROLE_LABELS[label];
    if (role === undefined && named !== undefined) role = named;
    const p = PRIORITY_LABELS[label];
    if (p !== undefined && (priority === undefined || p < priority)) priority = p;
  }
  return { role: role ?? "backend", priority: priority ?? 2 };
}
