/**
 * A GitHub issue as a backlog item (`.sdd/backlog/open/gh-<number>.md`): Markdown with YAML
 * front matter whose first line marks the file as synced (the sync only ever rewrites, moves
 * or removes files carrying it), the title, the role and priority from the label table, and
 * the issue's body followed by its URL and labels. Issue text is written by whoever can open
 * an issue: it is cleaned of control characters, cut to size and quoted so it cannot add
 * front-matter keys. Pure.
 */
import { mapLabels } from "./labels.ts";
import type { RepoRef } from "./remote.ts";

/** One issue, as the sync uses it. */
export interface Issue {
  /** Issue number. */
  number: number;
  /** Title. */
  title: string;
  /** Body (Markdown), or "" when empty. */
  body: string;
  /** Label names. */
  labels: string[];
  /** open or closed. */
  state: "open" | "closed";
}

/** The first front-matter line of a synced item, before its issue URL. */
export const SYNC_MARKER = "# bernstein github-sync:";

/** Longest body kept (characters); the rest is cut with a note. */
export const MAX_BODY_CHARS = 32_000;

/** Longest title kept (characters). */
export const MAX_TITLE_CHARS = 200;

/** Backlog id of issue `number`. */
export function itemId(number: number): string {
  return `gh-${number}`;
}

/** The issue number of a synced item id, or undefined. */
export function issueNumberOf(id: string): number | undefined {
  const m = /^gh-([1-9][0-9]{0,9})$/.exec(id);
  return m ? Number(m[1]) : undefined;
}

/** The web URL of an issue (built here, never taken from an answer). */
export function issueUrl(webHost: string, repo: RepoRef, number: number): string {
  return `https://${webHost}/${repo.owner}/${repo.name}/issues/${number}`;
}

function cleanLine(text: string, max: number): string {
  // deno-lint-ignore no-control-regex
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
  return flat.length <= max ? flat : flat.slice(0, max - 1) + "…";
}

function cleanBody(text: string): string {
  const clean = text.replace(/\r\n?/g, "\n")
    // deno-lint-ignore no-control-regex
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029]/g, "").trim();
  if (clean.length <= MAX_BODY_CHARS) return clean;
  return clean.slice(0, MAX_BODY_CHARS) + "\n\n[… cut by bernstein: the issue is longer]";
}

/**
 * The file text of an issue's backlog item.
 *
 * @example
 * ```ts
 * itemText({ number: 7, title: "Fix login", body: "", labels: ["P1"], state: "open" },
 *   { owner: "acme", name: "widget" }, "github.com");
 * ```
 */
export function itemText(issue: Issue, repo: RepoRef, webHost: string): string {
  const url = issueUrl(webHost, repo, issue.number);
  const { role, priority } = mapLabels(issue.labels);
  const title = cleanLine(issue.title, MAX_TITLE_CHARS) || `GitHub issue #${issue.number}`;
  const labels = issue.labels.map((l) => cleanLine(l, 100)).filter((l) => l !== "");
  const body = cleanBody(issue.body);
  return [
    "---",
    `${SYNC_MARKER} ${url}`,
    "# Written by the GitHub backlog sync; the next sync overwrites changes made here.",
    `title: ${JSON.stringify(title)}`,
    `role: ${role}`,
    `priority: ${priority}`,
    "---",
    body === "" ? "(The issue has no description.)" : body,
    "",
    `GitHub issue: ${url}`,
    ...(labels.length === 0 ? [] : [`Labels: ${labels.join(", ")}`]),
    "",
  ].join("\n");
}

/** The issue URL a synced item's marker names, or undefined for any other file. */
export function syncedUrl(text: string): string | undefined {
  const lines = text.split("\n", 3);
  if (lines[0]?.trimEnd() !== "---") return undefined;
  const line = lines[1]?.trimEnd() ?? "";
  return line.startsWith(`${SYNC_MARKER} `) ? line.slice(SYNC_MARKER.length + 1) : undefined;
}
