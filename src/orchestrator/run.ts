import { join } from "node:path";
import { systemPathLookup } from "../adapters/mod.ts";
import { type AuditKey, AuditLog, ensureAuditKey, resolveAuditKeyPath } from "../audit/mod.ts";
import type { JsonObject, JsonValue } from "../canonical/mod.ts";
import {
  type Config,
  findProject,
  initWorkspace,
  type ProjectPaths,
  requireConfig,
} from "../config/mod.ts";
import { BernsteinError, UsageError, type Warning } from "../errors/mod.ts";
import { type Clock, type EnvReader, type Random, writeFileAtomic } from "../io/mod.ts";
import { LedgerWriter, runIdFromSeed, writeScorecard } from "../ledger/mod.ts";
import { openLineageStore, resolveOperatorKey } from "../lineage/store/mod.ts";
import { startTaskServer, TokenRegistry } from "../server/mod.ts";
import {
  openHoldStore,
  openTaskStore,
  type Task,
  type TaskDraft,
  type TaskEvent,
  type TaskEventSink,
  type TaskStore,
} from "../tasks/mod.ts";
import { Git } from "./git.ts";
import { type PlannedWork, planWork } from "./planning.ts";
import type { RunReporter } from "./reporter.ts";
import { listSessionFiles, saveSessionFile } from "./run_state.ts";
import {
  type AttachmentProvider,
  resolveTaskCli,
  type RunEnd,
  RunLoop,
  type RunOutcome,
} from "./run_loop.ts";
import { selfCommand } from "./self_command.ts";
import { processAlive, readSession, type SessionRecord, writeSession } from "./session.ts";

/** `bernstein run` options. */
export interface RunOptions {
  /** Plan file. */
  planPath?: string;
  /** Goal text. */
  goal?: string;
  /** `--cli`. */
  cli?: string;
  /** `--model`. */
  model?: string;
  /** `--max-agents`. */
  maxAgents?: number;
  /** Check everything and show what would run; start nothing. */
  dryRun?: boolean;
  /** Print the task graph only. */
  planOnly?: boolean;
  /** Ignore a resumable session and start over. */
  fresh?: boolean;
}

/** Injected edges of a run. */
export interface RunDeps {
  /** Directory the command started in. */
  cwd: string;
  /** Environment. */
  env: EnvReader;
  /** Clock. */
  clock: Clock;
  /** Randomness (run seed, tokens, keys). */
  random: Random;
  /** Live view or event stream. */
  reporter: RunReporter;
  /** Warnings (config, planning) before the run starts. */
  warn: (warning: Warning) => void;
  /** Checks the run's attachments before any worktree or process exists (issue 7). */
  attachmentGate?: (input: AttachmentGateInput) => Promise<void>;
  /** Builds the attachment provider once the run's stores exist (issue 7). */
  attachments?: (parts: AttachmentParts) => Promise<AttachmentProvider | undefined>;
  /** Installs a stop handler (SIGINT/SIGTERM); returns an uninstaller. */
  onStopSignal?: (stop: (reason: string) => void) => () => void;
}

/** What the attachment gate checks: the planned tasks and their adapters. */
export interface AttachmentGateInput {
  /** Project paths. */
  project: ProjectPaths;
  /** Effective configuration. */
  config: Config;
  /** Tasks to be created. */
  drafts: readonly TaskDraft[];
  /** Adapter name per draft (id, or title without one). */
  adapters: Readonly<Record<string, string>>;
  /** How agents start (the only path there is). */
  spawnPath: "direct-subprocess";
}

/** What an attachment provider is built from. */
export interface AttachmentParts {
  /** Project paths. */
  project: ProjectPaths;
  /** Effective configuration. */
  config: Config;
  /** Run id. */
  runId: string;
  /** The run resumes after a crash. */
  resumed: boolean;
  /** Task store (digests are stamped on the task). */
  store: TaskStore;
  /** Audit key (the attachment resolver authenticates the chain). */
  auditKey: AuditKey;
  /** Audit chain. */
  audit: AuditLog;
  /** Tasks of the run (for capability checks). */
  tasks: readonly Task[];
  /** Resolves the adapter name of a task. */
  adapterOf: (task: Task) => Promise<string>;
}

