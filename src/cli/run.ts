// `bernstein run`, `status`, `ps`, `logs`, `stop`: start a run and watch or stop it.
import type { ErrorCode } from "../errors/mod.ts";
import type { Clock } from "../io/mod.ts";
import type { RunReporter, RunStopControl, RunSummary, StopSignal } from "../orchestrator/mod.ts";
import type { CommandContext, CommandSpec } from "./spec.ts";
import { booleanFlag, numberFlag, stringArg, stringFlag, stringsFlag } from "./spec.ts";

const RUN_EXIT = "Exit codes: 0 the run is HEALTHY (every task merged or had nothing to merge),\n" +
  "1 UNHEALTHY (a task failed, a merge was refused, the backstop or a stop ended it),\n" +
  "2 usage error or refused up front (default branch, unknown adapter, bad plan), or the manager\n" +
  "created no task in time (diagnostic in .sdd/runs/<run-id>/manager_stalled.json),\n" +
  "130/143 ended at once by a second SIGINT/SIGTERM (or the first one's grace ran out).";

function isolationFlag(
  value: string | undefined,
  Usage: new (code: ErrorCode, message: string) => Error,
): "auto" | "sandbox" | "none" | undefined {
  if (value === undefined) return undefined;
  if (value === "auto" || value === "sandbox" || value === "none") return value;
  throw new Usage("cli.bad_flag", `--isolation must be auto, sandbox or none, got '${value}'`);
}

