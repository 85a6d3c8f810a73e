/**
 * The run's side of GitHub (src/github): which repository and API (`github.repo`, else the
 * origin remote; `github.api_url`), the token from a `bernstein conn` connection
 * (`github.connection`: resolved against the chain and this install, recorded) or else from
 * `GITHUB_TOKEN` / `GH_TOKEN` (never printed), the backlog sync at the start of a fresh run (`github.sync_backlog` or
 * `BERNSTEIN_SYNC_GITHUB_BACKLOG`) — whose failure is a loud warning, the run going on with
 * the local backlog — the comment on a synced issue when its task merges
 * (`github.comment_on_merge`, a notification channel), and doctor's line.
 */
import { join } from "node:path";
import { type AuditSink, readAuditKey, resolveAuditKeyPath } from "../audit/mod.ts";
import type { Config } from "../config/mod.ts";
import { BernsteinError, type Warning } from "../errors/mod.ts";
import { ConnectionStore, type ConnectionView } from "../fleet/mod.ts";
import {
  type Fetch,
  GitHubClient,
  GitHubError,
  issueNumberOf,
  parseRepo,
  repoFromRemote,
  type RepoRef,
  syncBacklog,
  syncedUrl,
  webHostOf,
} from "../github/mod.ts";
import {
  backlogFolder,
  type Clock,
  type EnvReader,
  outputText,
  type Random,
  systemRandom,
} from "../io/mod.ts";
import type { Channel, Notification } from "../notify/mod.ts";
import type { DoctorCheck } from "./doctor_check.ts";
import type { Secret } from "./secrets_gate.ts";
import { Git } from "./git.ts";
import type { GitHubSyncSource } from "./current_run.ts";

/** Variables the token is read from, in order. */
export const TOKEN_VARIABLES = ["GITHUB_TOKEN", "GH_TOKEN"] as const;

/** Where the GitHub side of a project points. */
export interface GitHubTarget {
  /** The repository. */
  repo: RepoRef;
  /** Where it came from (`github.repo`, `origin remote`). */
  repoFrom: string;
  /** REST API root. */
  apiUrl: string;
  /** Web host (issue URLs). */
  webHost: string;
  /** The token, when set. */
  token?: string;
  /** Where it came from: its variable, or `connection NAME vN`. */
  tokenFrom?: string;
}

/** Inputs of the GitHub steps of a run. */
export interface GitHubParts {
  /** Effective configuration. */
  config: Config;
  /** Project root. */
  root: string;
  /** The project's `.sdd/` (connection documents). */
  sdd: string;
  /** Environment (the token, or the variable a connection names). */
  env: EnvReader;
  /** Clock. */
  clock: Clock;
  /** HTTP (tests pass a fetch bound to their fake API). */
  fetch?: Fetch;
  /** Randomness (a connection's resolution id); the system's when absent. */
  random?: Random;
  /** The run's open audit chain: a connection's resolution is recorded there (else its own). */
  audit?: AuditSink;
  /** The run, when there is one (recorded with a connection's resolution). */
  runId?: string;
}

async function originUrl(root: string, env: EnvReader): Promise<string | undefined> {
  const git = new Git(root, { env });
  const r = await git.run(["remote", "get-url", "origin"], { allowFailure: true });
  return r.code === 0 ? outputText(r.stdout).trim() : undefined;
}

async function connectionStore(parts: GitHubParts): Promise<ConnectionStore> {
  const auditKey = await readAuditKey(resolveAuditKeyPath(parts.env).path);
  return new ConnectionStore({ sdd: parts.sdd, auditKey, random: parts.random ?? systemRandom });
}

function connectionRefused(name: string, error: Error): Warning {
  return {
    code: "github.connection_refused",
    message: `github.connection '${name}' gives no token: ${error.message}`,
    location: "github.connection",
    hint: `bernstein conn check ${name} says why; GITHUB_TOKEN / GH_TOKEN are not used instead`,
  };
}

/**
 * The token of `github.connection`: the connection resolved (its document checked against the
 * chain and this install's identity, the secret read from its reference; `fleet.conn_resolve`
 * or `fleet.conn_refuse` on the chain). A refusal is a warning, never a fallback to the
 * environment: the operator chose where the token comes from.
 */