/** End-of-run report (`.sdd/runs/<run-id>/summary.json`). */
export interface RunSummary extends JsonObject {
  /** Run id. */
  run_id: string;
  /** How it ended. */
  end: RunEnd;
  /** HEALTHY only when every task merged (or had nothing to merge) and nothing was refused. */
  health: "HEALTHY" | "UNHEALTHY";
  /** In words. */
  reason: string;
  /** Branch merges went into. */
  branch: string;
  /** Tasks by status. */
  tasks: JsonObject;
  /** Merged tasks. */
  merges: JsonValue[];
  /** Refused merges. */
  refused_merges: JsonValue[];
  /** Branches kept with the work of failed tasks. */
  kept_branches: JsonValue[];
  /** Cost by adapter and model (USD where reported). */
  cost: JsonObject;
  /** Scorecard file and digest. */
  scorecard: JsonObject;
  /** Summary file path. */
  path: string;
}

/** What `bernstein run` produced, for the CLI to print and choose the exit code. */
export type RunReport =
  | { kind: "plan"; planned: PlannedWork; adapters: Record<string, string> }
  | { kind: "dry-run"; planned: PlannedWork; adapters: Record<string, string>; branch: string }
  | { kind: "run"; summary: RunSummary; decisions: number };

const DEFAULT_BRANCH_ENV = "BERNSTEIN_ALLOW_MERGE_TO_DEFAULT_BRANCH";

function auditSink(audit: AuditLog): TaskEventSink {
  return {
    append: async (e: TaskEvent) => {
      await audit.append({
        actor: e.actor,
        event_type: e.type,
        resource_type: e.resource_type,
        resource_id: e.resource_id,
        details: {
          reason: e.reason,
          from: e.from,
          to: e.to,
          version: e.version,
          at: e.at,
          ...e.details,
        } as JsonObject,
      });
    },
  };
}

/** The repository checks that refuse a run before any worktree or process exists. */
async function preflightRepository(git: Git, env: EnvReader, exempt: boolean): Promise<string> {
  const branch = await git.currentBranch();
  if (branch === undefined) {
    throw new UsageError(
      "run.detached_head",
      "HEAD is detached: merges need a branch checked out at the repository root",
      {
        hint: "git checkout -b feature/<name>",
      },
    );
  }
  if (exempt) return branch;
  const defaultBranch = await git.defaultBranch();
  if (branch === defaultBranch && env.get(DEFAULT_BRANCH_ENV) !== "1") {
    throw new UsageError(
      "run.default_branch",
      `refusing to run on the default branch '${branch}': agents' work would be merged straight into it`,
      {
        hint:
          `check out a feature branch first (git checkout -b feature/<name>), or set ${DEFAULT_BRANCH_ENV}=1`,
      },
    );
  }
  if (await git.isDirty(undefined, true)) {
    throw new UsageError(
      "run.dirty_tree",
      `the work tree at ${git.root} has uncommitted changes to tracked files; merges would mix with them`,
      {
        hint: "commit or stash them first",
      },
    );
  }
  return branch;
}

function adapterOfDraft(draft: TaskDraft): Pick<Task, "cli" | "role" | "id"> {
  return { id: draft.id ?? draft.title, cli: draft.cli ?? null, role: draft.role };
}

/**
 * `bernstein run`: plan (or resume), refuse up front what cannot work, start the stores, the
 * task server and the loop, then close the ledger and write the summary and scorecard.
 */
