// The task server's tool-call policy routes. `POST /policy/decide` is what an agent's
// pre-tool hook (`bernstein policy hook`) asks, with the agent's own token: the answer may
// take as long as an operator needs (an ask is parked until approved, denied or timed out).
// `/approvals` lists and answers the parked calls, with the operator token only. A run without
// a policy answers every one of them 503 `policy.disabled` (after authentication).
import { z } from "zod";
import { ApprovalError, type HookRequest } from "../policy/mod.ts";
import type { PolicyGateway } from "./_policy_gateway.ts";
import {
  defineRoute,
  jsonBody,
  query,
  type Route,
  type RouteRequest,
  type ServerState,
} from "./_route_table.ts";
import { HttpError } from "./errors.ts";
import { jsonResponse } from "./http.ts";

const DecideBody = z.object({
  tool_name: z.string().min(1).max(200),
  tool_input: z.record(z.string(), z.unknown()),
  transcript_path: z.string().max(4096).optional(),
  cwd: z.string().max(4096).optional(),
  tool_use_id: z.string().max(200).optional(),
}).strict();

const AnswerBody = z.object({ note: z.string().max(2000).optional() }).strict();
const ApprovalsQuery = z.object({ all: z.enum(["0", "1", "true", "false"]).optional() }).strict();

/** The run's policy (503 `policy.disabled` when it has none). */
function gatewayOf(state: ServerState): PolicyGateway {
  if (state.policy === undefined) {
    throw new HttpError(
      503,
      "policy.disabled",
      "this run has no tool-call policy (policy.enabled: false)",
    );
  }
  return state.policy;
}

const needsPolicy = (state: ServerState) => void gatewayOf(state);

async function decide(
  { req, scope, input }: RouteRequest<z.output<typeof DecideBody>>,
  state: ServerState,
): Promise<Response> {
  if (scope.kind !== "agent") throw new Error("unreachable: the route is for agent tokens");
  const request: HookRequest = { tool: input.tool_name, input: input.tool_input };
  if (input.transcript_path !== undefined) request.transcriptPath = input.transcript_path;
  if (input.cwd !== undefined) request.cwd = input.cwd;
  if (input.tool_use_id !== undefined) request.toolUseId = input.tool_use_id;
  const decision = await gatewayOf(state).decide(scope.session, request, req.signal);
  return jsonResponse(200, { decision });
}

function listApprovals(
  { input }: RouteRequest<z.output<typeof ApprovalsQuery>>,
  state: ServerState,
): Promise<Response> {
  const all = input.all === "1" || input.all === "true";
  return Promise.resolve(jsonResponse(200, { approvals: gatewayOf(state).approvals.list(all) }));
}

/** The handler that answers a parked call with `verdict`. */
function answerWith(verdict: "approve" | "deny") {
  return (
    { params, actor, input }: RouteRequest<z.output<typeof AnswerBody>>,
    state: ServerState,
  ): Promise<Response> => {
    try {
      const approval = gatewayOf(state).approvals.resolve(params.id, verdict, actor, input.note);
      return Promise.resolve(jsonResponse(200, { approval }));
    } catch (error) {
      if (!(error instanceof ApprovalError)) throw error;
      const status = error.code === "approval.not_found" ? 404 : 409;
      throw new HttpError(status, error.code, error.message, { hint: error.hint });
    }
  };
}

/** The policy routes (docs/POLICY.md). */
export const POLICY_ROUTES: readonly Route[] = [
  defineRoute({
    method: "POST",
    pattern: "/policy/decide",
    access: "agent",
    precondition: needsPolicy,
    input: jsonBody(DecideBody),
    doc: { answer: "`{decision}` (an ask waits for the operator; docs/POLICY.md)" },
    handler: decide,
  }),
  defineRoute({
    method: "GET",
    pattern: "/approvals",
    access: "operator",
    precondition: needsPolicy,
    input: query(ApprovalsQuery),
    doc: { query: "?all=1", answer: "`{approvals}` (pending; every one with `all`)" },
    handler: listApprovals,
  }),
  defineRoute({
    method: "POST",
    pattern: "/approvals/{id}/approve",
    access: "operator",
    precondition: needsPolicy,
    input: jsonBody(AnswerBody),
    doc: { answer: "`{approval}` (`404 approval.not_found`, `409 approval.not_pending`)" },
    handler: answerWith("approve"),
  }),
  defineRoute({
    method: "POST",
    pattern: "/approvals/{id}/deny",
    access: "operator",
    precondition: needsPolicy,
    input: jsonBody(AnswerBody),
    doc: { answer: "`{approval}`" },
    handler: answerWith("deny"),
  }),
];
