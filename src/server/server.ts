// The task server: its HTTP/1.1 listeners (127.0.0.1, and a second address for workers; http1.ts:
// connection cap, idle and request timeouts, accept errors survived), the port file, and the
// dispatch of each request — allow list, mounts, the dashboard, then the route table
// (_route_table.ts: bearer-token auth with per-session scopes, body size and JSON depth
// limits; the routes themselves in _task_routes.ts and policy_routes.ts) — with every answer
// counted for /metrics, and the event hub the run loop listens on.
import { join } from "node:path";
import type { Config } from "../config/mod.ts";
import type { ErrorCode } from "../errors/mod.ts";
import type { Clock, Random, SecretRedactor } from "../io/mod.ts";
import { RUNTIME_ENTRIES, writeFileAtomic } from "../io/mod.ts";
import type { DashboardSource } from "../report/mod.ts";
import type { HoldStore, TaskStore } from "../tasks/mod.ts";
import type { PolicyGateway } from "./_policy_gateway.ts";
import {
  answerRoute,
  authenticate,
  type Route,
  RouteTable,
  type ServerState,
} from "./_route_table.ts";
import { TASK_ROUTES } from "./_task_routes.ts";
import { DashboardRoutes } from "./dashboard.ts";
import { HttpError, ServerStartError } from "./errors.ts";
import { type AgentLiveness, EventHub, type ServerEvent } from "./events.ts";
import { errorResponse } from "./http.ts";
import { type Http1Server, serveHttp1 } from "./http1.ts";
import { compileAllowList, type IpAllowList } from "./ip_allow.ts";
import { RequestMetrics } from "./metrics.ts";
import { POLICY_ROUTES } from "./policy_routes.ts";
import type { TokenRegistry } from "./tokens.ts";

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
  const state = serverState(options);
  const isOperator = (req: Request) => {
    try {
      return authenticate(req, state.tokens).kind === "operator";
    } catch {
      return false;
    }
  };
  const dispatch = new Dispatcher(
    state,
    compileAllowList(options.config.network.allowed_ips),
    [...options.mounts ?? []],
    isOperator,
  );
  const server = listenLoopback(options, (req, info) => dispatch.handle(req, info, false));
  const port = server.addr.port;
  const dashboard = options.dashboard === undefined ? undefined : new DashboardRoutes({
    ...options.dashboard,
    clock: options.clock,
    port,
    isOperator,
  });
  dispatch.dashboard = dashboard;
  let external: Http1Server | undefined;
  try {
    external = listenExternally(options, (req, info) => dispatch.handle(req, info, true));
  } catch (error) {
    await server.shutdown();
    throw error;
  }
  const portFile = join(options.runtimeDir, RUNTIME_ENTRIES.serverPort);
  await Deno.mkdir(options.runtimeDir, { recursive: true, mode: 0o700 });
  await writeFileAtomic(portFile, `${port}\n`, { mode: 0o600 });
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    listenUrl: external === undefined
      ? undefined
      : `http://${hostForUrl(options.listen?.hostname ?? "")}:${external.addr.port}`,
    events: state.events,
    agents: () => [...state.agents.values()].map((a) => ({ ...a })),
    loginLink: () => dashboard?.mintLoginLink(),
    mount: (mount) => dispatch.mount(mount),
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

/**
 * Where a request goes, in order: the allow list (403), a mount owning its path prefix, the
 * dashboard (loopback only), then the route table (404, 405 with `Allow`). Every answer,
 * errors included, is counted in the request metrics under its route's label.
 */
class Dispatcher {
  /** The dashboard, once the port it needs is known. */
  dashboard: DashboardRoutes | undefined;
  readonly #state: ServerState;
  readonly #allow: IpAllowList;
  readonly #mounts: ServerMount[];
  readonly #isOperator: (req: Request) => boolean;

  constructor(
    state: ServerState,
    allow: IpAllowList,
    mounts: ServerMount[],
    isOperator: (req: Request) => boolean,
  ) {
    this.#state = state;
    this.#allow = allow;
    this.#mounts = mounts;
    this.#isOperator = isOperator;
  }

  /** Adds a mount (its owner may need the server's address first). */
  mount(mount: ServerMount): void {
    this.#mounts.push(mount);
  }