async function run(ctx: CommandContext): Promise<number> {
  const orchestrator = await import("../orchestrator/mod.ts");
  const io = await import("../io/mod.ts");
  const { UsageError } = await import("../errors/mod.ts");
  const maxAgents = numberFlag(ctx, "max-agents");
  if (maxAgents !== undefined && !(Number.isInteger(maxAgents) && maxAgents > 0)) {
    throw new UsageError(
      "cli.bad_flag",
      `--max-agents must be a positive integer, got ${maxAgents}`,
    );
  }
  const attach = stringsFlag(ctx, "attach");
  const options = {
    planPath: stringArg(ctx, "plan"),
    goal: stringFlag(ctx, "goal"),
    cli: stringFlag(ctx, "cli"),
    model: stringFlag(ctx, "model"),
    maxAgents,
    dryRun: booleanFlag(ctx, "dry-run"),
    planOnly: booleanFlag(ctx, "plan-only"),
    fresh: booleanFlag(ctx, "fresh"),
    attachCount: attach.length,
    isolation: isolationFlag(stringFlag(ctx, "isolation"), UsageError),
  };
  // A shared store that cannot be reached refuses the run (and the dry run) before anything
  // starts: one line naming the URL's key, its layer and host:port, exit 2.
  if (!options.planOnly) await storagePreflight(ctx, maxAgents);
  // `--attach` files must exist and be readable now, before anything else happens.
  const { RunAttachments } = await import("../attachments/mod.ts");
  const attachments = await RunAttachments.fromCommandLine(attach, {
    cwd: ctx.cwd,
    warn: (w) => ctx.out.warn(w),
  });
  const reporter: RunReporter = ctx.json
    ? new orchestrator.JsonLinesReporter((line) => ctx.out.line(line))
    : ctx.out.color
    ? new orchestrator.LiveReporter((text) => ctx.out.stdout.write(text), {
      width: terminalColumns(),
    })
    : new orchestrator.LineReporter((line) => ctx.out.line(line));
  const report = await orchestrator.executeRun(options, {
    cwd: ctx.cwd,
    env: ctx.env,
    clock: io.systemClock,
    random: io.systemRandom,
    reporter,
    warn: (w) => ctx.out.warn(w),
    attachmentGate: (input) => attachments.gate(input),
    attachments: (parts) =>
      attachments.provider({ ...parts, clock: io.systemClock, random: io.systemRandom }),
    onStopSignal: stopHandler(ctx, orchestrator, io.systemClock, () => reporter.close?.()),
    workers: async (parts) => (await import("../workers/mod.ts")).startWorkerPool(parts),
  }).catch(async (error) => {
    // A plan with several problems: every one on its own line (then exit 2), not the first.
    if (await listPlanProblems(ctx, error)) return undefined;
    throw error;
  });
  if (report === undefined) return 2;
  const attached = attachments.rows();
  if (report.kind === "plan" || report.kind === "dry-run") {
    const rows = report.planned.drafts.map((d) => ({
      id: d.id ?? d.title,
      title: d.title,
      role: d.role,
      adapter: report.adapters[d.id ?? d.title],
      depends_on: d.depends_on ?? [],
      condition: (d.metadata?.condition ?? null) as { on: string[]; expr: string } | null,
    }));
    if (ctx.json) {
      ctx.out.json({
        kind: report.kind,
        source: report.planned.source,
        tasks: rows,
        ...(report.kind === "dry-run"
          ? {
            branch: report.branch,
            attachments: attached,
            isolation: report.isolation,
          }
          : {}),
      });
      return 0;
    }
    ctx.out.line(
      `${
        report.kind === "plan" ? "plan" : "dry run"
      }: ${rows.length} task(s) from ${report.planned.source.kind}`,
    );
    for (const r of rows) {
      const deps = r.depends_on.length > 0 ? `  after ${r.depends_on.join(", ")}` : "";
      const cond = r.condition === null
        ? ""
        : `  only if ${r.condition.on.join(", ")} ended with ${r.condition.expr}`;
      ctx.out.line(`  ${r.id}  [${r.role} · ${r.adapter}]  ${r.title}${deps}${cond}`);
    }
    if (report.kind === "dry-run") {
      printAttachments(ctx, attached);
      const iso = report.isolation;
      ctx.out.line(
        `agents would run ${
          iso.isolation === "sandbox" ? `in the sandbox (${iso.backend})` : "WITHOUT a sandbox"
        } (isolation: ${iso.requested})`,
      );
      ctx.out.line(`merges would go into '${report.branch}'; nothing was started`);
    }
    return 0;
  }
  const s = report.summary;
  if (ctx.json) {
    ctx.out.json({
      type: "run.summary",
      summary: { ...s, attachments: attached },
    });
  } else {
    printSummary(ctx, s, orchestrator.attemptLines);
    printAttachments(ctx, attached);
  }
  if (s.end === "manager-stalled") return 2;
  return s.health === "HEALTHY" ? 0 : 1;
}

/** Prints each error of a plan that did not load; false when `error` is not such a plan. */
async function listPlanProblems(ctx: CommandContext, error: unknown): Promise<boolean> {
  const { PlanLoadError } = await import("../plan/mod.ts");
  if (!(error instanceof PlanLoadError)) return false;
  const errors = error.problems.filter((p) => p.severity === "error");
  if (errors.length < 2) return false;
  const { BernsteinError } = await import("../errors/mod.ts");
  for (const p of errors) {
    ctx.out.error(new BernsteinError(p.code, p.message, { location: p.location, hint: p.hint }));
  }
  return true;
}

/** Connects to the configured engines when the configuration is valid (else `run` reports it). */
async function storagePreflight(ctx: CommandContext, maxAgents: number | undefined) {
  const { loadConfig } = await import("../config/mod.ts");
  const flags: Record<string, unknown> = maxAgents === undefined ? {} : { max_agents: maxAgents };
  const loaded = await loadConfig({ cwd: ctx.cwd, env: ctx.env, flags }).catch(() => undefined);
  if (loaded?.config === undefined || loaded.config.storage.backend === "memory") return;
  if (loaded.problems.some((p) => p.severity === "error")) return;
  const { checkStorageReachable } = await import("../storage/mod.ts");
  await checkStorageReachable({ config: loaded.config, sources: loaded.sources });
}

