// `bernstein task …`: the one-line commands agents run to report (complete, fail, block,
// progress) and the read commands operators use (list, show). They talk to the task server;
// list/show fall back to reading `.sdd/runtime/tasks.jsonl` when no server is running.
import type { ErrorCode } from "../errors/mod.ts";
import { type JsonValue, jsonValueOf } from "../canonical/mod.ts";
import type { Task } from "../tasks/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { numberFlag, stringArg, stringFlag, stringsFlag } from "./spec.ts";

const ENV_HELP =
  "Server: $BERNSTEIN_SERVER_URL, else .sdd/runtime/server.port in this folder or\n" +
  "above (agents get $BERNSTEIN_SERVER_URL; their worktrees may be outside the project,\n" +
  "workspace.worktrees_dir). Token: $BERNSTEIN_TASK_TOKEN, else the\n" +
  "file named by $BERNSTEIN_TASK_TOKEN_FILE (mode 0600), else the project's operator token\n" +
  "(beside the audit key: <key folder>/projects/<id>/auth.token, outside the project).\n" +
  "While the server refuses connections the command retries\n" +
  "(tuning.server.client_connect_attempts, delays doubling from client_retry_base_ms);\n" +
  "any answer is final.";

const EXIT_HELP =
  "Exit codes: 0 done · 1 refused by the server (error[<server code>]: message) or\n" +
  "server unreachable · 2 bad flag · 3 no token found.";

async function usage(code: ErrorCode, message: string): Promise<never> {
  const { UsageError } = await import("../errors/mod.ts");
  throw new UsageError(code, message);
}

async function requireText(ctx: CommandContext, flag: string): Promise<string> {
  const value = stringFlag(ctx, flag);
  if (value === undefined || value.trim() === "") {
    return await usage("cli.missing_flag", `--${flag} is required`);
  }
  return value;
}

/** Retry settings from the effective configuration; built-in defaults if it cannot load. */
async function retrySettings(ctx: CommandContext): Promise<{ attempts: number; baseMs: number }> {
  const { DEFAULT_TUNING, loadConfig } = await import("../config/mod.ts");
  let server = DEFAULT_TUNING.server;
  try {
    const loaded = await loadConfig({ cwd: ctx.cwd, env: ctx.env });
    if (loaded.config !== undefined) server = loaded.config.tuning.server;
  } catch {
    // An agent's report must not fail because a config layer is broken: use the defaults.
  }
  return { attempts: server.client_connect_attempts, baseMs: server.client_retry_base_ms };
}

async function connect(ctx: CommandContext, attempts?: number) {
  const server = await import("../server/mod.ts");
  const { systemClock } = await import("../io/mod.ts");
  const endpoint = await server.discoverEndpoint({ env: ctx.env, cwd: ctx.cwd });
  const retry = await retrySettings(ctx);
  const total = attempts ?? retry.attempts;
  const client = new server.TaskClient(endpoint, {
    attempts: total,
    baseDelayMs: retry.baseMs,
    clock: systemClock,
    onRetry: (attempt, delay) =>
      ctx.out.note(
        `note: ${endpoint.url} refused the connection; retrying in ${delay} ms (${attempt}/${
          total - 1
        })`,
      ),
  });
  return { client, endpoint };
}

function taskJson(task: Task): JsonValue {
  return jsonValueOf(task);
}

function report(ctx: CommandContext, task: Task, what: string): number {
  if (ctx.json) ctx.out.json({ task: taskJson(task) });
  else ctx.out.line(`${task.id} ${what} (status ${task.status}, version ${task.version})`);
  return 0;
}

async function complete(ctx: CommandContext): Promise<number> {
  const id = stringArg(ctx, "id") ?? "";
  const summary = await requireText(ctx, "summary");
  const { client } = await connect(ctx);
  return report(ctx, await client.complete(id, summary), "completed");
}

async function fail(ctx: CommandContext): Promise<number> {
  const id = stringArg(ctx, "id") ?? "";
  const reason = await requireText(ctx, "reason");
  const { client } = await connect(ctx);
  return report(ctx, await client.fail(id, reason), "failed");
}

