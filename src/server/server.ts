// The task server: an HTTP/1.1 listener on 127.0.0.1 (http1.ts: connection cap, idle and
// request timeouts, accept errors survived), bearer-token auth with per-session scopes, the
// allow list, body size and JSON depth limits, the REST routes over a TaskStore and HoldStore, /metrics, and an
// event hub the run loop listens on.
import { join } from "node:path";
import { z } from "zod";
import type { Config } from "../config/mod.ts";
import type { Clock, Random, SecretRedactor } from "../io/mod.ts";
import { writeFileAtomic } from "../io/mod.ts";
import { VERSION } from "../meta/mod.ts";
import type { DashboardSource } from "../report/mod.ts";
import {
  checkStatus,
  type HoldStore,
  IllegalTransitionError,
  isoTime,
  type Task,
  TASK_STATUSES,
  type TaskStatus,
  type TaskStore,
} from "../tasks/mod.ts";
import { DashboardRoutes } from "./dashboard.ts";
import { HttpError, ServerStartError } from "./errors.ts";
import { type AgentLiveness, EventHub, type ServerEvent } from "./events.ts";
import { errorResponse, jsonResponse, readJsonBody, readJsonValue, validate } from "./http.ts";
import { type Http1Server, serveHttp1 } from "./http1.ts";
import { compileAllowList, type IpAllowList } from "./ip_allow.ts";
import {
  type MetricFamily,
  METRICS_CONTENT_TYPE,
  renderExposition,
  RequestMetrics,
} from "./metrics.ts";
import { type PolicyGateway, policyRoutes } from "./policy_routes.ts";
import type { AgentScope, TokenRegistry, TokenScope } from "./tokens.ts";

/** File name of the port file inside `.sdd/runtime/`. */
export const SERVER_PORT_FILE = "server.port";

/** Options of {@linkcode startTaskServer}. */
export interface TaskServerOptions {
  /** Where tasks live. */
  store: TaskStore;
  /** Orchestrator holds. */
  holds: HoldStore;
  /** Bearer tokens. */
  tokens: TokenRegistry;
  /** `.sdd/runtime/`: the port is written to `server.port` there. */
  runtimeDir: string;
  /** `network.allowed_ips` and `tuning.server` (port, body limit, hold lifetimes). */
  config: Pick<Config, "network" | "tuning">;
  /** Time source (timestamps, durations). */
  clock: Clock;
  /** The live dashboard at `/` (src/server/dashboard.ts); absent: no dashboard routes. */
  dashboard?: { source: DashboardSource; random: Random };
  /** Told when accepting a connection fails (out of descriptors); the server carries on. */
  onAcceptError?: (error: Error) => void;
  /** Handlers of whole path prefixes with their own authentication (`/workers/`, `/git/`). */
  mounts?: readonly ServerMount[];
  /**
   * A second address to listen on, for workers on other hosts and their agents (task routes,
   * mounts and `/health`; never the dashboard). Absent: loopback only.
   */
  listen?: { hostname: string; port: number };
  /** The run's tool-call policy (`/policy/decide`, `/approvals`); absent: they answer 503. */
  policy?: PolicyGateway;
  /** Redacts every request body (the run's minted connection secrets, docs/FLEET.md). */
  redactor?: SecretRedactor;
}

/** What a mount learns about a request besides the request itself. */
export interface MountContext {
  /** The caller's address. */
  remoteAddr: string;
  /** The request carries the operator token. */
  isOperator: boolean;
}

/**
 * A handler for every path under `prefix`. It authenticates callers itself (worker tokens are
 * not task-server tokens); what it throws becomes the usual JSON error response.
 */
export interface ServerMount {
  /** Path prefix it owns, with a trailing slash (`/workers/`). */
  readonly prefix: string;
  /** Answers one request. */
  handle(req: Request, url: URL, context: MountContext): Promise<Response>;
}