/** The closing summary; `attempts` formats the attempt lines (run_summary.ts). */
function printSummary(
  ctx: CommandContext,
  s: RunSummary,
  attempts: (rows: RunSummary["attempts"]) => string[],
): void {
  const color = s.health === "HEALTHY" ? "green" : "red";
  ctx.out.line("");
  ctx.out.line(`run ${s.run_id}: ${ctx.out.style(color, s.health)} — ${s.reason}`);
  const counts = Object.entries(s.tasks).filter(([k]) => k !== "total").map(([k, v]) => `${v} ${k}`)
    .join(" · ");
  ctx.out.line(`  tasks    ${s.tasks.total} total · ${counts}`);
  if (s.isolation !== undefined) {
    const n = Object.keys(s.isolation.agents).length;
    ctx.out.line(
      `  isolation ${
        s.isolation.in_force === "sandbox"
          ? `sandbox (${s.isolation.backend})`
          : "NONE (no sandbox)"
      } for ${n} agent(s)`,
    );
  }
  for (const m of s.merges) {
    ctx.out.line(`  merged   ${m.task_id} (${m.files.length} file(s)) into ${s.branch}`);
  }
  for (const r of s.refused_merges) {
    ctx.out.line(
      `  refused  ${r.task_id}: ${r.reason}: ${r.detail.split("\n")[0]} (branch ${r.branch} kept)`,
    );
  }
  for (
    const k of s.kept_branches.filter((k) => !s.refused_merges.some((r) => r.task_id === k.task_id))
  ) {
    ctx.out.line(`  failed   ${k.task_id}: ${k.reason} (branch ${k.branch} kept)`);
  }
  for (const id of s.recovered ?? []) {
    ctx.out.line(`  recovered ${id} (a recovery step ran on its failure and merged)`);
  }
  for (const line of attempts(s.attempts ?? [])) ctx.out.line(`  attempt  ${line}`);
  for (const c of s.cost.by_adapter_model) {
    ctx.out.line(
      `  cost     ${c.adapter}/${c.model}: ${c.runs} run(s), ${
        c.cost_usd === null ? "not reported" : `$${c.cost_usd.toFixed(4)}`
      }`,
    );
  }
  for (const c of s.checkpoints ?? []) {
    ctx.out.line(
      `  signed   ${c.log} checkpoint: ${c.size} ${
        c.log === "audit" ? "line(s)" : "entr(y/ies)"
      }, root ${c.root.slice(0, 16)}… (checkpoints.jsonl:${c.line})`,
    );
  }
  for (const n of s.notifications ?? []) {
    const bad = n.failed + n.dropped > 0;
    ctx.out.line(
      `  notified ${n.channel} → ${n.target}: ${n.delivered} delivered` +
        (bad ? ctx.out.style("yellow", `, ${n.failed} failed, ${n.dropped} dropped`) : ""),
    );
  }
  ctx.out.line(`  summary  ${s.path}`);
  ctx.out.line(`  score    ${s.scorecard.path} (outcome ${s.scorecard.outcome ?? "?"})`);
  ctx.out.line(`  report   bernstein runs report ${s.run_id} --open`);
}

interface AttachmentView {
  task_id: string | null;
  path: string;
  kind: string | null;
  outcome: string;
  reason: string | null;
}

function printAttachments(ctx: CommandContext, rows: readonly AttachmentView[]): void {
  for (const r of rows) {
    const kind = r.kind ? ` ${r.kind}` : "";
    const why = r.reason ? ` (${r.reason})` : "";
    ctx.out.line(`  attach   ${r.task_id ?? "run"}: ${r.path}${kind} ${r.outcome}${why}`);
  }
}

/**
 * SIGINT/SIGTERM: the first asks the run to stop, a second (or the first one's grace running
 * out) kills the agents and exits at once with 128 + the signal's number (stop_signals.ts).
 */
