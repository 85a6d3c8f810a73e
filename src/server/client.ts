// The task server's client: how `bernstein task …` (and later remote workers) find the
// server and their token, and talk to it. Retries happen only while the server refuses
// connections (not started yet, restarting); any answer, or a connection that broke after
// the request may have arrived, is final.
import { dirname, join, resolve } from "node:path";
import { type Clock, type EnvReader, RUNTIME_ENTRIES, runtimeDir, sddOf } from "../io/mod.ts";
import type { Approval } from "../policy/mod.ts";
import type { Hold, Task, TaskDraft, TaskStatus } from "../tasks/mod.ts";
import { readTokenFile } from "./_secret_file.ts";
import {
  refusalOfAnswer,
  ServerRefusalError,
  ServerUnreachableError,
  TokenMissingError,
} from "./errors.ts";
import type { AgentLiveness } from "./events.ts";
import { operatorTokenPath } from "./tokens.ts";
import { resolveAuditKeyPath } from "../audit/mod.ts";

/** The server's base URL (`http://127.0.0.1:PORT`); set by the run loop for every agent. */
export const SERVER_URL_ENV = "BERNSTEIN_SERVER_URL";
/** The agent session's bearer token. */
export const TASK_TOKEN_ENV = "BERNSTEIN_TASK_TOKEN";
/** A file holding the bearer token (mode 0600), used when the token itself is not in env. */
export const TASK_TOKEN_FILE_ENV = "BERNSTEIN_TASK_TOKEN_FILE";

/** Where the client sends requests, and where each part was found (for messages). */
export interface ServerEndpoint {
  /** Base URL without trailing slash. */
  url: string;
  /** Bearer token. */
  token: string;
  /** Where the URL came from (`BERNSTEIN_SERVER_URL` or a port file path). */
  urlSource: string;
  /** Where the token came from (an env name or a file path). */
  tokenSource: string;
}

/** Where to look: environment and working directory. */
export interface DiscoverOptions {
  /** Environment. */
  env: EnvReader;
  /** Directory to start the upward search for `.sdd/runtime/` from. */
  cwd: string;
}

/**
 * The nearest `.sdd/runtime/` folder at or above `cwd` that holds `fileName`. Agents run in
 * `.sdd/worktrees/<session>/`, so the search reaches the project's own runtime folder.
 */