export async function executeRun(options: RunOptions, deps: RunDeps): Promise<RunReport> {
  const project = await findProject(deps.cwd);
  if (project.gitDir === undefined) {
    throw new UsageError("run.not_git", `${project.root} is not a git repository`, {
      hint: "git init, commit, and check out a feature branch",
    });
  }
  const flags: Record<string, unknown> = {};
  if (options.maxAgents !== undefined) flags.max_agents = options.maxAgents;
  const { config, warnings } = await requireConfig({ cwd: deps.cwd, env: deps.env, flags });
  for (const w of warnings) deps.warn(w);
  const git = new Git(project.root, { env: deps.env });
  const exempt = options.dryRun === true || options.planOnly === true;
  const branch = await preflightRepository(git, deps.env, exempt);

  const previous = await readSession(project.sdd);
  if (previous?.status === "running" && processAlive(previous.pid) && previous.pid !== Deno.pid) {
    throw new BernsteinError(
      "run.in_progress",
      `run ${previous.run_id} is already in progress (pid ${previous.pid})`,
      {
        hint:
          "watch it with 'bernstein status' / 'bernstein logs', or stop it with 'bernstein stop'",
      },
    );
  }
  const resume = previous?.status === "running" && !options.fresh && !exempt;
  const lookup = systemPathLookup(deps.env);

  let planned: PlannedWork | undefined;
  if (!resume) {
    planned = await planWork(project.sdd, deps.cwd, {
      planPath: options.planPath,
      goal: options.goal,
      taskFilter: deps.env.get("BERNSTEIN_TASK_FILTER"),
      syncGithubBacklog: config.github.sync_backlog,
    });
    for (const w of planned.warnings) deps.warn(w);
  }
  // A resumed run keeps the choices it started with; a fresh one takes them from flags and plan.
  const kept = resume ? (previous as SessionRecord).choices : undefined;
  const planCli = kept ? kept.plan_cli ?? undefined : planned?.graph?.cli;
  const cliOverride = kept ? kept.cli ?? undefined : options.cli;
  const modelOverride = kept ? kept.model ?? undefined : options.model;
  const maxAgents = options.maxAgents ?? kept?.max_agents ?? planned?.graph?.max_agents ??
    config.max_agents;
  // Refuse an unknown or missing adapter before any worktree or process exists.
  const adapters: Record<string, string> = {};
  if (planned) {
    for (const draft of planned.drafts) {
      const resolved = await resolveTaskCli(adapterOfDraft(draft), {
        config,
        lookup,
        cliOverride,
        planCli,
      }).catch((error: unknown) => {
        // Refused before anything starts: a usage error (exit 2) keeping the adapter's code.
        if (!(error instanceof BernsteinError)) throw error;
        throw new UsageError(error.code, error.message, {
          location: error.location,
          hint: error.hint,
        });
      });
      adapters[draft.id ?? draft.title] = resolved.adapter.name;
    }
  }
  if (options.planOnly && planned) return { kind: "plan", planned, adapters };
  if (planned && deps.attachmentGate) {
    await deps.attachmentGate({
      project,
      config,
      drafts: planned.drafts,
      adapters,
      spawnPath: "direct-subprocess",
    });
  }
  if (options.dryRun && planned) return { kind: "dry-run", planned, adapters, branch };

  await initWorkspace(project, deps.random, { projectTemplate: false });
  const keyLocation = resolveAuditKeyPath(deps.env);
  const auditKey = await ensureAuditKey(keyLocation.path, deps.random);
  const audit = new AuditLog(join(project.sdd, "audit"), auditKey, { clock: deps.clock });
  const runtimeDir = join(project.sdd, "runtime");
  const attempt = resume ? (previous as SessionRecord).attempt + 1 : 1;
  const runId = resume ? (previous as SessionRecord).run_id : runIdFromSeed(deps.random.bytes(16));
  if (!resume) await archivePreviousRun(runtimeDir, previous);
  const store = await openTaskStore({
    config,
    runtimeDir,
    clock: deps.clock,
    random: deps.random,
    sink: auditSink(audit),
  });
  const holds = await openHoldStore(join(runtimeDir, "holds.json"), {
    clock: deps.clock,
    random: deps.random,
    sink: auditSink(audit),
  });
  const tokens = await TokenRegistry.open(runtimeDir, { random: deps.random });
  const server = await startTaskServer({
    store,
    holds,
    tokens,
    runtimeDir,
    config,
    clock: deps.clock,
  });
  const ledger = await LedgerWriter.open(project.sdd, runId, { clock: deps.clock });
  const lineage = openLineageStore({
    sdd: project.sdd,
    operatorKey: () => resolveOperatorKey({ env: deps.env, createWith: deps.random }),
    strict: config.lineage.strict,
    enabled: config.lineage.enabled,
    clock: deps.clock,
    random: deps.random,
    warn: (w) => deps.reporter.event({ type: "run.warning", message: w.message }),
  });
  const self = selfCommand(deps.env);
  const session: SessionRecord = resume
    ? { ...(previous as SessionRecord), pid: Deno.pid, attempt }
    : {
      run_id: runId,
      status: "running",
      pid: Deno.pid,
      host: hostName(),
      started_at: new Date(deps.clock.nowMs()).toISOString(),
      branch,
      source: (planned as PlannedWork).source,
      goal: options.goal ?? null,
      attempt,
      choices: {
        plan_cli: planCli ?? null,
        cli: cliOverride ?? null,
        model: modelOverride ?? null,
        max_agents: maxAgents,
      },
    };
  await writeSession(project.sdd, session);
  let uninstall = () => {};
  try {
    await audit.append({
      actor: "orchestrator",
      event_type: resume ? "run.resumed" : "run.started",
      resource_type: "run",
      resource_id: runId,
      details: { branch, attempt, source: session.source as unknown as JsonObject },
    });
    const goal = session.goal ?? undefined;
    const loop = new RunLoop({
      runId,
      root: project.root,
      sdd: project.sdd,
      branch: session.branch,
      config,
      git,
      store,
      holds,
      server,
      tokens,
      audit,
      ledger,
      lineage,
      clock: deps.clock,
      env: deps.env,
      lookup,
      selfCommand: self.argv,
      selfEnv: self.env,
      reporter: deps.reporter,
      cliOverride,
      modelOverride,
      planCli,
      maxAgents,
      goal,
      runAttempt: attempt,
      isRoot: isRoot(),
    });
    if (resume) {
      await ledger.append({
        kind: "run.resumed",
        payload: { attempt, host: hostName(), branch: session.branch },
      });
      deps.reporter.event({ type: "run.resumed", run_id: runId, attempt });
      const open = await recoverAfterCrash(project.sdd, store, git, loop, deps);
      deps.reporter.event({ type: "run.recovered", run_id: runId, open });
    } else {
      const work = planned as PlannedWork;
      await ledger.append({
        kind: "run.open",
        payload: { branch, host: hostName(), source: work.source.kind, max_agents: maxAgents },
      });
      const created = await store.createMany(work.drafts, {
        actor: "orchestrator",
        reason: `planned from ${work.source.kind}`,
      });
      for (const t of created) {
        await ledger.append({
          kind: "task.scheduled",
          task_id: t.id,
          payload: { title: t.title, role: t.role },
        });
      }
      deps.reporter.event({
        type: "run.started",
        run_id: runId,
        tasks: created.length,
        source: describeSource(work),
        branch,
      });
    }
    const all = await store.list({});
    const provider = deps.attachments
      ? await deps.attachments({
        project,
        config,
        runId,
        resumed: resume,
        store,
        auditKey,
        audit,
        tasks: all,
        adapterOf: async (t) => (await loop.resolveAdapter(t)).adapter.name,
      })
      : undefined;
    if (provider) loop.setAttachments(provider);
    uninstall = deps.onStopSignal?.((reason) => loop.requestStop(reason)) ?? (() => {});
    const outcome = await loop.run();
    uninstall();
    const tasks = await store.list({});
    await ledger.append({
      kind: "run.closed",
      payload: { reason: outcome.end, detail: outcome.reason },
    });
    await audit.append({
      actor: "orchestrator",
      event_type: "run.finished",
      resource_type: "run",
      resource_id: runId,
      details: { end: outcome.end, reason: outcome.reason },
    });
    const scorecard = await writeScorecard(project.sdd, runId);
    const summary = buildSummary(runId, session.branch, outcome, tasks, project, scorecard);
    await Deno.mkdir(join(project.sdd, "runs", runId), { recursive: true });
    await writeFileAtomic(summary.path, JSON.stringify(summary, null, 2) + "\n");
    await writeFileAtomic(
      join(project.sdd, "runs", runId, "decisions.json"),
      JSON.stringify(loop.decisions) + "\n",
    );
    await writeSession(project.sdd, { ...session, status: "finished" });
    return { kind: "run", summary, decisions: loop.decisions.length };
  } finally {
    uninstall();
    await server.close().catch(() => {});
    await store.close().catch(() => {});
    await audit.close().catch(() => {});
  }
}