/** A running task server. */
export interface TaskServer {
  /** `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** The port it listens on. */
  readonly port: number;
  /** `http://<host>:<port>` of the second listener (`listen`), when there is one. */
  readonly listenUrl?: string;
  /** Adds a mount after start (its owner may need the server's address first). */
  mount(mount: ServerMount): void;
  /** Heartbeats and HTTP-made task/hold changes, delivered as they happen. */
  readonly events: EventHub<ServerEvent>;
  /** Last heartbeat of every agent seen. */
  agents(): AgentLiveness[];
  /** A fresh one-time dashboard login link, or undefined without a dashboard. */
  loginLink?(): string | undefined;
  /** Stops accepting, waits for requests in flight, removes the port file. */
  close(): Promise<void>;
}

type Handler = (ctx: RouteContext) => Promise<Response>;

interface Route {
  method: string;
  pattern: string;
  segments: string[];
  public?: boolean;
  handler: Handler;
}

interface RouteContext {
  req: Request;
  url: URL;
  params: Record<string, string>;
  scope: TokenScope;
  actor: string;
}

const ExpectedVersion = z.number().int().min(1);
const Text = (max: number) =>
  z.string().min(1).max(max).refine((t) => t.trim() !== "", "must not be blank");

const ClaimBody = z.object({
  expected_version: ExpectedVersion,
  agent: z.string().min(1).max(200).optional(),
})
  .strict();
const CompleteBody = z.object({ summary: Text(100_000) }).strict();
const ReasonBody = z.object({ reason: Text(10_000) }).strict();
const ProgressBody = z.object({
  message: Text(10_000),
  percent: z.number().min(0).max(100).optional(),
})
  .strict();
const HeartbeatBody = z.object({
  task_id: z.string().min(1).max(200).optional(),
  note: z.string().max(1000).optional(),
}).strict();
const HoldBody = z.object({ reason: Text(10_000), ttl_s: z.number().positive().optional() })
  .strict();
const ReleaseBody = z.object({ reason: Text(10_000).optional() }).strict();
const ListQuery = z.object({
  status: z.string().optional(),
  role: z.string().min(1).optional(),
  parent: z.string().min(1).optional(),
}).strict();

/** The scope public routes run with: no task, no rights. */
const ANONYMOUS: AgentScope = {
  kind: "agent",
  session: "anonymous",
  agent_id: "anonymous",
  task_ids: [],
  can_create_tasks: false,
};

function actorOf(scope: TokenScope): string {
  return scope.kind === "operator" ? "operator" : `agent:${scope.agent_id}`;
}

function forbidden(message: string): HttpError {
  return new HttpError(403, "auth.forbidden", message);
}

function visible(scope: TokenScope, task: Task): boolean {
  if (scope.kind === "operator") return true;
  return scope.task_ids.includes(task.id) ||
    (task.parent_task_id !== null && scope.task_ids.includes(task.parent_task_id));
}

/** An agent token reports on its own behalf: the store refuses it once the claim is gone. */
function holderOf(scope: TokenScope): string | undefined {
  return scope.kind === "agent" ? scope.agent_id : undefined;
}

function requireOperator(scope: TokenScope): void {
  if (scope.kind !== "operator") throw forbidden("this route needs the operator token");
}

function requireOwnTask(scope: TokenScope, id: string): void {
  if (scope.kind === "agent" && !scope.task_ids.includes(id)) {
    throw forbidden(`this token is not scoped to task '${id}'`);
  }
}

/**
 * Starts the task server on 127.0.0.1 (port `tuning.server.port`, 0 = any free port) and
 * writes the port to `.sdd/runtime/server.port`.
 *
 * @example
 * ```ts ignore
 * const server = await startTaskServer({ store, holds, tokens, runtimeDir, config, clock });
 * server.events.on((e) => { if (e.type === "task.completed") scheduler.wake(); });
 * ```
 */
