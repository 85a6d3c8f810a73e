/**
 * The backlog sync: a repository's open issues become `.sdd/backlog/open/gh-<number>.md`
 * (created, or rewritten when the issue changed), synced items whose issue closed (or was
 * deleted) move to `.sdd/backlog/closed/`, and a reopened issue comes back. Only files that
 * carry the sync's marker are ever rewritten, moved or removed: a hand-written `gh-7.md` is
 * left alone and reported. The issues are listed first and the files written after, so a
 * failed listing changes nothing.
 */
import { join } from "node:path";
import { backlogFolder, pathExists, readFileIfExists, writeFileAtomic } from "../io/mod.ts";
import type { GitHubClient } from "./client.ts";
import { type Issue, issueNumberOf, itemId, itemText, syncedUrl } from "./item.ts";
import { normalLabel } from "./labels.ts";
import type { RepoRef } from "./remote.ts";

/** Inputs of {@linkcode syncBacklog}. */
export interface SyncOptions {
  /** `.sdd/`. */
  sdd: string;
  /** The repository. */
  repo: RepoRef;
  /** Its web host (issue URLs). */
  webHost: string;
  /** The API. */
  client: GitHubClient;
  /** Only issues carrying one of these labels (`github.labels`). */
  labels?: readonly string[];
  /** Most issues taken (`tuning.github.max_issues`). */
  maxIssues: number;
}

/** What a sync did. */
export interface SyncReport {
  /** `owner/name`. */
  repo: string;
  /** Open issues taken. */
  open: number;
  /** Item ids written for the first time. */
  created: string[];
  /** Item ids rewritten (the issue changed, or it was reopened). */
  updated: string[];
  /** Items already up to date. */
  unchanged: number;
  /** Item ids moved to closed/ (issue closed or gone). */
  closed: string[];
  /** Item ids removed from open/ (the issue no longer carries a sync label). */
  dropped: string[];
  /** Files left alone, and why. */
  skipped: { id: string; reason: string }[];
  /** More open issues than `maxIssues`: the rest were not taken. */
  truncated: boolean;
}

async function readText(path: string): Promise<string | undefined> {
  const bytes = await readFileIfExists(path);
  return bytes === undefined ? undefined : new TextDecoder().decode(bytes);
}

async function syncedIds(dir: string): Promise<string[]> {
  const ids: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isFile || !e.name.endsWith(".md")) continue;
      const id = e.name.slice(0, -3);
      if (issueNumberOf(id) === undefined) continue;
      if (syncedUrl(await readText(join(dir, e.name)) ?? "") !== undefined) ids.push(id);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return ids.sort();
}

function labelFilter(labels: readonly string[] | undefined): (issue: Issue) => boolean {
  if (labels === undefined || labels.length === 0) return () => true;
  const wanted = new Set(labels.map(normalLabel));
  return (issue) => issue.labels.some((l) => wanted.has(normalLabel(l)));
}

/**
 * Pulls the repository's open issues into the backlog.
 *
 * @example
 * ```ts ignore
 * const report = await syncBacklog({ sdd, repo, webHost: "github.com", client, maxIssues: 500 });
 * ```
 */
export async function syncBacklog(options: SyncOptions): Promise<SyncReport> {
  const { sdd, repo, webHost, client } = options;
  const openDir = backlogFolder(sdd, "open");
  const closedDir = backlogFolder(sdd, "closed");
  const listed = await client.openIssues(repo, options.maxIssues);
  const wanted = labelFilter(options.labels);
  const issues = listed.issues.filter(wanted);
  const report: SyncReport = {
    repo: `${repo.owner}/${repo.name}`,
    open: issues.length,
    created: [],
    updated: [],
    unchanged: 0,
    closed: [],
    dropped: [],
    skipped: [],
    truncated: listed.truncated,
  };
  await Deno.mkdir(openDir, { recursive: true });
  await Deno.mkdir(closedDir, { recursive: true });
  const openNow = new Set<string>();
  for (const issue of issues) {
    const id = itemId(issue.number);
    openNow.add(id);
    await writeItem(id, itemText(issue, repo, webHost), openDir, closedDir, report);
  }
  for (const id of await syncedIds(openDir)) {
    if (openNow.has(id)) continue;
    const issue = await client.issue(repo, issueNumberOf(id) as number);
    if (issue === "gone" || issue.state === "closed") {
      await Deno.rename(join(openDir, `${id}.md`), join(closedDir, `${id}.md`));
      report.closed.push(id);
    } else if (!wanted(issue)) {
      await Deno.remove(join(openDir, `${id}.md`));
      report.dropped.push(id);
    }
    // Still open and wanted but past max_issues: left as it is.
  }
  return report;
}

async function writeItem(
  id: string,
  text: string,
  openDir: string,
  closedDir: string,
  report: SyncReport,
): Promise<void> {
  const path = join(openDir, `${id}.md`);
  const existing = await readText(path);
  if (existing !== undefined && syncedUrl(existing) === undefined) {
    report.skipped.push({ id, reason: `${id}.md was not written by the sync: left as it is` });
    return;
  }
  const closedPath = join(closedDir, `${id}.md`);
  const reopened = existing === undefined && await pathExists(closedPath) &&
    syncedUrl(await readText(closedPath) ?? "") !== undefined;
  if (existing === text) {
    report.unchanged++;
    return;
  }
  await writeFileAtomic(path, text);
  if (reopened) await Deno.remove(closedPath);
  (existing === undefined && !reopened ? report.created : report.updated).push(id);
}
