/**
 * The `/workers/` routes of the task server. Workers authenticate with their own token and act
 * only under their own name (register, heartbeat, poll, report a start, a failed start, a
 * result, a signature); the operator token lists workers and cordons, uncordons or drains
 * them. A missing or unknown token is 401 and recorded; a worker token used for another name
 * is 403; a report about a session the worker does not hold is 409.
 */
import {
  errorResponse,
  HttpError,
  jsonResponse,
  type MountContext,
  readJsonBody,
  type ServerMount,
} from "../server/mod.ts";
import type { WorkerPool } from "./pool.ts";
import {
  HeartbeatBody,
  PollBody,
  RegisterBody,
  ResultBody,
  SignatureBody,
  StartedBody,
  StartFailedBody,
} from "./protocol.ts";
import type { WorkerTokens } from "./tokens.ts";

/** Largest body and nesting of a worker request (a result carries the agent's summary). */
const MAX_BODY = { maxBytes: 1024 * 1024, maxDepth: 16 };

type Caller = { kind: "operator" } | { kind: "worker"; name: string };

interface Call {
  req: Request;
  parts: string[];
  caller: Caller;
  context: MountContext;
}

/** The `/workers/` mount over a pool. */
export class WorkerRoutes implements ServerMount {
  readonly prefix = "/workers/";
  readonly #pool: WorkerPool;
  readonly #tokens: WorkerTokens;

  constructor(pool: WorkerPool, tokens: WorkerTokens) {
    this.#pool = pool;
    this.#tokens = tokens;
  }

  async handle(req: Request, url: URL, context: MountContext): Promise<Response> {
    try {
      const caller = await this.#authenticate(req, context);
      const parts = url.pathname.slice(this.prefix.length).split("/").filter(Boolean)
        .map(decodeURIComponent);
      return await this.#route({ req, parts, caller, context });
    } catch (error) {
      return errorResponse(error);
    }
  }

  async #authenticate(req: Request, context: MountContext): Promise<Caller> {
    if (context.isOperator) return { kind: "operator" };
    const header = req.headers.get("authorization");
    const token = header === null ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(header)?.[1];
    const name = token === undefined ? undefined : await this.#tokens.authenticate(token);
    if (name !== undefined) return { kind: "worker", name };
    const reason = header === null ? "no Authorization header" : "an unknown bearer token";
    await this.#pool.refused(
      context.remoteAddr,
      `${req.method} ${new URL(req.url).pathname}: ${reason}`,
    );
    throw new HttpError(
      401,
      header === null ? "auth.missing_token" : "auth.invalid_token",
      "a worker token (bernstein workers token NAME) or the operator token is required",
    );
  }

  async #route(call: Call): Promise<Response> {
    const { req, parts } = call;
    if (parts.length === 0 && req.method === "GET") return this.#list(call);
    if (parts.length === 1 && parts[0] === "register" && req.method === "POST") {
      return await this.#register(call);
    }
    if (parts.length === 2 && req.method === "POST") return await this.#workerVerb(call);
    if (parts.length === 4 && parts[1] === "sessions" && req.method === "POST") {
      return await this.#sessionVerb(call);
    }
    throw new HttpError(
      404,
      "server.not_found",
      `no route ${req.method} /workers/${parts.join("/")}`,
    );
  }

  #list(call: Call): Response {
    requireOperator(call.caller);
    return jsonResponse(200, { workers: this.#pool.list() });
  }

  async #register(call: Call): Promise<Response> {
    const body = await readJsonBody(call.req, MAX_BODY, RegisterBody);
    requireWorker(call.caller, body.name);
    return jsonResponse(200, await this.#pool.register(body, call.context.remoteAddr));
  }

  /** `/workers/{name}/{heartbeat|poll|signatures|cordon|uncordon|drain}`. */
  async #workerVerb(call: Call): Promise<Response> {
    const [name, verb] = call.parts;
    if (verb === "cordon" || verb === "uncordon" || verb === "drain") {
      requireOperator(call.caller);
      return jsonResponse(200, { worker: await this.#pool.setState(name, verb) });
    }
    requireWorker(call.caller, name);
    switch (verb) {
      case "heartbeat": {
        const body = await readJsonBody(call.req, MAX_BODY, HeartbeatBody);
        return jsonResponse(200, await this.#pool.heartbeat(name, body));
      }
      case "poll": {
        const body = await readJsonBody(call.req, MAX_BODY, PollBody);
        return jsonResponse(200, await this.#pool.poll(name, body, call.req.signal));
      }
      case "signatures": {
        this.#pool.signature(name, await readJsonBody(call.req, MAX_BODY, SignatureBody));
        return jsonResponse(200, { ok: true });
      }
    }
    throw new HttpError(404, "server.not_found", `no route POST /workers/${name}/${verb}`);
  }

  /** `/workers/{name}/sessions/{session}/{started|start_failed|result}`. */
  async #sessionVerb(call: Call): Promise<Response> {
    const [name, , session, verb] = call.parts;
    requireWorker(call.caller, name);
    switch (verb) {
      case "started":
        await this.#pool.started(
          name,
          session,
          await readJsonBody(call.req, MAX_BODY, StartedBody),
        );
        return jsonResponse(200, { ok: true });
      case "start_failed": {
        const body = await readJsonBody(call.req, MAX_BODY, StartFailedBody);
        await this.#pool.startFailed(name, session, body.reason);
        return jsonResponse(200, { ok: true });
      }
      case "result":
        await this.#pool.result(name, session, await readJsonBody(call.req, MAX_BODY, ResultBody));
        return jsonResponse(200, { ok: true });
    }
    throw new HttpError(
      404,
      "server.not_found",
      `no route POST /workers/${name}/sessions/…/${verb}`,
    );
  }
}

function requireOperator(caller: Caller): void {
  if (caller.kind !== "operator") {
    throw new HttpError(403, "auth.forbidden", "this route needs the operator token");
  }
}

function requireWorker(caller: Caller, name: string): void {
  if (caller.kind === "worker" && caller.name === name) return;
  throw new HttpError(
    403,
    "auth.forbidden",
    caller.kind === "worker"
      ? `this token belongs to worker '${caller.name}', not '${name}'`
      : "this route is for workers (their own token)",
  );
}