export async function startTaskServer(options: TaskServerOptions): Promise<TaskServer> {
  const { store, holds, tokens, clock } = options;
  const tuning = options.config.tuning.server;
  const allow: IpAllowList = compileAllowList(options.config.network.allowed_ips);
  const events = new EventHub<ServerEvent>();
  const metrics = new RequestMetrics();
  const agents = new Map<string, AgentLiveness>();
  const startedMs = clock.nowMs();
  const limit = {
    maxBytes: tuning.max_body_bytes,
    maxDepth: tuning.max_json_depth,
    ...(options.redactor ? { redactor: options.redactor } : {}),
  };

  const now = () => isoTime(clock.nowMs());

  async function getTask(id: string): Promise<Task> {
    const task = await store.get(id);
    if (task === undefined) {
      throw new HttpError(404, "task.not_found", `no task with id '${id}'`);
    }
    return task;
  }

  const routes: Route[] = [];
  const route = (method: string, pattern: string, handler: Handler, isPublic = false) =>
    routes.push({
      method,
      pattern,
      segments: pattern.split("/").filter(Boolean),
      public: isPublic,
      handler,
    });

  route(
    "GET",
    "/health",
    () => Promise.resolve(jsonResponse(200, { ok: true, version: VERSION })),
    true,
  );

  route("POST", "/tasks", async ({ req, scope, actor }) => {
    let draft = await readJsonValue(req, limit);
    if (scope.kind === "agent") draft = scopedDraft(scope, draft);
    const task = await store.create(draft as Parameters<TaskStore["create"]>[0], { actor });
    events.emit({ type: "task.created", task, actor });
    return jsonResponse(201, { task });
  });

  route("GET", "/tasks", async ({ url, scope }) => {
    const query = validate(ListQuery, Object.fromEntries(url.searchParams), "server.invalid_query");
    let status: TaskStatus[] | undefined;
    if (query.status !== undefined) {
      try {
        status = query.status.split(",").map((s) => checkStatus(s.trim()));
      } catch {
        throw new HttpError(
          400,
          "server.invalid_query",
          `'${query.status}' names an unknown status (one of ${TASK_STATUSES.join(", ")})`,
          { location: "status" },
        );
      }
    }
    const tasks = await store.list({ status, role: query.role, parent_task_id: query.parent });
    return jsonResponse(200, { tasks: tasks.filter((t) => visible(scope, t)) });
  });

  route("GET", "/tasks/{id}", async ({ params, scope }) => {
    const task = await getTask(params.id);
    if (!visible(scope, task)) throw forbidden(`this token is not scoped to task '${task.id}'`);
    return jsonResponse(200, { task });
  });

  route("POST", "/tasks/{id}/claim", async ({ req, params, scope, actor }) => {
    requireOwnTask(scope, params.id);
    const body = await readJsonBody(req, limit, ClaimBody);
    let agent = body.agent;
    if (scope.kind === "agent") {
      if (agent !== undefined && agent !== scope.agent_id) {
        throw forbidden(`this token may claim only for agent '${scope.agent_id}'`);
      }
      agent = scope.agent_id;
    } else if (agent === undefined) {
      throw new HttpError(400, "server.invalid_body", "required for the operator token", {
        location: "agent",
      });
    }
    await getTask(params.id);
    const task = await store.claim(params.id, {
      agent,
      actor,
      expectedVersion: body.expected_version,
    });
    events.emit({ type: "task.claimed", task, actor });
    return jsonResponse(200, { task });
  });

  route("POST", "/tasks/{id}/complete", async ({ req, params, scope, actor }) => {
    requireOwnTask(scope, params.id);
    const body = await readJsonBody(req, limit, CompleteBody);
    let task = await getTask(params.id);
    const holder = holderOf(scope);
    if (task.status === "claimed") {
      // A fast agent (or a remote worker) may report before the start was recorded. The
      // orchestrator may record it between this read and this change: then it is started.
      try {
        task = await store.transition(task.id, "in_progress", {
          actor,
          reason: "completion reported before start was recorded",
          holder,
        });
      } catch (error) {
        if (!(error instanceof IllegalTransitionError && error.from === "in_progress")) throw error;
      }
    }
    task = await store.transition(task.id, "done", {
      actor,
      reason: "agent reported completion",
      result_summary: body.summary,
      holder,
    });
    events.emit({ type: "task.completed", task, actor });
    return jsonResponse(200, { task });
  });

  route("POST", "/tasks/{id}/fail", async ({ req, params, scope, actor }) => {
    requireOwnTask(scope, params.id);
    const body = await readJsonBody(req, limit, ReasonBody);
    await getTask(params.id);
    const task = await store.transition(params.id, "failed", {
      actor,
      reason: body.reason,
      holder: holderOf(scope),
    });
    events.emit({ type: "task.failed", task, actor });
    return jsonResponse(200, { task });
  });

  route("POST", "/tasks/{id}/block", async ({ req, params, scope, actor }) => {
    requireOwnTask(scope, params.id);
    const body = await readJsonBody(req, limit, ReasonBody);
    await getTask(params.id);
    const task = await store.transition(params.id, "blocked", {
      actor,
      reason: body.reason,
      holder: holderOf(scope),
    });
    events.emit({ type: "task.blocked", task, actor });
    return jsonResponse(200, { task });
  });

  route("POST", "/tasks/{id}/progress", async ({ req, params, scope, actor }) => {
    requireOwnTask(scope, params.id);
    const body = await readJsonBody(req, limit, ProgressBody);
    await getTask(params.id);
    const task = await store.progress(params.id, {
      actor,
      message: body.message,
      percent: body.percent,
      holder: holderOf(scope),
    });
    events.emit({
      type: "task.progress",
      task,
      actor,
      message: body.message,
      percent: body.percent ?? null,
    });
    return jsonResponse(200, { task });
  });

  route("POST", "/agents/{id}/heartbeat", async ({ req, params, scope }) => {
    if (scope.kind === "agent" && scope.agent_id !== params.id) {
      throw forbidden(`this token belongs to agent '${scope.agent_id}'`);
    }
    const body = await readJsonBody(req, limit, HeartbeatBody);
    if (body.task_id !== undefined) requireOwnTask(scope, body.task_id);
    // A heartbeat naming a task renews that claim's lease; an agent that lost the claim
    // (expired, released) is told so with 409 task.claim_lost and should stop.
    if (body.task_id !== undefined) await store.heartbeat(body.task_id, { agent: params.id });
    const previous = agents.get(params.id);
    const agent: AgentLiveness = {
      agent_id: params.id,
      session: scope.kind === "agent" ? scope.session : null,
      task_id: body.task_id ?? previous?.task_id ?? null,
      last_heartbeat_at: now(),
      heartbeats: (previous?.heartbeats ?? 0) + 1,
    };
    agents.set(params.id, agent);
    events.emit({ type: "heartbeat", agent, note: body.note ?? null });
    return jsonResponse(200, { ok: true, agent });
  });

  route("GET", "/status", async ({ scope, url }) => {
    requireOperator(scope);
    const all = await store.list();
    const byStatus = Object.fromEntries(TASK_STATUSES.map((s) => [s, 0])) as Record<
      TaskStatus,
      number
    >;
    for (const t of all) byStatus[t.status]++;
    return jsonResponse(200, {
      server: {
        version: VERSION,
        url: url.origin,
        started_at: isoTime(startedMs),
        uptime_s: Math.max(0, (clock.nowMs() - startedMs) / 1000),
      },
      store: { backend: store.backend },
      tasks: { total: all.length, by_status: byStatus },
      agents: [...agents.values()],
      holds: await holds.list(),
    });
  });

  route("GET", "/metrics", async ({ scope }) => {
    requireOperator(scope);
    const all = await store.list();
    const byStatus = new Map<string, number>(TASK_STATUSES.map((s) => [s, 0]));
    for (const t of all) byStatus.set(t.status, (byStatus.get(t.status) ?? 0) + 1);
    const active = await holds.list();
    const families: MetricFamily[] = [
      {
        name: "bernstein_tasks",
        help: "Tasks in the store, by status.",
        type: "gauge",
        samples: [...byStatus].map(([status, value]) => ({ labels: { status }, value })),
      },
      {
        name: "bernstein_holds_active",
        help: "Orchestrator holds in force.",
        type: "gauge",
        samples: [{ labels: {}, value: active.length }],
      },
      {
        name: "bernstein_agent_heartbeats_total",
        help: "Heartbeats received, by agent.",
        type: "counter",
        samples: [...agents.values()].map((a) => ({
          labels: { agent: a.agent_id },
          value: a.heartbeats,
        })),
      },
      {
        name: "bernstein_agent_last_heartbeat_timestamp_seconds",
        help: "Unix time of each agent's last heartbeat.",
        type: "gauge",
        samples: [...agents.values()].map((a) => ({
          labels: { agent: a.agent_id },
          value: Date.parse(a.last_heartbeat_at) / 1000,
        })),
      },
      {
        name: "bernstein_server_start_time_seconds",
        help: "Unix time the task server started.",
        type: "gauge",
        samples: [{ labels: {}, value: startedMs / 1000 }],
      },
      ...metrics.families(),
    ];
    return new Response(renderExposition(families), {
      status: 200,
      headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
    });
  });

  route("GET", "/orchestrator/holds", async ({ scope }) => {
    requireOperator(scope);
    return jsonResponse(200, { holds: await holds.list() });
  });

  route("POST", "/orchestrator/holds", async ({ req, scope, actor }) => {
    requireOperator(scope);
    const body = await readJsonBody(req, limit, HoldBody);
    const ttl = body.ttl_s ?? tuning.hold_default_ttl_s;
    if (ttl > tuning.hold_max_ttl_s) {
      throw new HttpError(
        400,
        "server.invalid_body",
        `at most ${tuning.hold_max_ttl_s} seconds (tuning.server.hold_max_ttl_s)`,
        { location: "ttl_s" },
      );
    }
    const hold = await holds.add({ actor, reason: body.reason, ttlMs: ttl * 1000 });
    events.emit({ type: "hold.added", hold, actor });
    return jsonResponse(201, { hold });
  });

  route("DELETE", "/orchestrator/holds/{id}", async ({ req, params, scope, actor }) => {
    requireOperator(scope);
    const body = await readJsonBody(req, limit, ReleaseBody);
    const hold = await holds.release(params.id, {
      actor,
      reason: body.reason ?? "released by operator",
    });
    events.emit({ type: "hold.released", hold, actor });
    return jsonResponse(200, { hold });
  });

  for (const r of policyRoutes(options.policy, limit)) route(r.method, r.pattern, r.handler);

  function match(
    method: string,
    path: string,
  ): { route: Route; params: Record<string, string> } | { allowed: string[] } | undefined {
    const parts = path.split("/").filter(Boolean);
    const allowed: string[] = [];
    for (const r of routes) {
      if (r.segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      let ok = true;
      for (let i = 0; i < parts.length && ok; i++) {
        const seg = r.segments[i];
        if (seg.startsWith("{")) {
          try {
            params[seg.slice(1, -1)] = decodeURIComponent(parts[i]);
          } catch {
            ok = false;
          }
        } else ok = seg === parts[i];
      }
      if (!ok) continue;
      if (r.method === method) return { route: r, params };
      allowed.push(r.method);
    }
    return allowed.length > 0 ? { allowed } : undefined;
  }

  function authenticate(req: Request): TokenScope {
    const header = req.headers.get("authorization");
    if (header === null) {
      throw new HttpError(401, "auth.missing_token", "an Authorization: Bearer token is required");
    }
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (m === null) {
      throw new HttpError(
        401,
        "auth.invalid_token",
        "the Authorization header is not 'Bearer <token>'",
      );
    }
    const scope = tokens.authenticate(m[1]);
    if (scope === undefined) {
      throw new HttpError(401, "auth.invalid_token", "the token is not valid");
    }
    return scope;
  }

  function isOperator(req: Request): boolean {
    try {
      return authenticate(req).kind === "operator";
    } catch {
      return false;
    }
  }

  const mounts = [...options.mounts ?? []];

  async function handle(
    req: Request,
    info: { remoteAddr: Deno.NetAddr },
    external = false,
  ): Promise<Response> {
    const started = clock.monotonicMs();
    const url = new URL(req.url);
    let label = "unmatched";
    let response: Response;
    try {
      if (!allow.allows(info.remoteAddr.hostname)) {
        throw new HttpError(
          403,
          "server.ip_not_allowed",
          `${info.remoteAddr.hostname} is not in network.allowed_ips`,
        );
      }
      const mount = mounts.find((m) => url.pathname.startsWith(m.prefix));
      if (mount !== undefined) {
        label = `${mount.prefix}*`;
        response = await mount.handle(req, url, {
          remoteAddr: info.remoteAddr.hostname,
          isOperator: isOperator(req),
        });
        const seconds = Math.max(0, clock.monotonicMs() - started) / 1000;
        metrics.record(label, req.method, response.status, seconds);
        return response;
      }
      if (!external && dashboard?.owns(url.pathname)) {
        label = dashboard.routeLabel(url.pathname);
        response = await dashboard.handle(req, url);
        const seconds = Math.max(0, clock.monotonicMs() - started) / 1000;
        metrics.record(label, req.method, response.status, seconds);
        return response;
      }
      const found = match(req.method, url.pathname);
      if (found === undefined) {
        throw new HttpError(404, "server.not_found", `no route ${req.method} ${url.pathname}`);
      }
      if ("allowed" in found) {
        const error = new HttpError(
          405,
          "server.method_not_allowed",
          `${req.method} is not allowed on ${url.pathname} (allowed: ${found.allowed.join(", ")})`,
        );
        response = errorResponse(error);
        response.headers.set("allow", found.allowed.join(", "));
      } else {
        label = found.route.pattern;
        const scope: TokenScope = found.route.public ? ANONYMOUS : authenticate(req);
        response = await found.route.handler({
          req,
          url,
          params: found.params,
          scope,
          actor: actorOf(scope),
        });
      }
    } catch (error) {
      response = errorResponse(error);
    }
    metrics.record(
      label,
      req.method,
      response.status,
      Math.max(0, clock.monotonicMs() - started) / 1000,
    );
    return response;
  }

  let server: ReturnType<typeof serveHttp1>;
  try {
    server = serveHttp1({
      port: tuning.port,
      handler: handle,
      refusal: (status, code, message) => errorResponse(new HttpError(status, code, message)),
      maxConnections: tuning.max_connections,
      idleTimeoutMs: tuning.idle_timeout_s * 1000,
      requestTimeoutMs: tuning.request_timeout_s * 1000,
      maxHeadBytes: 64 * 1024,
      maxBodyBytes: tuning.max_body_bytes,
      onAcceptError: options.onAcceptError,
    });
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new ServerStartError(
        "server.port_in_use",
        `port ${tuning.port} on 127.0.0.1 is already in use`,
        { location: "tuning.server.port", hint: "set tuning.server.port: 0 to pick a free port" },
      );
    }
    throw error;
  }
  const port = server.addr.port;
  const dashboard = options.dashboard === undefined ? undefined : new DashboardRoutes({
    ...options.dashboard,
    clock,
    port,
    isOperator,
  });
  let external: Http1Server | undefined;
  try {
    external = listenExternally(options, (req, info) => handle(req, info, true));
  } catch (error) {
    await server.shutdown();
    throw error;
  }
  const portFile = join(options.runtimeDir, SERVER_PORT_FILE);
  await Deno.mkdir(options.runtimeDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(portFile, `${port}\n`, { mode: 0o600 });
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    listenUrl: external === undefined
      ? undefined
      : `http://${hostForUrl(options.listen?.hostname ?? "")}:${external.addr.port}`,
    events,
    agents: () => [...agents.values()].map((a) => ({ ...a })),
    loginLink: () => dashboard?.mintLoginLink(),
    mount: (mount) => void mounts.push(mount),
    close() {
      closed ??= (async () => {
        await dashboard?.close();
        await Promise.all([server.shutdown(), external?.shutdown()]);
        const text = await Deno.readTextFile(portFile).catch(() => "");
        if (text.trim() === String(port)) await Deno.remove(portFile).catch(() => {});
      })();
      return closed;
    },
  };
}

