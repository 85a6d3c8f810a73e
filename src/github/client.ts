/**
 * A small GitHub REST client for the backlog sync and the merge comment: the token as a
 * bearer header (never in a URL, an error or a log), answers checked with zod, pagination by
 * the `Link` header (only to pages of the same API), redirects followed only within the same
 * API, rate limits waited out when the wait is short (`Retry-After`, or
 * `x-ratelimit-remaining: 0` until `x-ratelimit-reset`) and refused with the reset time when
 * it is not, 5xx and lost connections retried with a doubling backoff, answers read up to a
 * size cap. Time comes from the injected clock.
 */
import { z } from "zod";
import { concatBytes } from "../canonical/mod.ts";
import type { Clock } from "../io/mod.ts";
import { VERSION } from "../meta/mod.ts";
import type { Issue } from "./item.ts";
import type { RepoRef } from "./remote.ts";

/** The HTTP edge. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Why a GitHub request failed. */
export type GitHubErrorCode =
  | "github.bad_token"
  | "github.forbidden"
  | "github.not_found"
  | "github.rate_limited"
  | "github.unreachable"
  | "github.bad_response";

/** A failed GitHub request, with a message fit to print (no token, no secret). */
export class GitHubError extends Error {
  /** Stable code. */
  readonly code: GitHubErrorCode;
  /** HTTP status, when there was an answer. */
  readonly status: number | null;

  constructor(code: GitHubErrorCode, message: string, status: number | null = null) {
    super(message);
    this.name = "GitHubError";
    this.code = code;
    this.status = status;
  }
}

/** Options of {@linkcode GitHubClient}. */
export interface GitHubClientOptions {
  /** REST API root (`https://api.github.com`, `https://HOST/api/v3`). */
  apiUrl: string;
  /** Token, when one is set. */
  token?: string;
  /** HTTP. */
  fetch: Fetch;
  /** Clock (deadlines, backoff, rate-limit waits). */
  clock: Clock;
  /** Deadline of one request, ms. */
  requestTimeoutMs: number;
  /** Longest rate-limit wait, ms; a longer one fails the request. */
  maxRateWaitMs: number;
  /** Largest answer read, bytes (default 8 MiB). */
  maxBodyBytes?: number;
  /** Attempts of a request that meets a 5xx or no connection (default 3). */
  attempts?: number;
  /** Told before each wait (rate limit or backoff). */
  onWait?: (ms: number, why: string) => void;
}

const LabelSchema = z.union([z.string(), z.object({ name: z.string() }).passthrough()]);
const IssueSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  body: z.string().nullable().optional(),
  labels: z.array(LabelSchema).optional(),
  state: z.enum(["open", "closed"]),
  pull_request: z.unknown().optional(),
}).passthrough();

function issueOf(raw: z.infer<typeof IssueSchema>): Issue {
  return {
    number: raw.number,
    title: raw.title,
    body: raw.body ?? "",
    labels: (raw.labels ?? []).map((l) => typeof l === "string" ? l : l.name),
    state: raw.state,
  };
}

/** The `rel="next"` URL of a `Link` header. */
export function nextLink(link: string | null): string | undefined {
  if (link === null) return undefined;
  for (const part of link.split(",")) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (m) return m[1];
  }
  return undefined;
}

/** The wait after a secondary rate limit that names no time (GitHub: at least a minute). */
const SECONDARY_WAIT_MS = 60_000;

/** Whether an answer's message says a secondary (abuse) rate limit was hit. */
function secondaryLimit(json: unknown): boolean {
  const message = typeof json === "object" && json !== null
    ? (json as { message?: unknown }).message
    : undefined;
  return typeof message === "string" && /secondary rate limit|abuse/i.test(message);
}

/** Rate-limit waits one request accepts before it gives up. */
const MAX_RATE_WAITS = 5;

interface Answer {
  status: number;
  headers: Headers;
  json: unknown;
}

/**
 * GitHub's REST API.
 *
 * @example
 * ```ts ignore
 * const gh = new GitHubClient({ apiUrl, token, fetch, clock: systemClock,
 *   requestTimeoutMs: 30_000, maxRateWaitMs: 300_000 });
 * const { issues } = await gh.openIssues({ owner: "acme", name: "widget" }, 500);
 * ```
 */
export class GitHubClient {
  readonly #o: GitHubClientOptions;
  readonly #api: URL;

  constructor(options: GitHubClientOptions) {
    this.#o = options;
    this.#api = new URL(options.apiUrl.replace(/\/+$/, "") + "/");
  }

