/**
 * GitHub: the opt-in backlog sync (open issues → `.sdd/backlog/open/gh-<n>.md`, closed ones
 * → `closed/`) and the issue comment on merge, over a small REST client that keeps its token
 * to the configured API, pages, waits out short rate limits and refuses long ones. The
 * repository comes from `github.repo` or the origin remote; the label table maps labels to
 * roles and priorities. The run wires it (src/orchestrator/github_backlog.ts).
 *
 * @example
 * ```ts ignore
 * const client = new GitHubClient({ apiUrl: "https://api.github.com", token, fetch,
 *   clock: systemClock, requestTimeoutMs: 30_000, maxRateWaitMs: 300_000 });
 * const report = await syncBacklog({ sdd, repo: { owner: "acme", name: "widget" },
 *   webHost: "github.com", client, maxIssues: 500 });
 * ```
 *
 * @module
 */
export { type Fetch, GitHubClient, GitHubError } from "./client.ts";
export { issueNumberOf, syncedUrl } from "./item.ts";
export { mapLabels } from "./labels.ts";
export { parseRepo, repoFromRemote, type RepoRef, webHostOf } from "./remote.ts";
export { syncBacklog, type SyncReport } from "./sync.ts";