function describeSource(work: PlannedWork): string {
  switch (work.source.kind) {
    case "plan":
      return work.graph?.source ?? work.source.path;
    case "backlog":
      return "the backlog";
    case "goal":
      return "a goal (manager)";
  }
}

function hostName(): string {
  try {
    return Deno.hostname();
  } catch {
    return "unknown";
  }
}

function isRoot(): boolean {
  try {
    return Deno.uid() === 0;
  } catch {
    return false;
  }
}

/** A fresh run starts with an empty task log: the previous run's log is moved under its run. */
async function archivePreviousRun(
  runtimeDir: string,
  previous: SessionRecord | undefined,
): Promise<void> {
  const log = join(runtimeDir, "tasks.jsonl");
  const exists = await Deno.stat(log).then(() => true, () => false);
  if (!exists) return;
  const target = join(runtimeDir, "..", "runs", previous?.run_id ?? `unknown-${Date.now()}`);
  await Deno.mkdir(target, { recursive: true });
  await Deno.rename(log, join(target, "tasks.jsonl"));
  await Deno.remove(join(runtimeDir, "sessions"), { recursive: true }).catch(() => {});
}

/**
 * After a crash: kill agents the dead orchestrator left running, keep their partial work on
 * their branches, put interrupted tasks back to open, and send tasks whose agents had
 * finished (`done`) straight to checks and merge — no task runs twice.
 */
