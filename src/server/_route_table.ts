// The task server's route table: a route is a method, a path pattern with `{name}` parameters,
// who may call it (its access rule), what its body or query must be (zod), a line for
// docs/TASK_SERVER.md, and one handler. The table applies the shared steps in one order for
// every route — authenticate the bearer token, check the route's precondition, check its
// access rule, read its input within the body limits — so no handler repeats them, and the
// route list in the docs is generated from the same table (scripts/gen_server_routes.ts).
import type { z } from "zod";
import type { Tuning } from "../config/mod.ts";
import type { Clock } from "../io/mod.ts";
import type { HoldStore, TaskStore } from "../tasks/mod.ts";
import type { PolicyGateway } from "./_policy_gateway.ts";
import { HttpError } from "./errors.ts";
import type { AgentLiveness, EventHub, ServerEvent } from "./events.ts";
import { type JsonLimits, readJsonBody, readJsonValue, validate } from "./http.ts";
import type { RequestMetrics } from "./metrics.ts";
import type { AgentScope, TokenRegistry, TokenScope } from "./tokens.ts";

/**
 * Who may call a route: anyone (`public`, no token), any valid token, the operator token,
 * an agent's own token (`agent`), the operator or the agent whose token is scoped to the
 * `{id}` task (`own_task`), the operator or the agent named by `{id}` (`own_agent`).
 */
export type Access = "public" | "token" | "operator" | "agent" | "own_task" | "own_agent";

/** What the route handlers share: the stores, the event hub, agents seen, limits. */
export interface ServerState {
  /** Where tasks live. */
  readonly store: TaskStore;
  /** Orchestrator holds. */
  readonly holds: HoldStore;
  /** Bearer tokens. */
  readonly tokens: TokenRegistry;
  /** Heartbeats and HTTP-made changes, for the run loop. */
  readonly events: EventHub<ServerEvent>;
  /** Last heartbeat of every agent seen, by agent id. */
  readonly agents: Map<string, AgentLiveness>;
  /** Time source. */
  readonly clock: Clock;
  /** When the server started (`clock.nowMs()`). */
  readonly startedMs: number;
  /** `tuning.server`. */
  readonly tuning: Tuning["server"];
  /** Request body limits (and the redactor every body passes through). */
  readonly limits: JsonLimits;
  /** Request counts and durations, for `/metrics`. */
  readonly metrics: RequestMetrics;
  /** The run's tool-call policy, if it has one. */
  readonly policy?: PolicyGateway;
}

/** What a handler gets: the request, its path parameters, the caller and its checked input. */
export interface RouteRequest<I> {
  /** The request (its signal ends with the connection). */
  readonly req: Request;
  /** Its URL. */
  readonly url: URL;
  /** Path parameters by name, decoded. */
  readonly params: Readonly<Record<string, string>>;
  /** The caller's token scope (an anonymous agent scope on public routes). */
  readonly scope: TokenScope;
  /** Who acts, for events and the audit: `operator` or `agent:<id>`. */
  readonly actor: string;
  /** The body or query, read and validated as the route declares. */
  readonly input: I;
}

/** How a route reads its input: a JSON body, a query, or nothing. */
export interface RouteInput<I> {
  /** Reads and validates it (a 400 naming the field when it is wrong). */
  read(req: Request, url: URL, limits: JsonLimits): Promise<I>;
  /** The body as the docs show it (`{summary}`, `{reason?}`), "" for none. */
  readonly body: string;
}

/** The line the docs' route table shows for a route (who and body come from the route). */
export interface RouteDoc {
  /** Who may call it, in words (defaults from the access rule). */
  readonly who?: string;
  /** Query parameters shown after the path (`?status=a,b`). */
  readonly query?: string;
  /** The body in words, when the schema's keys do not say it (`task draft`). */
  readonly body?: string;
  /** What it answers. */
  readonly answer: string;
}

/** One route of the table (build with {@linkcode defineRoute}). */
export interface Route {
  /** HTTP method. */
  readonly method: "GET" | "POST" | "DELETE";
  /** Path pattern; `{name}` matches one segment. */
  readonly pattern: string;
  /** Who may call it. */
  readonly access: Access;
  /** Its docs line. */
  readonly doc: RouteDoc;
  /** The body's keys as the docs show them (`{summary}`, `{reason?}`), "" for none. */
  readonly bodyKeys: string;
  /** Checked after authentication, before access (a route that is switched off answers 503). */
  readonly precondition?: (state: ServerState) => void;
  /** Reads the input and runs the handler (authentication and access already checked). */
  run(request: Omit<RouteRequest<unknown>, "input">, state: ServerState): Promise<Response>;
}

/** A route as written: {@linkcode Route} with a typed input and handler. */
export interface RouteSpec<I> {
  /** HTTP method. */
  method: Route["method"];
  /** Path pattern. */
  pattern: string;
  /** Who may call it. */
  access: Access;
  /** Its input ({@linkcode NO_INPUT}, {@linkcode jsonBody}, {@linkcode anyJsonBody}, {@linkcode query}). */
  input: RouteInput<I>;
  /** Its docs line. */
  doc: RouteDoc;
  /** See {@linkcode Route.precondition}. */
  precondition?: (state: ServerState) => void;
  /** Answers the request. */
  handler: (request: RouteRequest<I>, state: ServerState) => Promise<Response>;
}