async function connectionToken(
  parts: GitHubParts,
  name: string,
): Promise<{ token: string; tokenFrom: string } | Warning> {
  try {
    const store = await connectionStore(parts);
    const minted = await store.resolve(name, {
      taskId: "",
      runId: parts.runId ?? "",
      env: parts.env,
      actor: "orchestrator",
      ...(parts.audit === undefined ? {} : { audit: parts.audit }),
    });
    return { token: minted.value, tokenFrom: `connection ${name} v${minted.version}` };
  } catch (error) {
    if (error instanceof BernsteinError || error instanceof Deno.errors.NotFound) {
      return connectionRefused(name, error);
    }
    throw error;
  }
}

/** The token and where it came from, or why the chosen connection gives none. */
async function tokenOf(
  parts: GitHubParts,
): Promise<{ token?: string; tokenFrom?: string } | Warning> {
  const name = parts.config.github.connection;
  if (name !== undefined) return await connectionToken(parts, name);
  const variable = TOKEN_VARIABLES.find((v) => (parts.env.get(v) ?? "") !== "");
  return variable === undefined
    ? {}
    : { token: parts.env.get(variable) as string, tokenFrom: variable };
}

/**
 * The repository, API and token, or the warning that says why there is none. `resolve: false`
 * (doctor) leaves the token out and resolves no connection.
 */
export async function githubTarget(
  parts: GitHubParts,
  resolve = true,
): Promise<GitHubTarget | Warning> {
  const github = parts.config.github;
  const webHost = webHostOf(github.api_url);
  if (webHost === undefined) {
    return { code: "github.bad_api_url", message: "github.api_url is not a URL" };
  }
  let repo: RepoRef | undefined;
  let repoFrom = "github.repo";
  if (github.repo !== undefined) repo = parseRepo(github.repo);
  else {
    repoFrom = "origin remote";
    const url = await originUrl(parts.root, parts.env);
    repo = url === undefined ? undefined : repoFromRemote(url, webHost);
    if (repo === undefined) {
      return {
        code: "github.no_repo",
        message: url === undefined
          ? "the GitHub repository is unknown: there is no origin remote and github.repo is unset"
          : `the origin remote is not a repository on ${webHost}, and github.repo is unset`,
        location: "github.repo",
        hint: "set github.repo: owner/name",
      };
    }
  }
  if (repo === undefined) {
    return { code: "github.no_repo", message: "github.repo is not owner/name" };
  }
  const token = resolve ? await tokenOf(parts) : {};
  if ("code" in token) return token;
  return { repo, repoFrom, apiUrl: github.api_url, webHost, ...token };
}

/** The REST client of a target, with `tuning.github`'s limits. */
export function githubClient(target: GitHubTarget, parts: GitHubParts): GitHubClient {
  const github = parts.config.tuning.github;
  return new GitHubClient({
    apiUrl: target.apiUrl,
    ...(target.token === undefined ? {} : { token: target.token }),
    fetch: parts.fetch ?? ((url, init) => fetch(url, init)),
    clock: parts.clock,
    requestTimeoutMs: github.request_timeout_s * 1000,
    maxRateWaitMs: github.max_rate_wait_s * 1000,
  });
}

function syncFailed(message: string, hint?: string): Warning {
  return {
    code: "github.sync_failed",
    message: `!!! GitHub backlog sync FAILED: ${message}; the run goes on with the local ` +
      ".sdd/backlog/open/",
    location: "github.sync_backlog",
    ...(hint === undefined ? {} : { hint }),
  };
}

/**
 * Pulls the repository's open issues into `.sdd/backlog/open/` (before the run plans its
 * work). Returns what to tell the operator (one line of what was synced, or why it failed)
 * and, when it synced, the counts the run records with its source.
 */