/** `[::1]` for an IPv6 address in a URL, the name or IPv4 address as it is. */
function hostForUrl(hostname: string): string {
  return hostname.includes(":") ? `[${hostname}]` : hostname;
}

/** The second listener (workers' address), or undefined without one. */
function listenExternally(
  options: TaskServerOptions,
  handler: (req: Request, info: { remoteAddr: Deno.NetAddr }) => Promise<Response>,
): Http1Server | undefined {
  const listen = options.listen;
  if (listen === undefined) return undefined;
  const tuning = options.config.tuning.server;
  try {
    return serveHttp1({
      hostname: listen.hostname,
      port: listen.port,
      handler,
      refusal: (status, code, message) => errorResponse(new HttpError(status, code, message)),
      maxConnections: tuning.max_connections,
      idleTimeoutMs: tuning.idle_timeout_s * 1000,
      // Workers push their agents' branches here: packs are larger and slower than JSON.
      requestTimeoutMs: Math.max(tuning.request_timeout_s, 600) * 1000,
      maxHeadBytes: 64 * 1024,
      maxBodyBytes: Math.max(tuning.max_body_bytes, EXTERNAL_MAX_BODY_BYTES),
      onAcceptError: options.onAcceptError,
    });
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse || error instanceof Deno.errors.AddrNotAvailable) {
      throw new ServerStartError(
        "server.listen_failed",
        `cannot listen on ${hostForUrl(listen.hostname)}:${listen.port}: ${
          (error as Error).message
        }`,
        { location: "workers.listen" },
      );
    }
    throw error;
  }
}