function stopHandler(
  ctx: CommandContext,
  orchestrator: typeof import("../orchestrator/mod.ts"),
  clock: Clock,
  closeView: () => void,
): (control: RunStopControl) => () => void {
  return (control) => {
    const signals = new orchestrator.StopSignals(clock, control.graceMs, {
      stop: control.stop,
      endNow: (reason, exitCode) => {
        control.killAgentsNow();
        closeView(); // the live view's lines go, so the last line says why the run ended
        ctx.out.line(
          `run ended at once (${reason}): its agents were killed; 'bernstein run' resumes it`,
        );
        Deno.exit(exitCode);
      },
    });
    const names: StopSignal[] = ["SIGINT", "SIGTERM"];
    const handlers = names.map((signal) => {
      const handler = () => signals.receive(signal);
      try {
        Deno.addSignalListener(signal, handler);
      } catch {
        // Signals are not supported on this platform: the run can still be stopped by killing it.
      }
      return { signal, handler };
    });
    return () => {
      signals.close();
      for (const h of handlers) {
        try {
          Deno.removeSignalListener(h.signal, h.handler);
        } catch {
          // Not installed.
        }
      }
    };
  };
}

async function status(ctx: CommandContext): Promise<number> {
  const { findProject } = await import("../config/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const project = await findProject(ctx.cwd);
  const run = await orchestrator.readCurrentRun(project.sdd);
  if (run === undefined) {
    if (ctx.json) ctx.out.json({ run: null });
    else ctx.out.line("no run in this project yet ('bernstein run' starts one)");
    return 0;
  }
  const alive = run.status === "running" && orchestrator.processAlive(run.pid);
  const state = run.status === "finished"
    ? "finished"
    : alive
    ? "running"
    : "interrupted (resumable: run 'bernstein run' again)";
  const all = await runTasks(ctx, project.sdd, run.run_id);
  const byStatus: Record<string, number> = {};
  for (const t of all) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
  const sessions = (await orchestrator.listSessionFiles(project.sdd)).filter((s) =>
    s.state === "running"
  );
  if (ctx.json) {
    ctx.out.json({
      run: {
        run_id: run.run_id,
        state,
        branch: run.branch,
        pid: run.pid,
        started_at: run.started_at,
        attempt: run.attempt,
      },
      tasks: { total: all.length, ...byStatus },
      agents: sessions.map((s) => ({
        session: s.session,
        task_id: s.task_id,
        adapter: s.adapter,
        pid: s.pid,
      })),
    });
    return 0;
  }
  ctx.out.line(
    `run ${run.run_id}: ${state} on '${run.branch}' (attempt ${run.attempt}, started ${run.started_at})`,
  );
  ctx.out.line(
    `  tasks: ${all.length} total${
      Object.entries(byStatus).map(([k, v]) => ` · ${v} ${k}`).join("")
    }`,
  );
  for (const s of sessions) {
    ctx.out.line(`  agent ${s.session}  ${s.adapter}  task ${s.task_id}  pid ${s.pid}`);
  }
  return 0;
}

/** The run's tasks from its store (the embedded log, or the shared store of the config). */
async function runTasks(ctx: CommandContext, sdd: string, runId: string) {
  const { loadConfig } = await import("../config/mod.ts");
  const { listRunTasks } = await import("../storage/mod.ts");
  const io = await import("../io/mod.ts");
  const loaded = await loadConfig({ cwd: ctx.cwd, env: ctx.env }).catch(() => undefined);
  const config = loaded?.config;
  const runtimeDir = io.runtimeDir(sdd);
  if (config === undefined || config.storage.backend === "memory") {
    const tasks = await import("../tasks/mod.ts");
    const log = await tasks.readTaskLog(io.runtimePath(sdd, "tasks")).catch(() => undefined);
    return log ? [...log.tasks.values()] : [];
  }
  return await listRunTasks({
    config,
    sources: loaded?.sources,
    runtimeDir,
    runId,
    clock: io.systemClock,
    random: io.systemRandom,
  });
}

async function ps(ctx: CommandContext): Promise<number> {
  const { findProject } = await import("../config/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const { alignColumns } = await import("./output.ts");
  const project = await findProject(ctx.cwd);
  const all = booleanFlag(ctx, "all");
  const sessions = (await orchestrator.listSessionFiles(project.sdd)).filter((s) =>
    all || s.state === "running"
  );
  const rows = sessions.map((s) => ({
    session: s.session,
    task_id: s.task_id,
    adapter: s.adapter,
    model: s.model ?? "default",
    pid: s.pid,
    state: s.state === "running" && !orchestrator.isRemoteSession(s) &&
        !orchestrator.processAlive(s.pid)
      ? "gone"
      : s.state,
    started_at: s.started_at,
    branch: s.branch,
  }));
  if (ctx.json) {
    ctx.out.json({ agents: rows });
    return 0;
  }
  if (rows.length === 0) {
    ctx.out.line(
      all ? "no agent sessions recorded" : "no agent running (--all shows finished sessions)",
    );
    return 0;
  }
  for (
    const line of alignColumns([
      ["SESSION", "TASK", "ADAPTER", "MODEL", "PID", "STATE", "STARTED"],
      ...rows.map((
        r,
      ) => [r.session, r.task_id, r.adapter, r.model, String(r.pid), r.state, r.started_at]),
    ])
  ) {
    ctx.out.line(line);
  }
  return 0;
}

async function stop(ctx: CommandContext): Promise<number> {
  const { findProject } = await import("../config/mod.ts");
  const orchestrator = await import("../orchestrator/mod.ts");
  const project = await findProject(ctx.cwd);
  const run = await orchestrator.readCurrentRun(project.sdd);
  const force = booleanFlag(ctx, "force");
  if (
    run === undefined || run.status !== "running" || !orchestrator.processAlive(run.pid)
  ) {
    ctx.out.line("no run is in progress");
    return 0;
  }
  if (force) {
    for (const s of await orchestrator.listSessionFiles(project.sdd)) {
      // An agent on a worker host: its pid is that host's (the run's drain stops it there).
      if (s.state !== "running" || orchestrator.isRemoteSession(s)) continue;
      try {
        Deno.kill(-s.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
  }
  Deno.kill(run.pid, "SIGTERM");
  ctx.out.line(
    `asked run ${run.run_id} (pid ${run.pid}) to stop${
      force ? "; agents killed" : "; running agents get the drain timeout to finish"
    }`,
  );
  return 0;
}

/** `run` and the commands that watch and stop runs. */
export const RUN_COMMANDS: CommandSpec[] = [
  {
    path: ["run"],
    summary: "Run a plan, the backlog or a goal: agents in worktrees, gates, merges, records.",
    description:
      "Planning, in order: a resumable interrupted run (unless --fresh), the backlog in\n" +
      ".sdd/backlog/open/ (a goal or plan given too is skipped with a loud warning), the plan\n" +
      "file, the goal (a manager agent decomposes it through the task server).\n" +
      "Refused up front, before any worktree or process: the default branch checked out at the\n" +
      "root (unless BERNSTEIN_ALLOW_MERGE_TO_DEFAULT_BRANCH=1), uncommitted changes to tracked\n" +
      "files (bernstein.yaml, .sdd/ and the other run-configuration files aside),\n" +
      "an unknown or missing adapter, and attachments a spawn would refuse (missing, not a file,\n" +
      "binary, a bad range, over the limits, an image for a non-multimodal adapter: every one\n" +
      "listed); --attach on a run that would resume (use --fresh).\n" +
      "The run stays in the foreground with a live view on a TTY (plain lines otherwise or with\n" +
      "NO_COLOR) and prints a one-time login link to its live dashboard ({type: dashboard.ready,\n" +
      "url} with --json; 'bernstein dashboard' prints another); --json streams events as JSON\n" +
      "lines and ends with {type: run.summary, summary}; summary.attachments (and the dry run's\n" +
      "attachments) list [{task_id, field, path, kind, mime, sha256, size, outcome, reason}],\n" +
      "outcome attached | partial | not_attached (docs/ATTACHMENTS.md).\n" +
      "Stop it with Ctrl-C, SIGTERM or 'bernstein stop': no new agents start, running ones get\n" +
      "tuning.orchestrator.drain_timeout_s to finish, then are killed (SIGTERM to each agent's\n" +
      "process group, SIGKILL after tuning.agent.kill_grace_s); work still pending a kill grace\n" +
      "+ 10 s later is left (audited run.stop_unsettled); the run records its end and exits 1.\n" +
      "A second Ctrl-C/SIGTERM, or the run not ended within tick + drain + 2 x kill grace + 3 x\n" +
      "(kill grace + 10 s) + notification drain + 30 s (203 s by default), kills every agent's\n" +
      "group at once and exits 130/143 without writing more, as a crash: the next\n" +
      "'bernstein run' resumes it.\n" +
      RUN_EXIT,
    args: [{ name: "plan", help: "Plan file (YAML: stages and steps)." }],
    flags: [
      {
        name: "goal",
        short: "g",
        type: "string",
        valueName: "TEXT",
        help: "A goal for a manager agent to decompose.",
      },
      {
        name: "cli",
        type: "string",
        valueName: "NAME",
        help:
          "Default adapter: for tasks with no cli of their own or of their role (role_model_policy).",
      },
      {
        name: "model",
        type: "string",
        valueName: "MODEL",
        help: "Model or tier (haiku, sonnet, opus) for tasks without their own.",
      },
      {
        name: "max-agents",
        type: "number",
        valueName: "N",
        help: "Agents at once (overrides config and plan).",
      },
      {
        name: "attach",
        type: "string",
        multiple: true,
        valueName: "PATH[:FROM-TO]",
        help: "Hand a file to every agent (lines FROM-TO, N or N-; log:7: = file log:7).",
      },
      {
        name: "dry-run",
        type: "boolean",
        help: "Check everything and list what would run; start nothing.",
      },
      { name: "plan-only", type: "boolean", help: "Print the task graph and stop." },
      {
        name: "fresh",
        type: "boolean",
        help: "Start over instead of resuming an interrupted run.",
      },
      {
        name: "isolation",
        type: "string",
        valueName: "MODE",
        help: "auto (sandbox where it works), sandbox (required) or none; overrides config.",
      },
      {
        name: "wait",
        type: "boolean",
        help: "Wait until the run ends (the default; kept for scripts).",
      },
    ],
    json: true,
    examples: [
      "bernstein run plan.yaml",
      'bernstein -g "Add input validation to the signup form"',
      "bernstein run plan.yaml --attach design.png --attach src/app.ts:40-80",
    ],
    run,
  },
  {
    path: ["status"],
    summary: "Show the current or last run: state, tasks by status, running agents.",
    description:
      "JSON: {run: {run_id, state, branch, pid, started_at, attempt} | null, tasks, agents}.",
    json: true,
    run: status,
  },
  {
    path: ["ps"],
    summary: "List running agent sessions (adapter, model, task, pid).",
    description:
      "JSON: {agents: [{session, task_id, adapter, model, pid, state, started_at, branch}]}.",
    flags: [{ name: "all", type: "boolean", help: "Include finished sessions." }],
    json: true,
    run: ps,
  },
  {
    path: ["stop"],
    summary: "Stop the run in progress (agents drain; --force kills them).",
    description:
      "Sends the run SIGTERM (what it does: 'bernstein run --help'). Run again, it is the second\n" +
      "SIGTERM that ends the run at once (its agents killed, exit 143; the next run resumes it).",
    flags: [{ name: "force", type: "boolean", help: "Kill running agents at once." }],
    run: stop,
  },
];

/** Columns of the terminal on stdout (100 when it cannot be asked). */
function terminalColumns(): number {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return 100;
  }
}