export async function syncGithubBacklog(
  parts: GitHubParts,
): Promise<{ warnings: Warning[]; synced?: GitHubSyncSource }> {
  const target = await githubTarget(parts);
  if (!("repo" in target)) return { warnings: [syncFailed(target.message, target.hint)] };
  const out: Warning[] = [];
  if (target.token === undefined) {
    out.push({
      code: "github.no_token",
      message: "GITHUB_TOKEN and GH_TOKEN are unset: syncing without a token (60 requests an " +
        "hour; private repositories are not visible)",
      location: "github.sync_backlog",
    });
  }
  try {
    const r = await syncBacklog({
      sdd: parts.sdd,
      repo: target.repo,
      webHost: target.webHost,
      client: githubClient(target, parts),
      ...(parts.config.github.labels === undefined ? {} : { labels: parts.config.github.labels }),
      maxIssues: parts.config.tuning.github.max_issues,
    });
    out.push({
      code: "github.synced",
      message: `synced ${r.open} open issue(s) of ${r.repo} into .sdd/backlog/open/ ` +
        `(${r.created.length} new, ${r.updated.length} updated, ${r.unchanged} unchanged, ` +
        `${r.closed.length} closed${r.dropped.length ? `, ${r.dropped.length} unlabelled` : ""})` +
        (r.truncated
          ? `; more than tuning.github.max_issues (${parts.config.tuning.github.max_issues}) are open`
          : "") +
        ": issue text becomes agents' work",
      location: "github.sync_backlog",
    });
    for (const s of r.skipped) {
      out.push({ code: "github.item_skipped", message: s.reason, location: ".sdd/backlog/open" });
    }
    const synced: GitHubSyncSource = {
      repo: r.repo,
      open: r.open,
      created: r.created.length,
      updated: r.updated.length,
      closed: r.closed.length,
    };
    return { warnings: out, synced };
  } catch (error) {
    if (!(error instanceof GitHubError)) throw error;
    out.push(syncFailed(`${target.repo.owner}/${target.repo.name}: ${error.message}`));
  }
  return { warnings: out };
}

/** Ids of synced items (open and closed) with the issue URL each names. */
async function syncedItems(sdd: string): Promise<Set<string>> {
  const ids = new Set<string>();
  for (const folder of ["open", "closed"] as const) {
    try {
      for await (const e of Deno.readDir(backlogFolder(sdd, folder))) {
        const id = e.name.replace(/\.md$/, "");
        if (!e.isFile || !e.name.endsWith(".md") || issueNumberOf(id) === undefined) continue;
        const text = await Deno.readTextFile(join(backlogFolder(sdd, folder), e.name));
        if (syncedUrl(text) !== undefined) ids.add(id);
      }
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    }
  }
  return ids;
}

/** The comment a merged task leaves on its issue. */
export function mergeComment(n: Notification): string {
  const d = n.details;
  const lines = [
    `bernstein merged the work for this issue (task \`${String(d.task_id)}\`` +
    `${n.run === null ? "" : ` in run \`${n.run.id}\``}).`,
    "",
    `- Commit: \`${String(d.sha)}\`${n.run?.branch ? ` on branch \`${n.run.branch}\`` : ""}`,
    `- Files changed: ${String(d.files)}`,
    "- Verification: the task's completion signals and quality gates passed before the merge; " +
    "the run's HMAC-chained audit log and signed lineage log record it " +
    "(`bernstein audit verify`, `bernstein lineage verify`).",
  ];
  return lines.join("\n");
}

/**
 * The `github.comment_on_merge` channel: on `task.merged` of a synced item (`gh-<n>`), a
 * comment on issue n. Tasks that are not synced issues are not its business.
 */
export async function githubCommentChannel(
  parts: GitHubParts,
): Promise<Channel | Warning> {
  const target = await githubTarget(parts);
  if (!("repo" in target)) {
    return {
      ...target,
      code: "github.comment_off",
      message: `${target.message}: no comment is posted`,
    };
  }
  if (target.token === undefined) {
    return {
      code: "github.comment_off",
      message: "github.comment_on_merge needs GITHUB_TOKEN or GH_TOKEN: no comment is posted",
      location: "github.comment_on_merge",
    };
  }
  const synced = await syncedItems(parts.sdd);
  const client = githubClient(target, parts);
  const repo = target.repo;
  return {
    name: "github",
    target: `${target.webHost}/${repo.owner}/${repo.name} (issue comments)`,
    events: new Set(["task.merged"]),
    accepts: (n) => synced.has(String(n.details.task_id)),
    async send(n, signal) {
      const number = issueNumberOf(String(n.details.task_id)) as number;
      try {
        await client.comment(repo, number, mergeComment(n), signal);
        return { ok: true, status: `commented on #${number}` };
      } catch (error) {
        if (!(error instanceof GitHubError)) throw error;
        return {
          ok: false,
          retryable: error.code === "github.unreachable",
          status: error.status === null ? null : `HTTP ${error.status}`,
          error: error.message,
        };
      }
    },
  };
}