export async function findRuntimeDir(cwd: string, fileName: string): Promise<string | undefined> {
  let dir = resolve(cwd);
  for (;;) {
    const runtime = runtimeDir(sddOf(dir));
    try {
      await Deno.lstat(join(runtime, fileName));
      return runtime;
    } catch (error) {
      if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
        throw error;
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

function checkUrl(text: string, source: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ServerUnreachableError("server.bad_url", `${source}='${text}' is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new ServerUnreachableError("server.bad_url", `${source}='${text}' is not http(s)`);
  }
  return url.origin + url.pathname.replace(/\/+$/, "");
}

/** Finds the server URL: `$BERNSTEIN_SERVER_URL`, else `.sdd/runtime/server.port` upward. */
export async function discoverServerUrl(
  options: DiscoverOptions,
): Promise<{ url: string; source: string }> {
  const fromEnv = options.env.get(SERVER_URL_ENV);
  if (fromEnv !== undefined && fromEnv !== "") {
    return { url: checkUrl(fromEnv, SERVER_URL_ENV), source: SERVER_URL_ENV };
  }
  const runtime = await findRuntimeDir(options.cwd, RUNTIME_ENTRIES.serverPort);
  if (runtime === undefined) {
    throw new ServerUnreachableError(
      "server.not_found",
      `no task server address: ${SERVER_URL_ENV} is not set and no .sdd/runtime/${RUNTIME_ENTRIES.serverPort} was found above ${options.cwd}`,
      { hint: "is 'bernstein run' running in this project?" },
    );
  }
  const path = join(runtime, RUNTIME_ENTRIES.serverPort);
  const text = (await Deno.readTextFile(path)).trim();
  if (!/^\d{1,5}$/.test(text) || Number(text) < 1 || Number(text) > 65535) {
    throw new ServerUnreachableError("server.bad_port_file", `'${text}' is not a port`, {
      location: path,
    });
  }
  return { url: `http://127.0.0.1:${Number(text)}`, source: path };
}

/**
 * Finds the bearer token: `$BERNSTEIN_TASK_TOKEN`, else the file named by
 * `$BERNSTEIN_TASK_TOKEN_FILE` (how agents get theirs), else the project's operator token
 * (beside the audit key, see `operatorTokenPath`; a project found upward from `cwd`). Token
 * files readable by group or others are refused.
 */
export async function discoverToken(
  options: DiscoverOptions,
): Promise<{ token: string; source: string }> {
  const fromEnv = options.env.get(TASK_TOKEN_ENV);
  if (fromEnv !== undefined && fromEnv.trim() !== "") {
    return { token: fromEnv.trim(), source: TASK_TOKEN_ENV };
  }
  const file = options.env.get(TASK_TOKEN_FILE_ENV);
  if (file !== undefined && file !== "") {
    const path = resolve(options.cwd, file);
    const token = await readTokenFile(path);
    if (token === undefined) {
      throw new TokenMissingError(`${TASK_TOKEN_FILE_ENV}=${file} does not exist`);
    }
    return { token, source: path };
  }
  const runtime = await findRuntimeDir(options.cwd, "");
  const found = runtime === undefined
    ? undefined
    : await readOperatorToken(dirname(dirname(runtime)), options.env);
  const path = found?.path;
  const token = found?.token;
  if (path === undefined || token === undefined) {
    throw new TokenMissingError(
      `no task server token: ${TASK_TOKEN_ENV} and ${TASK_TOKEN_FILE_ENV} are not set and no operator token was found${
        path === undefined ? ` for a project above ${options.cwd}` : ` at ${path}`
      }`,
      {
        hint:
          "run the command inside the project whose run you talk to, with the same HOME (or BERNSTEIN_AUDIT_KEY_PATH) as the run",
      },
    );
  }
  return { token, source: path };
}

/**
 * The operator token of the project at `projectRoot` (beside the audit key the environment
 * names, see `operatorTokenPath`): its path, and the token when the file exists. Undefined when
 * no key folder can be located (no HOME).
 */
export async function readOperatorToken(
  projectRoot: string,
  env: EnvReader,
): Promise<{ path: string; token: string | undefined } | undefined> {
  let path: string;
  try {
    path = operatorTokenPath(resolveAuditKeyPath(env).path, await Deno.realPath(projectRoot));
  } catch {
    return undefined;
  }
  return { path, token: await readTokenFile(path) };
}

/** Finds URL and token (see {@linkcode discoverServerUrl} and {@linkcode discoverToken}). */
export async function discoverEndpoint(options: DiscoverOptions): Promise<ServerEndpoint> {
  const { url, source: urlSource } = await discoverServerUrl(options);
  const { token, source: tokenSource } = await discoverToken(options);
  return { url, token, urlSource, tokenSource };
}

/** Options of {@linkcode TaskClient}. */
export interface TaskClientOptions {
  /** Attempts while the connection is refused (`tuning.server.client_connect_attempts`). */
  attempts: number;
  /** First delay between attempts, doubling (`tuning.server.client_retry_base_ms`). */
  baseDelayMs: number;
  /** Sleeps between attempts. */
  clock: Clock;
  /** Called before each retry (for a progress note). */
  onRetry?: (attempt: number, delayMs: number) => void;
}

/** Filter of {@linkcode TaskClient.listTasks}. */
export interface ListTasksQuery {
  /** Statuses (any of). */
  status?: readonly TaskStatus[];
  /** Role. */
  role?: string;
  /** Parent task id. */
  parent?: string;
}

/**
 * Whether a failed fetch says, somewhere in its cause chain, that the connection was refused
 * (ECONNREFUSED: 111 on Linux, 61 on macOS, 10061 on Windows). Deno words it only in text.
 * A refused connect sent nothing, so a retry cannot repeat a request.
 */
export function fetchWasRefused(error: unknown): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    if (e instanceof Deno.errors.ConnectionRefused) return true;
    if (/connection refused|os error (?:111|61|10061)\b/i.test(e.message)) return true;
  }
  return false;
}

// Asked only when the fetch error does not say why it failed. A server that comes up
// between the failed fetch and this probe makes it answer false (seen under load), which is
// why the fetch's own cause is read first.
async function refused(url: URL): Promise<boolean> {
  const port = Number(url.port || (url.protocol === "https:" ? 443 : 80));
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  try {
    const conn = await Deno.connect({ hostname, port });
    conn.close();
    return false;
  } catch (error) {
    return error instanceof Deno.errors.ConnectionRefused;
  }
}

/**
 * A client of the task server.
 *
 * @example
 * ```ts ignore
 * const endpoint = await discoverEndpoint({ env: processEnv, cwd: Deno.cwd() });
 * const client = new TaskClient(endpoint, { attempts: 6, baseDelayMs: 100, clock: systemClock });
 * await client.complete("t-01…", "added the parser and its tests");
 * ```
 */
export class TaskClient {
  readonly #base: string;
  readonly #token: string;
  readonly #options: TaskClientOptions;

  constructor(endpoint: { url: string; token: string }, options: TaskClientOptions) {
    this.#base = endpoint.url.replace(/\/+$/, "");
    this.#token = endpoint.token;
    this.#options = options;
  }

  /**
   * Sends one request and returns the parsed JSON answer. A non-2xx answer throws
   * {@linkcode ServerRefusalError} carrying the server's code and message.
   */
  async request(method: string, path: string, body?: unknown): Promise<unknown> {
    const url = new URL(this.#base + path);
    const attempts = Math.max(1, this.#options.attempts);
    for (let attempt = 1;; attempt++) {
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${this.#token}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      } catch (error) {
        if (!(error instanceof TypeError)) throw error;
        if (!fetchWasRefused(error) && !(await refused(url))) {
          throw new ServerUnreachableError(
            "server.connection_failed",
            `the connection to ${this.#base} failed: ${error.message}`,
            { cause: error },
          );
        }
        if (attempt >= attempts) {
          throw new ServerUnreachableError(
            "server.unreachable",
            `${this.#base} refused the connection ${attempts} time${attempts === 1 ? "" : "s"}`,
            { hint: "is 'bernstein run' still running?" },
          );
        }
        const delay = this.#options.baseDelayMs * 2 ** (attempt - 1);
        this.#options.onRetry?.(attempt, delay);
        await this.#options.clock.sleep(delay);
        continue;
      }
      const text = await response.text();
      let parsed: unknown;
      try {
        parsed = text === "" ? {} : JSON.parse(text);
      } catch {
        if (response.ok) return text;
        throw new ServerRefusalError(
          response.status,
          "server.bad_response",
          `HTTP ${response.status} with a non-JSON body`,
        );
      }
      if (response.ok) return parsed;
      throw refusalOfAnswer(response.status, parsed);
    }
  }

  /** `GET /health`. */
  async health(): Promise<{ ok: boolean; version: string }> {
    return await this.request("GET", "/health") as { ok: boolean; version: string };
  }

  /** `POST /tasks`. */
  async createTask(draft: TaskDraft): Promise<Task> {
    return (await this.request("POST", "/tasks", draft) as { task: Task }).task;
  }

  /** `GET /tasks`. */
  async listTasks(query: ListTasksQuery = {}): Promise<Task[]> {
    const params = new URLSearchParams();
    if (query.status?.length) params.set("status", query.status.join(","));
    if (query.role !== undefined) params.set("role", query.role);
    if (query.parent !== undefined) params.set("parent", query.parent);
    const qs = params.size > 0 ? `?${params}` : "";
    return (await this.request("GET", `/tasks${qs}`) as { tasks: Task[] }).tasks;
  }

  /** `GET /tasks/{id}`. */
  async getTask(id: string): Promise<Task> {
    return (await this.request("GET", `/tasks/${encodeURIComponent(id)}`) as { task: Task }).task;
  }

  async #post(id: string, verb: string, body: unknown): Promise<Task> {
    const path = `/tasks/${encodeURIComponent(id)}/${verb}`;
    return (await this.request("POST", path, body) as { task: Task }).task;
  }

  /** `POST /tasks/{id}/claim`. */
  claim(id: string, body: { expected_version: number; agent?: string }): Promise<Task> {
    return this.#post(id, "claim", body);
  }

  /** `POST /tasks/{id}/complete`. */
  complete(id: string, summary: string): Promise<Task> {
    return this.#post(id, "complete", { summary });
  }

  /** `POST /tasks/{id}/fail`. */
  fail(id: string, reason: string): Promise<Task> {
    return this.#post(id, "fail", { reason });
  }

  /** `POST /tasks/{id}/block`. */
  block(id: string, reason: string): Promise<Task> {
    return this.#post(id, "block", { reason });
  }

  /** `POST /tasks/{id}/progress`. */
  progress(id: string, message: string, percent?: number): Promise<Task> {
    return this.#post(id, "progress", percent === undefined ? { message } : { message, percent });
  }

  /** `POST /agents/{id}/heartbeat`. */
  async heartbeat(
    agentId: string,
    body: { task_id?: string; note?: string } = {},
  ): Promise<AgentLiveness> {
    const path = `/agents/${encodeURIComponent(agentId)}/heartbeat`;
    return (await this.request("POST", path, body) as { agent: AgentLiveness }).agent;
  }

  /** `GET /status`. */
  status(): Promise<unknown> {
    return this.request("GET", "/status");
  }

  /** `GET /orchestrator/holds`. */
  async listHolds(): Promise<Hold[]> {
    return (await this.request("GET", "/orchestrator/holds") as { holds: Hold[] }).holds;
  }

  /** `POST /orchestrator/holds`. */
  async addHold(reason: string, ttlS?: number): Promise<Hold> {
    const body = ttlS === undefined ? { reason } : { reason, ttl_s: ttlS };
    return (await this.request("POST", "/orchestrator/holds", body) as { hold: Hold }).hold;
  }

  /** `DELETE /orchestrator/holds/{id}`. */
  async releaseHold(id: string, reason?: string): Promise<Hold> {
    const path = `/orchestrator/holds/${encodeURIComponent(id)}`;
    const body = reason === undefined ? {} : { reason };
    return (await this.request("DELETE", path, body) as { hold: Hold }).hold;
  }

  /** `GET /approvals`: parked tool calls (every one, answered too, with `all`). */
  async listApprovals(all = false): Promise<Approval[]> {
    const qs = all ? "?all=1" : "";
    return (await this.request("GET", `/approvals${qs}`) as { approvals: Approval[] }).approvals;
  }

  /** `POST /approvals/{id}/approve` or `…/deny`. */
  async answerApproval(id: string, verdict: "approve" | "deny", note?: string): Promise<Approval> {
    const path = `/approvals/${encodeURIComponent(id)}/${verdict}`;
    const body = note === undefined ? {} : { note };
    return (await this.request("POST", path, body) as { approval: Approval }).approval;
  }
}