  /** Open issues (not pull requests), oldest first as GitHub pages them, at most `max`. */
  async openIssues(repo: RepoRef, max: number): Promise<{ issues: Issue[]; truncated: boolean }> {
    const issues: Issue[] = [];
    let url: string | undefined = this.#url(
      `repos/${repo.owner}/${repo.name}/issues?state=open&per_page=100&sort=created&direction=asc`,
    );
    while (url !== undefined) {
      const answer = await this.#request("GET", url);
      const page = z.array(IssueSchema).safeParse(answer.json);
      if (!page.success) throw this.#badShape(url, page.error);
      for (const raw of page.data) {
        if (raw.pull_request !== undefined) continue;
        if (issues.length >= max) return { issues, truncated: true };
        issues.push(issueOf(raw));
      }
      url = this.#sameApi(nextLink(answer.headers.get("link")), "a next page");
    }
    return { issues, truncated: false };
  }

  /** One issue, or "gone" when it was deleted or moved away (404, 410). */
  async issue(repo: RepoRef, number: number): Promise<Issue | "gone"> {
    const url = this.#url(`repos/${repo.owner}/${repo.name}/issues/${number}`);
    try {
      const answer = await this.#request("GET", url);
      const parsed = IssueSchema.safeParse(answer.json);
      if (!parsed.success) throw this.#badShape(url, parsed.error);
      return issueOf(parsed.data);
    } catch (error) {
      if (error instanceof GitHubError && (error.status === 404 || error.status === 410)) {
        return "gone";
      }
      throw error;
    }
  }

  /** Adds a comment to an issue. */
  async comment(repo: RepoRef, number: number, body: string, signal?: AbortSignal): Promise<void> {
    const url = this.#url(`repos/${repo.owner}/${repo.name}/issues/${number}/comments`);
    await this.#request("POST", url, { body }, signal);
  }

  #url(path: string): string {
    return new URL(path, this.#api).href;
  }

  /** `url` when it is a page of this API, else a refusal (a token must not leave it). */
  #sameApi(url: string | undefined, what: string): string | undefined {
    if (url === undefined) return undefined;
    let parsed: URL;
    try {
      parsed = new URL(url, this.#api);
    } catch {
      throw new GitHubError("github.bad_response", `GitHub gave ${what} that is not a URL`);
    }
    if (parsed.origin !== this.#api.origin || !parsed.pathname.startsWith(this.#api.pathname)) {
      throw new GitHubError(
        "github.bad_response",
        `GitHub gave ${what} outside ${this.#api.origin}${this.#api.pathname} ` +
          `(${parsed.origin}): not followed, the token stays with the API`,
      );
    }
    return parsed.href;
  }

  #badShape(url: string, error: z.ZodError): GitHubError {
    const issue = error.issues[0];
    return new GitHubError(
      "github.bad_response",
      `unexpected answer from ${new URL(url).pathname}: ${issue?.path.join(".") || "(root)"}: ` +
        (issue?.message ?? "invalid"),
    );
  }

  async #request(
    method: "GET" | "POST",
    url: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<Answer> {
    const attempts = this.#o.attempts ?? 3;
    let target = url;
    let redirects = 0;
    let rateWaits = 0;
    for (let attempt = 1;; attempt++) {
      let answer: Answer | GitHubError;
      try {
        answer = await this.#once(method, target, body, signal);
      } catch (error) {
        if (error instanceof GitHubError) throw error;
        answer = new GitHubError(
          "github.unreachable",
          `no answer from ${new URL(target).origin}: ${(error as Error).message}`,
        );
      }
      if (!(answer instanceof GitHubError)) {
        if (answer.status >= 300 && answer.status < 400) {
          const moved = this.#sameApi(answer.headers.get("location") ?? undefined, "a redirect");
          if (moved === undefined || ++redirects > 3) {
            throw new GitHubError("github.bad_response", "too many redirects", answer.status);
          }
          target = moved;
          attempt--;
          continue;
        }
        const wait = this.#rateWait(answer);
        if (wait !== undefined && ++rateWaits > MAX_RATE_WAITS) {
          throw new GitHubError(
            "github.rate_limited",
            `GitHub still limits the rate after ${MAX_RATE_WAITS} waits`,
            answer.status,
          );
        }
        if (wait !== undefined) {
          this.#o.onWait?.(wait, "rate limit");
          await this.#o.clock.sleep(wait, signal);
          attempt--;
          continue;
        }
        if (answer.status < 300) return answer;
        answer = this.#failure(answer);
      }
      const retryable = answer.code === "github.unreachable" ||
        (answer.status !== null && answer.status >= 500);
      if (!retryable || attempt >= attempts || signal?.aborted) throw answer;
      const backoff = 1000 * 2 ** (attempt - 1);
      this.#o.onWait?.(backoff, answer.message);
      await this.#o.clock.sleep(backoff, signal);
    }
  }

  /** How long a rate-limited answer asks to wait, if it is one; throws when too long. */
  #rateWait(answer: Answer): number | undefined {
    if (answer.status !== 403 && answer.status !== 429) return undefined;
    const h = answer.headers;
    const nowMs = this.#o.clock.nowMs();
    let waitMs: number | undefined;
    let until: string | undefined;
    const after = h.get("retry-after");
    if (after !== null && /^\d+$/.test(after.trim())) {
      waitMs = Number(after.trim()) * 1000;
    } else if (h.get("x-ratelimit-remaining") === "0") {
      const reset = Number(h.get("x-ratelimit-reset"));
      if (Number.isFinite(reset)) {
        waitMs = Math.max(0, reset * 1000 - nowMs) + 1000;
        until = new Date(reset * 1000).toISOString();
      }
    }
    // A secondary limit without either header: GitHub asks for at least a minute.
    if (waitMs === undefined && (answer.status === 429 || secondaryLimit(answer.json))) {
      waitMs = SECONDARY_WAIT_MS;
    }
    if (waitMs === undefined) return undefined;
    if (waitMs > this.#o.maxRateWaitMs) {
      throw new GitHubError(
        "github.rate_limited",
        `GitHub's rate limit is spent${until ? ` until ${until}` : ""}: waiting ` +
          `${Math.ceil(waitMs / 1000)} s is more than tuning.github.max_rate_wait_s ` +
          `(${this.#o.maxRateWaitMs / 1000})`,
        answer.status,
      );
    }
    return waitMs;
  }

  #failure(answer: Answer): GitHubError {
    const said = typeof answer.json === "object" && answer.json !== null &&
        typeof (answer.json as { message?: unknown }).message === "string"
      ? `: ${String((answer.json as { message: string }).message).slice(0, 200)}`
      : "";
    const s = answer.status;
    if (s === 401) {
      return new GitHubError(
        "github.bad_token",
        `GitHub refused the token (HTTP 401${said}); check GITHUB_TOKEN / GH_TOKEN`,
        s,
      );
    }
    if (s === 403) {
      return new GitHubError(
        "github.forbidden",
        `GitHub refused the request (HTTP 403${said}); the token may lack the issues scope`,
        s,
      );
    }
    if (s === 404 || s === 410) {
      return new GitHubError(
        "github.not_found",
        `GitHub has no such repository or issue, or the token cannot see it (HTTP ${s})`,
        s,
      );
    }
    return new GitHubError(
      s >= 500 ? "github.unreachable" : "github.bad_response",
      `GitHub answered HTTP ${s}${said}`,
      s,
    );
  }

  async #once(
    method: string,
    url: string,
    body: unknown,
    signal: AbortSignal | undefined,
  ): Promise<Answer> {
    const abort = new AbortController();
    const stop = () => abort.abort();
    signal?.addEventListener("abort", stop, { once: true });
    const timer = new AbortController();
    const timeoutMs = this.#o.requestTimeoutMs;
    const timedOut = this.#o.clock.sleep(timeoutMs, timer.signal).then(() => {
      if (!timer.signal.aborted) abort.abort();
    });
    try {
      const headers: Record<string, string> = {
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": `bernstein/${VERSION}`,
      };
      if (this.#o.token !== undefined) headers["Authorization"] = `Bearer ${this.#o.token}`;
      if (body !== undefined) headers["Content-Type"] = "application/json";
      const response = await this.#o.fetch(url, {
        method,
        headers,
        redirect: "manual",
        signal: abort.signal,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await this.#readCapped(response);
      let json: unknown = null;
      if (text !== "") {
        try {
          json = JSON.parse(text);
        } catch {
          if (response.ok) {
            throw new GitHubError("github.bad_response", "GitHub's answer is not JSON");
          }
        }
      }
      return { status: response.status, headers: response.headers, json };
    } catch (error) {
      if (abort.signal.aborted && !(signal?.aborted ?? false)) {
        throw new Error(`no answer within ${timeoutMs / 1000} s`);
      }
      throw error;
    } finally {
      timer.abort();
      await timedOut;
      signal?.removeEventListener("abort", stop);
    }
  }

  async #readCapped(response: Response): Promise<string> {
    const max = this.#o.maxBodyBytes ?? 8 * 1024 * 1024;
    if (response.body === null) return "";
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.length;
      if (total > max) {
        await reader.cancel().catch(() => {});
        throw new GitHubError(
          "github.bad_response",
          `GitHub's answer is larger than ${max} bytes: not read`,
          response.status,
        );
      }
      chunks.push(value);
    }
    return new TextDecoder().decode(concatBytes(chunks, total));
  }
}