/**
 * The value behind `github.connection`, for the secrets merge gate only (a diff holding it is
 * refused): read from the document's reference without resolving it — it is not used, so no
 * resolution is recorded. None when unset, unknown or unreadable.
 */
export async function githubConnectionSecrets(parts: GitHubParts): Promise<Secret[]> {
  const name = parts.config.github.connection;
  if (name === undefined) return [];
  let ref: string;
  try {
    ref = (await (await connectionStore(parts)).show(name)).secret_ref;
  } catch (error) {
    if (error instanceof BernsteinError || error instanceof Deno.errors.NotFound) return [];
    throw error;
  }
  const value = ref.startsWith("env:")
    ? parts.env.get(ref.slice("env:".length))
    : await Deno.readTextFile(ref.slice("file:".length)).then((t) => t.trim(), () => undefined);
  return value === undefined || value.trim() === ""
    ? []
    : [{ name: `the token of connection ${name}`, value }];
}

/** What doctor says of `github.connection` (shown, never resolved: no secret is read). */
async function connectionShown(
  parts: GitHubParts,
  name: string,
): Promise<{ text: string; problem?: string; hint?: string }> {
  let view: ConnectionView;
  try {
    view = await (await connectionStore(parts)).show(name);
  } catch (error) {
    if (!(error instanceof BernsteinError || error instanceof Deno.errors.NotFound)) throw error;
    return {
      text: `connection ${name}`,
      problem: (error as Error).message,
      hint: `bernstein conn create ${name} --secret env:GITHUB_TOKEN (or file:/path)`,
    };
  }
  const text = `connection ${name} v${view.version} (${view.secret_ref})`;
  return view.signed_here ? { text } : {
    text,
    problem: "its document is not signed by this install: it will not resolve",
    hint: `bernstein conn rotate ${name} --secret … on this install`,
  };
}

/** `bernstein doctor`'s GitHub line: sync and comment settings, repository, token source. */
export async function githubDoctor(parts: GitHubParts): Promise<DoctorCheck[]> {
  const github = parts.config.github;
  if (!github.sync_backlog && !github.comment_on_merge) {
    return [{ name: "github", status: "OK", detail: "backlog sync off (github.sync_backlog)" }];
  }
  const target = await githubTarget(parts, false);
  if (!("repo" in target)) {
    return [{
      name: "github",
      status: "WARN",
      detail: target.message,
      ...(target.hint === undefined ? {} : { hint: target.hint }),
    }];
  }
  const what = [
    github.sync_backlog ? "backlog sync on" : "",
    github.comment_on_merge ? "comments on merge" : "",
  ]
    .filter((x) => x !== "").join(", ");
  const variable = TOKEN_VARIABLES.find((v) => (parts.env.get(v) ?? "") !== "");
  const token = github.connection !== undefined
    ? await connectionShown(parts, github.connection)
    : variable !== undefined
    ? { text: variable }
    : {
      text: "none",
      hint: "set GITHUB_TOKEN or GH_TOKEN, or github.connection (without a token: 60 requests " +
        "an hour, public repositories only, no comments)",
    };
  const detail = `${what}: ${target.repo.owner}/${target.repo.name} (${target.repoFrom}) via ` +
    `${target.apiUrl}; token: ${token.text}` +
    (token.problem ? `: ${token.problem}` : "") +
    (github.labels?.length ? `; labels: ${github.labels.join(", ")}` : "");
  if (token.hint !== undefined) {
    return [{ name: "github", status: "WARN", detail, hint: token.hint }];
  }
  return [{ name: "github", status: "OK", detail }];
}
