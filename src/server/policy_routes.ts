// The task server's tool-call policy routes. `POST /policy/decide` is what an agent's
// pre-tool hook (`bernstein policy hook`) asks, with the agent's own token: the answer may
// take as long as an operator needs (an ask is parked until approved, denied or timed out).
// `/approvals` lists and answers the parked calls, with the operator token only.
import { z } from "zod";
import {
  type Approval,
  ApprovalError,
  type HookRequest,
  type PolicyDecision,
} from "../policy/mod.ts";
import { HttpError } from "./errors.ts";
import { type JsonLimits, jsonResponse, readJsonBody } from "./http.ts";
import type { TokenScope } from "./tokens.ts";

/** What the server needs of the run's policy (the run's `PolicyService`). */
export interface PolicyGateway {
  /** Decides on a call of an agent session (parks an ask until it is answered). */
  decide(session: string, request: HookRequest, signal?: AbortSignal): Promise<PolicyDecision>;
  /** The approval queue. */
  approvals: {
    /** Parked calls (pending only unless `all`). */
    list(all?: boolean): Approval[];
    /** Answers a pending call. */
    resolve(id: string, verdict: "approve" | "deny", actor: string, note?: string): Approval;
  };
}

/** What a policy route handler gets (a subset of the server's route context). */
export interface PolicyRouteContext {
  /** The request. */
  req: Request;
  /** The URL. */
  url: URL;
  /** Path parameters. */
  params: Record<string, string>;
  /** The token's scope. */
  scope: TokenScope;
  /** Who acts (`operator`, `agent:<id>`). */
  actor: string;
}

/** One route. */
export interface PolicyRoute {
  /** HTTP method. */
  method: string;
  /** Path pattern with `{name}` parameters. */
  pattern: string;
  /** Handler. */
  handler: (ctx: PolicyRouteContext) => Promise<Response>;
}

const DecideBody = z.object({
  tool_name: z.string().min(1).max(200),
  tool_input: z.record(z.string(), z.unknown()),
  transcript_path: z.string().max(4096).optional(),
  cwd: z.string().max(4096).optional(),
  tool_use_id: z.string().max(200).optional(),
}).strict();

const AnswerBody = z.object({ note: z.string().max(2000).optional() }).strict();
const ListQuery = z.object({ all: z.enum(["0", "1", "true", "false"]).optional() }).strict();

function forbidden(message: string): HttpError {
  return new HttpError(403, "auth.forbidden", message);
}

function gatewayOf(policy: PolicyGateway | undefined): PolicyGateway {
  if (policy === undefined) {
    throw new HttpError(
      503,
      "policy.disabled",
      "this run has no tool-call policy (policy.enabled: false)",
    );
  }
  return policy;
}

function answer(
  policy: PolicyGateway,
  ctx: PolicyRouteContext,
  verdict: "approve" | "deny",
  limits: JsonLimits,
) {
  return (async () => {
    if (ctx.scope.kind !== "operator") throw forbidden("approvals need the operator token");
    const body = await readJsonBody(ctx.req, limits, AnswerBody);
    try {
      const approval = policy.approvals.resolve(ctx.params.id, verdict, ctx.actor, body.note);
      return jsonResponse(200, { approval });
    } catch (error) {
      if (!(error instanceof ApprovalError)) throw error;
      const status = error.code === "approval.not_found" ? 404 : 409;
      throw new HttpError(status, error.code, error.message, { hint: error.hint });
    }
  })();
}

/**
 * The policy routes over `policy` (undefined: the run has none, and every route answers 503).
 * `limits` are the body limits (`tuning.server.max_body_bytes`, `max_json_depth`).
 */
export function policyRoutes(
  policy: PolicyGateway | undefined,
  limits: JsonLimits,
): PolicyRoute[] {
  return [
    {
      method: "POST",
      pattern: "/policy/decide",
      handler: async (ctx) => {
        const gateway = gatewayOf(policy);
        if (ctx.scope.kind !== "agent") {
          throw forbidden("decisions are for agent sessions: use the agent's own token");
        }
        const body = await readJsonBody(ctx.req, limits, DecideBody);
        const request: HookRequest = { tool: body.tool_name, input: body.tool_input };
        if (body.transcript_path !== undefined) request.transcriptPath = body.transcript_path;
        if (body.cwd !== undefined) request.cwd = body.cwd;
        if (body.tool_use_id !== undefined) request.toolUseId = body.tool_use_id;
        const decision = await gateway.decide(ctx.scope.session, request, ctx.req.signal);
        return jsonResponse(200, { decision });
      },
    },
    {
      method: "GET",
      pattern: "/approvals",
      handler: (ctx) => {
        const gateway = gatewayOf(policy);
        if (ctx.scope.kind !== "operator") throw forbidden("approvals need the operator token");
        const query = ListQuery.safeParse(Object.fromEntries(ctx.url.searchParams));
        if (!query.success) {
          throw new HttpError(400, "server.invalid_query", "the only query is all=1", {
            location: "all",
          });
        }
        const all = query.data.all === "1" || query.data.all === "true";
        return Promise.resolve(jsonResponse(200, { approvals: gateway.approvals.list(all) }));
      },
    },
    {
      method: "POST",
      pattern: "/approvals/{id}/approve",
      handler: (ctx) => answer(gatewayOf(policy), ctx, "approve", limits),
    },
    {
      method: "POST",
      pattern: "/approvals/{id}/deny",
      handler: (ctx) => answer(gatewayOf(policy), ctx, "deny", limits),
    },
  ];
}