async function block(ctx: CommandContext): Promise<number> {
  const id = stringArg(ctx, "id") ?? "";
  const reason = await requireText(ctx, "reason");
  const { client } = await connect(ctx);
  return report(ctx, await client.block(id, reason), "blocked");
}

async function progress(ctx: CommandContext): Promise<number> {
  const id = stringArg(ctx, "id") ?? "";
  const message = await requireText(ctx, "message");
  const percent = numberFlag(ctx, "percent");
  if (percent !== undefined && !(percent >= 0 && percent <= 100)) {
    await usage("cli.bad_flag", `--percent must be from 0 to 100, got ${percent}`);
  }
  const { client } = await connect(ctx);
  return report(ctx, await client.progress(id, message, percent), "progress recorded");
}

async function create(ctx: CommandContext): Promise<number> {
  const title = await requireText(ctx, "title");
  const priority = numberFlag(ctx, "priority");
  const draft: Record<string, unknown> = {
    title,
    description: stringFlag(ctx, "description") ?? "",
    role: stringFlag(ctx, "role") ?? "backend",
    depends_on: stringsFlag(ctx, "depends-on"),
    owned_files: stringsFlag(ctx, "file"),
  };
  if (priority !== undefined) draft.priority = priority;
  const parent = stringFlag(ctx, "parent") ?? ctx.env.get("BERNSTEIN_TASK_ID");
  if (parent !== undefined) draft.parent_task_id = parent;
  for (const key of ["scope", "complexity", "cli", "model", "effort"] as const) {
    const value = stringFlag(ctx, key);
    if (value !== undefined) draft[key] = value;
  }
  // Checked here first, so a bad draft is a usage error even with no server running.
  const { TaskDraftSchema } = await import("../tasks/mod.ts");
  const parsed = TaskDraftSchema.safeParse(draft);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return await usage("task.invalid", `${issue.path.join(".") || "draft"}: ${issue.message}`);
  }
  const { client } = await connect(ctx);
  const task = await client.createTask(parsed.data);
  if (ctx.json) ctx.out.json({ task: taskJson(task) });
  else ctx.out.line(`${task.id} created (${task.role}, priority ${task.priority})`);
  return 0;
}

/** Tasks from the server, or from the task log when no server answers. */
async function readTasks(
  ctx: CommandContext,
  query: { status?: string[]; role?: string },
): Promise<{ tasks: Task[]; source: string }> {
  const server = await import("../server/mod.ts");
  const tasks = await import("../tasks/mod.ts");
  let why: string;
  try {
    // One attempt: a read falls back to the log instead of waiting for a server.
    const { client, endpoint } = await connect(ctx, 1);
    const status = query.status?.map((s) => tasks.checkStatus(s));
    return { tasks: await client.listTasks({ status, role: query.role }), source: endpoint.url };
  } catch (error) {
    if (
      !(error instanceof server.ServerUnreachableError || error instanceof server.TokenMissingError)
    ) {
      throw error;
    }
    why = error.message;
  }
  const runtime = await server.findRuntimeDir(ctx.cwd, tasks.TASK_LOG_FILE);
  if (runtime === undefined) {
    const { BernsteinError } = await import("../errors/mod.ts");
    throw new BernsteinError(
      "task.no_store",
      `no task server answered (${why}) and no .sdd/runtime/${tasks.TASK_LOG_FILE} was found`,
    );
  }
  const { join } = await import("node:path");
  const path = join(runtime, tasks.TASK_LOG_FILE);
  const snapshot = await tasks.readTaskLog(path);
  if (!ctx.json) ctx.out.note(`note: no task server answered; read ${path}`);
  const statuses = query.status?.map((s) => tasks.checkStatus(s));
  const all = [...snapshot.tasks.values()].filter((t) =>
    (statuses === undefined || statuses.includes(t.status)) &&
    (query.role === undefined || t.role === query.role)
  );
  return { tasks: all, source: path };
}

