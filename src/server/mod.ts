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
  discoverServerUrl,
  findRuntimeDir,
  readOperatorToken,
  SERVER_URL_ENV,
  TASK_TOKEN_ENV,
  TASK_TOKEN_FILE_ENV,
  TaskClient,
} from "./client.ts";
export { readTokenFile } from "./_secret_file.ts";
export {
  HttpError,
  refusalOfAnswer,
  ServerRefusalError,
  ServerStartError,
  ServerUnreachableError,
  TokenMissingError,
} from "./errors.ts";
export { EventHub, type ServerEvent } from "./events.ts";
export { DASHBOARD_LINKS_PATH, DASHBOARD_ROUTE_DOCS } from "./dashboard.ts";
export { errorResponse, jsonDepthExceeds, jsonResponse, readJsonBody, validate } from "./http.ts";
export { serveHttp1 } from "./http1.ts";
export { compileAllowList } from "./ip_allow.ts";
export { renderExposition, RequestMetrics } from "./metrics.ts";
export type { PolicyGateway } from "./_policy_gateway.ts";
export { ACCESS_WORDS } from "./_route_table.ts";
export {
  type MountContext,
  SERVER_ROUTES,
  type ServerMount,
  startTaskServer,
  type TaskServer,
} from "./server.ts";
export { operatorTokenPath, TokenRegistry } from "./tokens.ts";
