/**
 * The task server: a loopback HTTP API over the task store (its own HTTP/1.1 listener on
 * 127.0.0.1 with a connection cap, idle and request timeouts) with per-session bearer tokens,
 * `network.allowed_ips`, zod-validated bodies with size and nesting limits,
 * Prometheus `/metrics`, and an event hub the run loop listens on; plus its client, used by
 * `bernstein task …`.
 *
 * @example
 * ```ts ignore
 * import { startTaskServer, TokenRegistry } from "./mod.ts";
 * const tokens = await TokenRegistry.open(runtimeDir, { random: systemRandom, operatorTokenPath });
 * const server = await startTaskServer({ store, holds, tokens, runtimeDir, config, clock });
 * server.events.on((event) => console.log(event.type));
 * ```
 *
 * @module
 */
export {
  discoverEndpoint,
  type DiscoverOptions,
  discoverServerUrl,
  discoverToken,
  findRuntimeDir,
  type ListTasksQuery,
  readOperatorToken,
  SERVER_URL_ENV,
  type ServerEndpoint,
  TASK_TOKEN_ENV,
  TASK_TOKEN_FILE_ENV,
  TaskClient,
  type TaskClientOptions,
} from "./client.ts";
export { readTokenFile } from "./_secret_file.ts";
export {
  HttpError,
  ServerRefusalError,
  ServerStartError,
  ServerUnreachableError,
  TokenFileError,
  TokenMissingError,
} from "./errors.ts";
export { type AgentLiveness, EventHub, type Listener, type ServerEvent } from "./events.ts";
export {
  DASHBOARD_LINKS_PATH,
  DASHBOARD_LOGIN_PATH,
  DASHBOARD_STATE_PATH,
  type DashboardRouteOptions,
  DashboardRoutes,
} from "./dashboard.ts";
export {
  errorResponse,
  jsonDepthExceeds,
  type JsonLimits,
  jsonResponse,
  readBodyLimited,
  readJsonBody,
  STATUS_BY_CODE,
  validate,
} from "./http.ts";
export { type Http1Limits, type Http1Options, type Http1Server, serveHttp1 } from "./http1.ts";
export { compileAllowList, type IpAllowList } from "./ip_allow.ts";
export {
  DURATION_BOUNDS,
  type HistogramSeries,
  type Labels,
  type MetricFamily,
  METRICS_CONTENT_TYPE,
  renderExposition,
  RequestMetrics,
} from "./metrics.ts";
export type { PolicyGateway } from "./policy_routes.ts";
export {
  type MountContext,
  SERVER_PORT_FILE,
  type ServerMount,
  startTaskServer,
  type TaskServer,
  type TaskServerOptions,
} from "./server.ts";
export {
  AGENT_TOKEN_DIR,
  type AgentScope,
  type IssuedToken,
  OPERATOR_TOKEN_FILE,
  type OperatorScope,
  operatorTokenPath,
  TokenRegistry,
  type TokenRegistryOptions,
  type TokenScope,
} from "./tokens.ts";