async function checkStatuses(values: string[]): Promise<string[]> {
  const { TASK_STATUSES } = await import("../tasks/mod.ts");
  const { closestMatch } = await import("../errors/mod.ts");
  const out = values.flatMap((v) => v.split(",")).map((s) => s.trim()).filter((s) => s !== "");
  for (const s of out) {
    if (!(TASK_STATUSES as readonly string[]).includes(s)) {
      const near = closestMatch(s, TASK_STATUSES);
      await usage(
        "cli.bad_flag",
        `--status '${s}' is not a task status (${TASK_STATUSES.join(", ")})${
          near ? `; did you mean '${near}'?` : ""
        }`,
      );
    }
  }
  return out;
}

async function list(ctx: CommandContext): Promise<number> {
  const statusFlag = stringsFlag(ctx, "status");
  const status = statusFlag.length > 0 ? await checkStatuses(statusFlag) : undefined;
  const { tasks, source } = await readTasks(ctx, { status, role: stringFlag(ctx, "role") });
  if (ctx.json) {
    ctx.out.json({ source, tasks: tasks.map(taskJson) });
    return 0;
  }
  if (tasks.length === 0) {
    ctx.out.line("no tasks");
    return 0;
  }
  const { alignColumns } = await import("./output.ts");
  const rows = [["ID", "STATUS", "PRI", "ROLE", "AGENT", "TITLE"]];
  for (const t of tasks) {
    rows.push([t.id, t.status, String(t.priority), t.role, t.assigned_agent ?? "-", t.title]);
  }
  for (const line of alignColumns(rows)) ctx.out.line(line);
  return 0;
}

async function show(ctx: CommandContext): Promise<number> {
  const id = stringArg(ctx, "id") ?? "";
  const server = await import("../server/mod.ts");
  let task: Task | undefined;
  let source: string;
  try {
    const { client, endpoint } = await connect(ctx, 1);
    task = await client.getTask(id);
    source = endpoint.url;
  } catch (error) {
    if (
      !(error instanceof server.ServerUnreachableError || error instanceof server.TokenMissingError)
    ) {
      throw error;
    }
    const found = await readTasks(ctx, {});
    task = found.tasks.find((t) => t.id === id);
    source = found.source;
    if (task === undefined) {
      const { TaskNotFoundError } = await import("../tasks/mod.ts");
      throw new TaskNotFoundError(id);
    }
  }
  if (ctx.json) {
    ctx.out.json({ source, task: taskJson(task) });
    return 0;
  }
  const { alignColumns } = await import("./output.ts");
  const rows: string[][] = [];
  for (const [key, value] of Object.entries(task)) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    rows.push([`${key}:`, text]);
  }
  for (const line of alignColumns(rows)) ctx.out.line(line);
  return 0;
}

const ID_ARG = [{ name: "id", required: true, help: "Task id." }];