/** Largest request on the workers' listener (a pushed pack of an agent's branch). */
const EXTERNAL_MAX_BODY_BYTES = 256 * 1024 * 1024;

/** A manager's draft: its children hang under one of its own tasks. */
function scopedDraft(scope: AgentScope, draft: unknown): unknown {
  if (!scope.can_create_tasks) throw forbidden("this token may not create tasks");
  if (typeof draft !== "object" || draft === null || Array.isArray(draft)) return draft;
  // A connection's secret is granted by the plan's author only (docs/FLEET.md).
  const metadata = (draft as { metadata?: unknown }).metadata;
  if (typeof metadata === "object" && metadata !== null && "connections" in metadata) {
    throw forbidden(
      "an agent may not ask for connections (metadata.connections): only the plan grants them",
    );
  }
  const parent = (draft as { parent_task_id?: unknown }).parent_task_id;
  if (parent === undefined || parent === null) {
    if (scope.task_ids.length !== 1) {
      throw new HttpError(
        400,
        "server.invalid_body",
        "required: this token has several tasks, name the parent",
        { location: "parent_task_id" },
      );
    }
    return { ...draft, parent_task_id: scope.task_ids[0] };
  }
  if (typeof parent === "string" && !scope.task_ids.includes(parent)) {
    throw forbidden(`this token may create children only of its own tasks, not of '${parent}'`);
  }
  return draft;
}