  /** Answers one request; `external`: it came in on the workers' listener. */
  async handle(
    req: Request,
    info: { remoteAddr: Deno.NetAddr },
    external: boolean,
  ): Promise<Response> {
    const started = this.#state.clock.monotonicMs();
    const url = new URL(req.url);
    const answered = await this.#route(req, url, info.remoteAddr.hostname, external)
      .catch((error) => ({ label: "unmatched", response: errorResponse(error) }));
    const seconds = Math.max(0, this.#state.clock.monotonicMs() - started) / 1000;
    this.#state.metrics.record(answered.label, req.method, answered.response.status, seconds);
    return answered.response;
  }

  async #route(
    req: Request,
    url: URL,
    remoteAddr: string,
    external: boolean,
  ): Promise<{ label: string; response: Response }> {
    if (!this.#allow.allows(remoteAddr)) {
      throw new HttpError(
        403,
        "server.ip_not_allowed",
        `${remoteAddr} is not in network.allowed_ips`,
      );
    }
    const mount = this.#mounts.find((m) => url.pathname.startsWith(m.prefix));
    if (mount !== undefined) {
      const context = { remoteAddr, isOperator: this.#isOperator(req) };
      return {
        label: `${mount.prefix}*`,
        response: await answerOrError(() => mount.handle(req, url, context)),
      };
    }
    const dashboard = external ? undefined : this.dashboard;
    if (dashboard?.owns(url.pathname)) {
      return {
        label: dashboard.routeLabel(url.pathname),
        response: await dashboard.handle(req, url),
      };
    }
    const found = ROUTES.match(req.method, url.pathname);
    if (found === undefined) {
      throw new HttpError(404, "server.not_found", `no route ${req.method} ${url.pathname}`);
    }
    if ("allowed" in found) {
      const response = errorResponse(
        new HttpError(
          405,
          "server.method_not_allowed",
          `${req.method} is not allowed on ${url.pathname} (allowed: ${found.allowed.join(", ")})`,
        ),
      );
      response.headers.set("allow", found.allowed.join(", "));
      return { label: "unmatched", response };
    }
    const label = found.route.pattern;
    return {
      label,
      response: await answerOrError(() => answerRoute(found, req, url, this.#state)),
    };
  }
}

/** What the routes share, from the server's options. */
function serverState(options: TaskServerOptions): ServerState {
  const tuning = options.config.tuning.server;
  return {
    store: options.store,
    holds: options.holds,
    tokens: options.tokens,
    events: new EventHub<ServerEvent>(),
    agents: new Map<string, AgentLiveness>(),
    clock: options.clock,
    startedMs: options.clock.nowMs(),
    tuning,
    limits: {
      maxBytes: tuning.max_body_bytes,
      maxDepth: tuning.max_json_depth,
      ...(options.redactor ? { redactor: options.redactor } : {}),
    },
    metrics: new RequestMetrics(),
    ...(options.policy ? { policy: options.policy } : {}),
  };
}

/** The listener on 127.0.0.1 (`tuning.server.port`; a taken port is `server.port_in_use`). */
function listenLoopback(
  options: TaskServerOptions,
  handler: (req: Request, info: { remoteAddr: Deno.NetAddr }) => Promise<Response>,
): Http1Server {
  const port = options.config.tuning.server.port;
  try {
    return serveHttp1({ port, handler, ...connectionLimits(options) });
  } catch (error) {
    if (error instanceof Deno.errors.AddrInUse) {
      throw new ServerStartError(
        "server.port_in_use",
        `port ${port} on 127.0.0.1 is already in use`,
        { location: "tuning.server.port", hint: "set tuning.server.port: 0 to pick a free port" },
      );
    }
    throw error;
  }
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
  try {
    const limits = connectionLimits(options);
    return serveHttp1({
      ...limits,
      hostname: listen.hostname,
      port: listen.port,
      handler,
      // Workers push their agents' branches here: packs are larger and slower than JSON.
      requestTimeoutMs: Math.max(limits.requestTimeoutMs, 600_000),
      maxBodyBytes: Math.max(limits.maxBodyBytes, EXTERNAL_MAX_BODY_BYTES),
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

/** The connection limits both listeners share (`tuning.server`), and how they refuse. */
function connectionLimits(options: TaskServerOptions) {
  const tuning = options.config.tuning.server;
  return {
    refusal: (status: number, code: ErrorCode, message: string) =>
      errorResponse(new HttpError(status, code, message)),
    maxConnections: tuning.max_connections,
    idleTimeoutMs: tuning.idle_timeout_s * 1000,
    requestTimeoutMs: tuning.request_timeout_s * 1000,
    maxHeadBytes: 64 * 1024,
    maxBodyBytes: tuning.max_body_bytes,
    onAcceptError: options.onAcceptError,
  };
}

/** The answer of `answer`, or what it throws as the JSON error answer. */
async function answerOrError(answer: () => Promise<Response>): Promise<Response> {
  try {
    return await answer();
  } catch (error) {
    return errorResponse(error);
  }
}

/** Every route of the task server, in match order (docs/TASK_SERVER.md lists them). */
export const SERVER_ROUTES: readonly Route[] = [...TASK_ROUTES, ...POLICY_ROUTES];

const ROUTES = new RouteTable(SERVER_ROUTES);