/** The `task` group. */
export const TASK_COMMANDS: CommandSpec[] = [
  {
    path: ["task", "create"],
    summary: "Create a task (managers decompose a goal with this; operators add work).",
    description: "The parent is --parent, else $BERNSTEIN_TASK_ID (the manager's own task).\n" +
      `${ENV_HELP}\n${EXIT_HELP}\nJSON: {task}.`,
    flags: [
      { name: "title", type: "string", valueName: "TEXT", help: "One line (required)." },
      {
        name: "description",
        type: "string",
        valueName: "TEXT",
        help: "What to do, for the agent.",
      },
      {
        name: "role",
        type: "string",
        valueName: "ROLE",
        help: "Role that does it (default backend).",
      },
      { name: "priority", type: "number", valueName: "N", help: "1 is highest." },
      { name: "scope", type: "string", valueName: "SCOPE", help: "small, medium, large or xl." },
      { name: "complexity", type: "string", valueName: "LEVEL", help: "low, medium or high." },
      {
        name: "depends-on",
        type: "string",
        multiple: true,
        valueName: "ID",
        help: "A task that must be merged first.",
      },
      {
        name: "file",
        type: "string",
        multiple: true,
        valueName: "PATH",
        help: "A file the task expects to change.",
      },
      { name: "parent", type: "string", valueName: "ID", help: "Parent task id." },
      { name: "cli", type: "string", valueName: "NAME", help: "Adapter for this task." },
      { name: "model", type: "string", valueName: "MODEL", help: "Model or tier for this task." },
      { name: "effort", type: "string", valueName: "LEVEL", help: "low, medium, high or max." },
    ],
    json: true,
    examples: ['bernstein task create --title "Add the parser" --role backend --file src/parse.ts'],
    run: create,
  },
  {
    path: ["task", "complete"],
    summary: "Report a task as done (agents run this when they finish).",
    description: "Moves the task to done (from claimed, via in_progress) with your summary.\n" +
      `${ENV_HELP}\n${EXIT_HELP}\nJSON: {task}.`,
    args: ID_ARG,
    flags: [{
      name: "summary",
      type: "string",
      valueName: "TEXT",
      help: "What was done (required).",
    }],
    json: true,
    examples: ['bernstein task complete t-01hq… --summary "Added the parser and its tests"'],
    run: complete,
  },
  {
    path: ["task", "fail"],
    summary: "Report that a task cannot be done.",
    description: `Moves the task to failed with your reason.\n${ENV_HELP}\n${EXIT_HELP}\n` +
      "JSON: {task}.",
    args: ID_ARG,
    flags: [{ name: "reason", type: "string", valueName: "TEXT", help: "Why (required)." }],
    json: true,
    examples: ['bernstein task fail t-01hq… --reason "the API it needs does not exist"'],
    run: fail,
  },
  {
    path: ["task", "block"],
    summary: "Report that a task is blocked (needs something outside your reach).",
    description: `Moves the task to blocked with your reason.\n${ENV_HELP}\n${EXIT_HELP}\n` +
      "JSON: {task}.",
    args: ID_ARG,
    flags: [{ name: "reason", type: "string", valueName: "TEXT", help: "What is missing." }],
    json: true,
    run: block,
  },
  {
    path: ["task", "progress"],
    summary: "Report progress on a task you are working on.",
    description: `Records a progress message (and percentage) on a claimed or running task.\n` +
      `${ENV_HELP}\n${EXIT_HELP}\nJSON: {task}.`,
    args: ID_ARG,
    flags: [
      { name: "message", type: "string", valueName: "TEXT", help: "What is happening (required)." },
      { name: "percent", type: "number", valueName: "N", help: "Completion estimate, 0-100." },
    ],
    json: true,
    examples: ['bernstein task progress t-01hq… --message "tests written" --percent 60'],
    run: progress,
  },
  {
    path: ["task", "list"],
    summary: "List tasks (from the task server, else from .sdd/runtime/tasks.jsonl).",
    description: "Agent tokens see only their own tasks and their children.\n" +
      "JSON: {source: server URL or log path, tasks: [task]} in creation order; a task has\n" +
      "id, title, description, role, priority, scope, complexity, depends_on, parent_task_id,\n" +
      "owned_files, completion_signals, cli, model, effort, attachments, max_retries,\n" +
      "retry_count, assigned_agent, result_summary, terminal_reason, created_at, version,\n" +
      "metadata, status, updated_at.",
    flags: [
      {
        name: "status",
        type: "string",
        multiple: true,
        valueName: "S",
        help: "Only these statuses (repeat or comma-separate).",
      },
      { name: "role", type: "string", valueName: "ROLE", help: "Only this role." },
    ],
    json: true,
    examples: ["bernstein task list --status open,claimed", "bernstein task list --json"],
    run: list,
  },
  {
    path: ["task", "show"],
    summary: "Show one task (from the task server, else from .sdd/runtime/tasks.jsonl).",
    description: "JSON: {source, task} (fields as in 'task list').",
    args: ID_ARG,
    json: true,
    run: show,
  },
];
