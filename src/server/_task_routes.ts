// The task server's own routes, one handler each: health, tasks (create, list, read, claim and
// the agent's reports on it), agent heartbeats, status, Prometheus metrics and orchestrator
// holds. Who may call a route and what its body must be are declared in the table entry at the
// end of the file and applied by the route table (_route_table.ts); the handlers keep only the
// checks that need the task itself (visibility, a manager's children, the claim's agent).
import { z } from "zod";
import { VERSION } from "../meta/mod.ts";
import {
  checkStatus,
  IllegalTransitionError,
  isoTime,
  type Task,
  TASK_STATUSES,
  type TaskStatus,
  type TaskStore,
} from "../tasks/mod.ts";
import {
  anyJsonBody,
  defineRoute,
  forbidden,
  jsonBody,
  NO_INPUT,
  query,
  requireOwnTask,
  type Route,
  type RouteRequest,
  type ServerState,
} from "./_route_table.ts";
import { HttpError } from "./errors.ts";
import type { AgentLiveness } from "./events.ts";
import { jsonResponse } from "./http.ts";
import { type MetricFamily, METRICS_CONTENT_TYPE, renderExposition } from "./metrics.ts";
import type { AgentScope, TokenScope } from "./tokens.ts";

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

type Input<S extends z.ZodTypeAny> = RouteRequest<z.output<S>>;

function visible(scope: TokenScope, task: Task): boolean {
  if (scope.kind === "operator") return true;
  return scope.task_ids.includes(task.id) ||
    (task.parent_task_id !== null && scope.task_ids.includes(task.parent_task_id));
}

/** An agent token reports on its own behalf: the store refuses it once the claim is gone. */
function holderOf(scope: TokenScope): string | undefined {
  return scope.kind === "agent" ? scope.agent_id : undefined;
}

async function getTask(store: TaskStore, id: string): Promise<Task> {
  const task = await store.get(id);
  if (task === undefined) {
    throw new HttpError(404, "task.not_found", `no task with id '${id}'`);
  }
  return task;
}

function health(): Promise<Response> {
  return Promise.resolve(jsonResponse(200, { ok: true, version: VERSION }));
}

async function createTask(
  { scope, actor, input }: RouteRequest<unknown>,
  { store, events }: ServerState,
): Promise<Response> {
  const draft = scope.kind === "agent" ? scopedDraft(scope, input) : input;
  const task = await store.create(draft as Parameters<TaskStore["create"]>[0], { actor });
  events.emit({ type: "task.created", task, actor });
  return jsonResponse(201, { task });
}

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

async function listTasks(
  { scope, input }: Input<typeof ListQuery>,
  { store }: ServerState,
): Promise<Response> {
  const status = input.status === undefined ? undefined : parseStatuses(input.status);
  const tasks = await store.list({ status, role: input.role, parent_task_id: input.parent });
  return jsonResponse(200, { tasks: tasks.filter((t) => visible(scope, t)) });
}

/** `a,b` as task statuses (400 naming the query parameter when one is unknown). */
function parseStatuses(text: string): TaskStatus[] {
  try {
    return text.split(",").map((s) => checkStatus(s.trim()));
  } catch {
    throw new HttpError(
      400,
      "server.invalid_query",
      `'${text}' names an unknown status (one of ${TASK_STATUSES.join(", ")})`,
      { location: "status" },
    );
  }
}

async function readTask(
  { params, scope }: RouteRequest<undefined>,
  { store }: ServerState,
): Promise<Response> {
  const task = await getTask(store, params.id);
  if (!visible(scope, task)) throw forbidden(`this token is not scoped to task '${task.id}'`);
  return jsonResponse(200, { task });
}

async function claimTask(
  { params, scope, actor, input }: Input<typeof ClaimBody>,
  { store, events }: ServerState,
): Promise<Response> {
  let agent = input.agent;
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
  await getTask(store, params.id);
  const task = await store.claim(params.id, {
    agent,
    actor,
    expectedVersion: input.expected_version,
  });
  events.emit({ type: "task.claimed", task, actor });
  return jsonResponse(200, { task });
}

async function completeTask(
  { params, scope, actor, input }: Input<typeof CompleteBody>,
  { store, events }: ServerState,
): Promise<Response> {
  let task = await getTask(store, params.id);
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
    result_summary: input.summary,
    holder,
  });
  events.emit({ type: "task.completed", task, actor });
  return jsonResponse(200, { task });
}