/** A typed route spec as a table entry. */
export function defineRoute<I>(spec: RouteSpec<I>): Route {
  const { handler, input, ...rest } = spec;
  return {
    ...rest,
    bodyKeys: input.body,
    async run(request, state) {
      const value = await input.read(request.req, request.url, state.limits);
      return handler({ ...request, input: value }, state);
    },
  };
}

/** A route without input (the body, if any, is not read). */
export const NO_INPUT: RouteInput<undefined> = {
  read: () => Promise.resolve(undefined),
  body: "",
};

/** A JSON body validated by `schema` (empty = `{}`); the docs show its keys. */
export function jsonBody<S extends z.AnyZodObject>(schema: S): RouteInput<z.output<S>> {
  return {
    read: (req, _url, limits) => readJsonBody(req, limits, schema),
    body: describeKeys(schema),
  };
}

/** Any JSON body (the handler checks it; empty = `{}`). */
export const anyJsonBody: RouteInput<unknown> = {
  read: (req, _url, limits) => readJsonValue(req, limits),
  body: "",
};

/** The query string validated by `schema` (400 `server.invalid_query` naming the parameter). */
export function query<S extends z.ZodTypeAny>(schema: S): RouteInput<z.output<S>> {
  return {
    read: (_req, url) =>
      Promise.resolve(
        validate(schema, Object.fromEntries(url.searchParams), "server.invalid_query"),
      ),
    body: "",
  };
}

/** `{a, b?}`: an object schema's keys, optional ones marked. */
function describeKeys(schema: z.AnyZodObject): string {
  const fields: Record<string, z.ZodTypeAny> = schema.shape;
  const keys = Object.entries(fields).map(([key, field]) => field.isOptional() ? `${key}?` : key);
  return `{${keys.join(", ")}}`;
}

/** What a request path matched. */
export type RouteMatch =
  | { route: Route; params: Record<string, string> }
  | { allowed: string[] }
  | undefined;

/** Routes matched by method and path segments, in table order. */
export class RouteTable {
  readonly #routes: { route: Route; segments: string[] }[];

  constructor(routes: readonly Route[]) {
    this.#routes = routes.map((route) => ({
      route,
      segments: route.pattern.split("/").filter(Boolean),
    }));
  }

  /** The route and its parameters; the methods the path allows (405); or none (404). */
  match(method: string, path: string): RouteMatch {
    const parts = path.split("/").filter(Boolean);
    const allowed: string[] = [];
    for (const { route, segments } of this.#routes) {
      const params = matchSegments(segments, parts);
      if (params === undefined) continue;
      if (route.method === method) return { route, params };
      allowed.push(route.method);
    }
    return allowed.length > 0 ? { allowed } : undefined;
  }
}

/** Parameters of `parts` matched against `segments`, or undefined when they do not match. */
function matchSegments(segments: string[], parts: string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < parts.length; i++) {
    const segment = segments[i];
    if (!segment.startsWith("{")) {
      if (segment !== parts[i]) return undefined;
      continue;
    }
    try {
      params[segment.slice(1, -1)] = decodeURIComponent(parts[i]);
    } catch {
      return undefined;
    }
  }
  return params;
}

/** Runs a matched route: authentication, precondition, access, then its input and handler. */
export function answerRoute(
  matched: { route: Route; params: Record<string, string> },
  req: Request,
  url: URL,
  state: ServerState,
): Promise<Response> {
  const { route, params } = matched;
  const scope = route.access === "public" ? ANONYMOUS : authenticate(req, state.tokens);
  route.precondition?.(state);
  checkAccess(route.access, scope, params);
  return route.run({ req, url, params, scope, actor: actorOf(scope) }, state);
}

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

/** The scope of the request's bearer token (401 when it has none or an unknown one). */
export function authenticate(req: Request, tokens: TokenRegistry): TokenScope {
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

/** A 403 `auth.forbidden`. */
export function forbidden(message: string): HttpError {
  return new HttpError(403, "auth.forbidden", message);
}

/** Refuses (403) a token the route's access rule does not admit. */
function checkAccess(access: Access, scope: TokenScope, params: Record<string, string>): void {
  switch (access) {
    case "public":
    case "token":
      return;
    case "operator":
      if (scope.kind !== "operator") throw forbidden("this route needs the operator token");
      return;
    case "agent":
      if (scope.kind !== "agent") {
        throw forbidden("this route is for agent sessions: use the agent's own token");
      }
      return;
    case "own_task":
      requireOwnTask(scope, params.id);
      return;
    case "own_agent":
      if (scope.kind === "agent" && scope.agent_id !== params.id) {
        throw forbidden(`this token belongs to agent '${scope.agent_id}'`);
      }
      return;
  }
}

/** Refuses (403) an agent token not scoped to task `id`; the operator passes. */
export function requireOwnTask(scope: TokenScope, id: string): void {
  if (scope.kind === "agent" && !scope.task_ids.includes(id)) {
    throw forbidden(`this token is not scoped to task '${id}'`);
  }
}

/** The words the docs use for an access rule. */
export const ACCESS_WORDS: Readonly<Record<Access, string>> = {
  public: "anyone",
  token: "any token",
  operator: "operator",
  agent: "an agent (its own token)",
  own_task: "operator, the task's agent",
  own_agent: "operator, that agent",
};