async function recoverAfterCrash(
  sdd: string,
  store: TaskStore,
  git: Git,
  loop: RunLoop,
  deps: RunDeps,
): Promise<number> {
  const files = await listSessionFiles(sdd);
  const tasks = new Map((await store.list({})).map((t) => [t.id, t]));
  for (const file of files) {
    if (file.state !== "running") continue;
    try {
      Deno.kill(-file.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
    const task = tasks.get(file.task_id);
    if (task?.status === "done") {
      loop.adoptDone(task, file);
      continue;
    }
    const exists = await Deno.stat(file.worktree).then(() => true, () => false);
    if (exists) {
      await git.commitAll(
        file.worktree,
        `partial work of ${file.session} (interrupted by an orchestrator crash)`,
      ).catch(() => undefined);
      await git.removeWorktree(file.worktree, true).catch(() => {});
    }
    await saveSessionFile(sdd, { ...file, state: "abandoned" });
    deps.reporter.event({
      type: "run.warning",
      message:
        `${file.task_id}: session ${file.session} was interrupted; its partial work is on ${file.branch}`,
    });
  }
  await git.pruneWorktrees().catch(() => {});
  await store.releaseStaleClaims({
    olderThanMs: 0,
    actor: "orchestrator",
    reason: "resumed after an orchestrator crash",
  });
  return (await store.list({ status: ["open", "planned"] })).length;
}

function buildSummary(
  runId: string,
  branch: string,
  outcome: RunOutcome,
  tasks: readonly Task[],
  project: ProjectPaths,
  scorecard: { path: string; sha256: string; content: JsonObject },
): RunSummary {
  const byStatus: Record<string, number> = {};
  for (const t of tasks) byStatus[t.status] = (byStatus[t.status] ?? 0) + 1;
  const costs = new Map<
    string,
    {
      adapter: string;
      model: string;
      runs: number;
      cost_usd: number | null;
      tokens: number | null;
      turns: number | null;
    }
  >();
  for (const c of outcome.costs) {
    const key = `${c.adapter}\0${c.model}`;
    const row = costs.get(key) ??
      { adapter: c.adapter, model: c.model, runs: 0, cost_usd: null, tokens: null, turns: null };
    row.runs++;
    if (c.cost_usd !== null) row.cost_usd = (row.cost_usd ?? 0) + c.cost_usd;
    if (c.tokens !== null) row.tokens = (row.tokens ?? 0) + c.tokens;
    if (c.turns !== null) row.turns = (row.turns ?? 0) + c.turns;
    costs.set(key, row);
  }
  const totalUsd = [...costs.values()].reduce((sum, r) => sum + (r.cost_usd ?? 0), 0);
  const failed =
    tasks.filter((t) => ["failed", "cancelled", "orphaned", "blocked"].includes(t.status)).length;
  const healthy = outcome.end === "quiescent" && outcome.refused.length === 0 && failed === 0;
  return {
    run_id: runId,
    end: outcome.end,
    health: healthy ? "HEALTHY" : "UNHEALTHY",
    reason: outcome.reason,
    branch,
    tasks: { total: tasks.length, ...byStatus },
    merges: outcome.merges as unknown as JsonValue[],
    refused_merges: outcome.refused as unknown as JsonValue[],
    kept_branches: outcome.keptBranches as unknown as JsonValue[],
    cost: {
      total_usd: Math.round(totalUsd * 1e6) / 1e6,
      by_adapter_model: [...costs.values()] as unknown as JsonValue[],
    },
    scorecard: {
      path: scorecard.path,
      sha256: scorecard.sha256,
      outcome: scorecard.content.outcome ?? null,
    },
    path: join(project.sdd, "runs", runId, "summary.json"),
  };
}