/** The handler that moves a task to `failed` or `blocked` with the reported reason. */
function reportOutcome(status: "failed" | "blocked") {
  return async (
    { params, scope, actor, input }: Input<typeof ReasonBody>,
    { store, events }: ServerState,
  ): Promise<Response> => {
    await getTask(store, params.id);
    const task = await store.transition(params.id, status, {
      actor,
      reason: input.reason,
      holder: holderOf(scope),
    });
    events.emit({ type: status === "failed" ? "task.failed" : "task.blocked", task, actor });
    return jsonResponse(200, { task });
  };
}

async function reportProgress(
  { params, scope, actor, input }: Input<typeof ProgressBody>,
  { store, events }: ServerState,
): Promise<Response> {
  await getTask(store, params.id);
  const task = await store.progress(params.id, {
    actor,
    message: input.message,
    percent: input.percent,
    holder: holderOf(scope),
  });
  events.emit({
    type: "task.progress",
    task,
    actor,
    message: input.message,
    percent: input.percent ?? null,
  });
  return jsonResponse(200, { task });
}

async function heartbeat(
  { params, scope, input }: Input<typeof HeartbeatBody>,
  { store, events, agents, clock }: ServerState,
): Promise<Response> {
  if (input.task_id !== undefined) {
    requireOwnTask(scope, input.task_id);
    // A heartbeat naming a task renews that claim's lease; an agent that lost the claim
    // (expired, released) is told so with 409 task.claim_lost and should stop.
    await store.heartbeat(input.task_id, { agent: params.id });
  }
  const previous = agents.get(params.id);
  const agent: AgentLiveness = {
    agent_id: params.id,
    session: scope.kind === "agent" ? scope.session : null,
    task_id: input.task_id ?? previous?.task_id ?? null,
    last_heartbeat_at: isoTime(clock.nowMs()),
    heartbeats: (previous?.heartbeats ?? 0) + 1,
  };
  agents.set(params.id, agent);
  events.emit({ type: "heartbeat", agent, note: input.note ?? null });
  return jsonResponse(200, { ok: true, agent });
}

/** Tasks in the store counted by status (every status present, zero or not). */
async function countByStatus(
  store: TaskStore,
): Promise<{ total: number; byStatus: Map<TaskStatus, number> }> {
  const all = await store.list();
  const byStatus = new Map<TaskStatus, number>(TASK_STATUSES.map((s) => [s, 0]));
  for (const t of all) byStatus.set(t.status, (byStatus.get(t.status) ?? 0) + 1);
  return { total: all.length, byStatus };
}

async function status(
  { url }: RouteRequest<undefined>,
  { store, holds, agents, clock, startedMs }: ServerState,
): Promise<Response> {
  const { total, byStatus } = await countByStatus(store);
  return jsonResponse(200, {
    server: {
      version: VERSION,
      url: url.origin,
      started_at: isoTime(startedMs),
      uptime_s: Math.max(0, (clock.nowMs() - startedMs) / 1000),
    },
    store: { backend: store.backend },
    tasks: { total, by_status: Object.fromEntries(byStatus) },
    agents: [...agents.values()],
    holds: await holds.list(),
  });
}

async function metrics(
  _request: RouteRequest<undefined>,
  state: ServerState,
): Promise<Response> {
  const { byStatus } = await countByStatus(state.store);
  const active = await state.holds.list();
  const agents = [...state.agents.values()];
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
      samples: agents.map((a) => ({ labels: { agent: a.agent_id }, value: a.heartbeats })),
    },
    {
      name: "bernstein_agent_last_heartbeat_timestamp_seconds",
      help: "Unix time of each agent's last heartbeat.",
      type: "gauge",
      samples: agents.map((a) => ({
        labels: { agent: a.agent_id },
        value: Date.parse(a.last_heartbeat_at) / 1000,
      })),
    },
    {
      name: "bernstein_server_start_time_seconds",
      help: "Unix time the task server started.",
      type: "gauge",
      samples: [{ labels: {}, value: state.startedMs / 1000 }],
    },
    ...state.metrics.families(),
  ];
  return new Response(renderExposition(families), {
    status: 200,
    headers: { "content-type": METRICS_CONTENT_TYPE, "cache-control": "no-store" },
  });
}

async function listHolds(_request: RouteRequest<undefined>, { holds }: ServerState) {
  return jsonResponse(200, { holds: await holds.list() });
}

async function addHold(
  { actor, input }: Input<typeof HoldBody>,
  { holds, events, tuning }: ServerState,
): Promise<Response> {
  const ttl = input.ttl_s ?? tuning.hold_default_ttl_s;
  if (ttl > tuning.hold_max_ttl_s) {
    throw new HttpError(
      400,
      "server.invalid_body",
      `at most ${tuning.hold_max_ttl_s} seconds (tuning.server.hold_max_ttl_s)`,
      { location: "ttl_s" },
    );
  }
  const hold = await holds.add({ actor, reason: input.reason, ttlMs: ttl * 1000 });
  events.emit({ type: "hold.added", hold, actor });
  return jsonResponse(201, { hold });
}

async function releaseHold(
  { params, actor, input }: Input<typeof ReleaseBody>,
  { holds, events }: ServerState,
): Promise<Response> {
  const hold = await holds.release(params.id, {
    actor,
    reason: input.reason ?? "released by operator",
  });
  events.emit({ type: "hold.released", hold, actor });
  return jsonResponse(200, { hold });
}

const VISIBLE = "operator; agents see their tasks and children";

/** The task server's routes (docs/TASK_SERVER.md "HTTP API" is generated from them). */
export const TASK_ROUTES: readonly Route[] = [
  defineRoute({
    method: "GET",
    pattern: "/health",
    access: "public",
    input: NO_INPUT,
    doc: { answer: "`{ok, version}`" },
    handler: health,
  }),
  defineRoute({
    method: "POST",
    pattern: "/tasks",
    access: "token",
    input: anyJsonBody,
    doc: { who: "operator, manager", body: "task draft", answer: "`201 {task}`" },
    handler: createTask,
  }),
  defineRoute({
    method: "GET",
    pattern: "/tasks",
    access: "token",
    input: query(ListQuery),
    doc: { who: VISIBLE, query: "?status=a,b&role=r&parent=id", answer: "`{tasks}`" },
    handler: listTasks,
  }),
  defineRoute({
    method: "GET",
    pattern: "/tasks/{id}",
    access: "token",
    input: NO_INPUT,
    doc: { who: "as above", answer: "`{task}`" },
    handler: readTask,
  }),
  defineRoute({
    method: "POST",
    pattern: "/tasks/{id}/claim",
    access: "own_task",
    input: jsonBody(ClaimBody),
    doc: { answer: "`{task}`" },
    handler: claimTask,
  }),
  defineRoute({
    method: "POST",
    pattern: "/tasks/{id}/complete",
    access: "own_task",
    input: jsonBody(CompleteBody),
    doc: { answer: "`{task}` (claimed → in_progress → done)" },
    handler: completeTask,
  }),
  defineRoute({
    method: "POST",
    pattern: "/tasks/{id}/fail",
    access: "own_task",
    input: jsonBody(ReasonBody),
    doc: { answer: "`{task}`" },
    handler: reportOutcome("failed"),
  }),
  defineRoute({
    method: "POST",
    pattern: "/tasks/{id}/block",
    access: "own_task",
    input: jsonBody(ReasonBody),
    doc: { answer: "`{task}`" },
    handler: reportOutcome("blocked"),
  }),
  defineRoute({
    method: "POST",
    pattern: "/tasks/{id}/progress",
    access: "own_task",
    input: jsonBody(ProgressBody),
    doc: { answer: "`{task}`" },
    handler: reportProgress,
  }),
  defineRoute({
    method: "POST",
    pattern: "/agents/{id}/heartbeat",
    access: "own_agent",
    input: jsonBody(HeartbeatBody),
    doc: { answer: "`{ok, agent}`; renews the claim on `task_id` (409 if lost)" },
    handler: heartbeat,
  }),
  defineRoute({
    method: "GET",
    pattern: "/status",
    access: "operator",
    input: NO_INPUT,
    doc: { answer: "`{server, store, tasks:{total, by_status}, agents, holds}`" },
    handler: status,
  }),
  defineRoute({
    method: "GET",
    pattern: "/metrics",
    access: "operator",
    input: NO_INPUT,
    doc: { answer: "Prometheus text format 0.0.4" },
    handler: metrics,
  }),
  defineRoute({
    method: "GET",
    pattern: "/orchestrator/holds",
    access: "operator",
    input: NO_INPUT,
    doc: { answer: "`{holds}`" },
    handler: listHolds,
  }),
  defineRoute({
    method: "POST",
    pattern: "/orchestrator/holds",
    access: "operator",
    input: jsonBody(HoldBody),
    doc: { answer: "`201 {hold}`" },
    handler: addHold,
  }),
  defineRoute({
    method: "DELETE",
    pattern: "/orchestrator/holds/{id}",
    access: "operator",
    input: jsonBody(ReleaseBody),
    doc: { answer: "`{hold}`" },
    handler: releaseHold,
  }),
];
