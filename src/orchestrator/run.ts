/**
 * `bernstein run`, start to end: plan the work (or pick up a crashed run), refuse up front
 * what cannot work, open the run's stores and task server, record the start, run the loop,
 * then record the end and write the summary, decisions and scorecard. Each step is a short
 * function here; the parts live in run_preflight.ts, run_stores.ts, recovery.ts, run_loop.ts
 * and run_summary.ts.
 */
import { getAdapter, type PathLookup, systemPathLookup } from "../adapters/mod.ts";
import type { JsonObject } from "../canonical/mod.ts";
import {
  type Config,
  type ConfigProblem,
  findProject,
  initWorkspace,
  type ProjectPaths,
  requireConfig,
} from "../config/mod.ts";
import {
  BernsteinError,
  type ErrorCode,
  isStorageFailure,
  UsageError,
  type Warning,
} from "../errors/mod.ts";
import {
  decideIsolation,
  type IsolationDecision,
  type IsolationMode,
  probeSandbox,
  type SandboxProbe,
} from "../sandbox/mod.ts";
import type { SpawnPath } from "../attachments/mod.ts";
import { type Clock, type EnvReader, type Random, SecretRedactor } from "../io/mod.ts";
import { runIdFromSeed, writeScorecard } from "../ledger/mod.ts";
import type { AuditKey, AuditLog, AuditSink } from "../audit/mod.ts";
import type { TaskServer } from "../server/mod.ts";
import { FINISHED_STATUSES, type Task, type TaskDraft, type TaskStore } from "../tasks/mod.ts";
import { WORKER_HOSTS_LOOKUP } from "./adapter_choice.ts";
import { type Executor, processExecutor } from "./executor.ts";
import { Git } from "./git.ts";
import { type PlannedWork, planWork } from "./planning.ts";
import { Recorder, type RunFact } from "./recorder.ts";
import type { RunReporter } from "./reporter.ts";
import type { AttachmentProvider } from "./run_context.ts";
import { RunLoop } from "./run_loop.ts";
import {
  lockRun,
  preflightRepository,
  refuseAttachOnResume,
  refuseRunInProgress,
  resolvePlannedAdapters,
} from "./run_preflight.ts";
import { openAudit, openRunStores, type RunStores } from "./run_stores.ts";
import {
  buildSummary,
  type IsolationSummary,
  runHealth,
  type RunSummary,
  writeRunRecord,
} from "./run_summary.ts";
import { RunNotifier } from "./run_notify.ts";
import { githubConnectionSecrets, syncGithubBacklog } from "./github_backlog.ts";
import { archivePreviousRun, endLeftoverAgents, recoverAfterCrash } from "./recovery.ts";
import { startDashboardFeed } from "./dashboard_feed.ts";
import { selfCommand } from "./self_command.ts";
import { type CatalogSet, loadCatalogs, withCatalogRoles } from "./catalogs.ts";
import { RunCheckpoints } from "./checkpoints.ts";
import {
  checkPlanConnections,
  checkPlanVariables,
  recordRunConfig,
  runConfigRecord,
  RunConnections,
} from "../fleet/mod.ts";
import { checkpointSignerOf, ensureOperatorSigningKey } from "../compliance/project/mod.ts";
import { checkConfig } from "./config_checks.ts";
import { prepareWorktreesDir, worktreesDirProblems } from "./worktrees_dir.ts";
import { certificationProblems } from "./endpoint_certification.ts";
import { ConfigWatch } from "./config_reload.ts";
import {
  type CurrentRun,
  type GitHubSyncSource,
  readCurrentRun,
  writeCurrentRun,
} from "./current_run.ts";
import { enforces, RunPolicy } from "./run_policy.ts";
import { listSessionFiles } from "./run_state.ts";
import {
  gitStateChanges,
  type GitStateSnapshot,
  restoreGitState,
  snapshotGitState,
} from "./git_guard.ts";
import type { RunContext } from "./run_context.ts";
import { runSecrets } from "./run_secrets.ts";
import { type RunIsolation, setUpIsolation } from "./isolation.ts";
import type { SpawnPathWrapper } from "./agent_session.ts";
import { type RunStopControl, stopGraceMs } from "./stop_signals.ts";

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
  /** Ignore a resumable run and start over. */
  fresh?: boolean;
  /** How many `--attach` values were given (a resuming run refuses them, exit 2). */
  attachCount?: number;
  /** `--isolation`: overrides the configured `isolation`. */
  isolation?: IsolationMode;
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
  /**
   * Installs the run's stop handler (SIGINT/SIGTERM, stop_signals.ts) once its loop runs;
   * returns an uninstaller, called when the run's end is written.
   */
  onStopSignal?: (control: RunStopControl) => () => void;
  /** Starts the worker pool when `workers.listen` is set (src/workers, issue 13). */
  workers?: (parts: WorkerParts) => Promise<RunWorkers>;
  /** Finds out whether the sandbox works here (tests fake a machine without one). */
  probeSandbox?: () => Promise<SandboxProbe>;
}

/** What the worker pool of a run is built from. */
export interface WorkerParts {
  /** Run id. */
  runId: string;
  /** `.sdd/`. */
  sdd: string;
  /** Effective configuration (`workers`, `tuning`). */
  config: Config;
  /** Git of the project root. */
  git: Git;
  /** Task store. */
  store: TaskStore;
  /** Audit chain (workers' reports are recorded under `worker:<name>`). */
  audit: AuditLog;
  /** The task server (its workers' address; the pool mounts its routes on it). */
  server: TaskServer;
  /** Clock. */
  clock: Clock;
  /** Environment. */
  env: EnvReader;
  /** This host's executor (`workers.local_agents` agents run here). */
  local: Executor;
}

/** The worker pool of a run: the executor the loop dispatches to, and its shutdown. */
export interface RunWorkers {
  /** Dispatches to workers (and this host). */
  executor: Executor;
  /** Stops waiting on workers. */
  close(): Promise<void>;
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
  /** How agents start: the sandbox, or directly. */
  spawnPath: SpawnPath;
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

/** What `bernstein run` produced, for the CLI to print and choose the exit code. */
export type RunReport =
  | { kind: "plan"; planned: PlannedWork; adapters: Record<string, string> }
  | {
    kind: "dry-run";
    planned: PlannedWork;
    adapters: Record<string, string>;
    branch: string;
    isolation: IsolationDecision;
  }
  | { kind: "run"; summary: RunSummary; decisions: number };

/** What the run decided before anything started. */
interface RunPlan {
  project: ProjectPaths;
  config: Config;
  configSources: ReadonlyMap<string, string>;
  /** The active operating context (docs/FLEET.md), or null. */
  context: { name: string; settings_hash: string } | null;
  git: Git;
  /** Branch checked out at the root (merges go into it). */
  branch: string;
  /** The record of the previous run here, if any. */
  previous?: CurrentRun;
  /** The previous run crashed and is picked up. */
  resume: boolean;
  lookup: PathLookup;
  /** The planned work of a fresh run. */
  planned?: PlannedWork;
  planCli?: string;
  cliOverride?: string;
  modelOverride?: string;
  maxAgents: number;
  /** Adapter name of each planned task. */
  adapters: Record<string, string>;
  /** The configuration files, watched for hot reload. */
  watch: ConfigWatch;
  /** The merged agent catalogs. */
  catalog: CatalogSet;
  /** The isolation agents get (decided, and warned about, before anything starts). */
  isolation: IsolationDecision;
}

/**
 * `bernstein run`: plan (or resume), refuse up front what cannot work, start the stores, the
 * task server and the loop, then close the ledger and write the summary and scorecard.
 */
export async function executeRun(options: RunOptions, deps: RunDeps): Promise<RunReport> {
  // The run lock comes first: nothing of the project's state is read or moved before it is held.
  const exempt = options.dryRun === true || options.planOnly === true;
  const lock = exempt ? undefined : await lockRun(deps.cwd);
  try {
    return await planAndRun(options, deps);
  } finally {
    lock?.release();
  }
}

async function planAndRun(options: RunOptions, deps: RunDeps): Promise<RunReport> {
  const plan = await planRun(options, deps);
  const { planned, adapters } = plan;
  if (options.planOnly && planned) return { kind: "plan", planned, adapters };
  if (planned && deps.attachmentGate) {
    await deps.attachmentGate({
      project: plan.project,
      config: plan.config,
      drafts: planned.drafts,
      adapters,
      spawnPath: plan.isolation.isolation === "sandbox" ? "sandbox" : "direct-subprocess",
    });
  }
  if (options.dryRun && planned) {
    return { kind: "dry-run", planned, adapters, branch: plan.branch, isolation: plan.isolation };
  }
  try {
    return await carryOutRun(plan, deps);
  } catch (error) {
    // Disk full or a read-only .sdd anywhere in the run: an infrastructure failure, resumable.
    if (
      isStorageFailure(error) && !(error instanceof BernsteinError && error.code === STORAGE_FAILED)
    ) {
      throw storageFailed((error as Error).message.split("\n")[0]);
    }
    throw error;
  }
}

const STORAGE_FAILED: ErrorCode = "run.storage_failed";

/**
 * The run stopped on a storage failure as a crash would: its tasks keep their state (claimed,
 * in progress) and its record (session.json) stays `running`, so the next `bernstein run`
 * resumes it.
 */
function storageFailed(reason: string): BernsteinError {
  return new BernsteinError(
    STORAGE_FAILED,
    `the run stopped: ${reason}; its tasks keep their state and the next 'bernstein run' resumes them`,
    {
      hint: reason.includes("bernstein cas repair")
        ? "repair the CAS ('bernstein cas repair'), then run 'bernstein run'"
        : "free space (or make .sdd writable again), then run 'bernstein run'",
    },
  );
}

/** Project, configuration, repository checks, planning and adapter choices. */
async function planRun(options: RunOptions, deps: RunDeps): Promise<RunPlan> {
  const project = await findProject(deps.cwd);
  if (project.gitDir === undefined) {
    throw new UsageError("run.not_git", `${project.root} is not a git repository`, {
      hint: "git init, commit, and check out a feature branch",
    });
  }
  const git = new Git(project.root, { env: deps.env });
  const exempt = options.dryRun === true || options.planOnly === true;
  const previous = await readCurrentRun(project.sdd);
  const resume = previous?.status === "running" && !options.fresh && !exempt;
  // A resumed run keeps the choices it started with; a fresh one takes them from flags and plan.
  const kept = resume ? (previous as CurrentRun).choices : undefined;
  const flags = runFlags(options, kept);
  const first = await requireConfig({ cwd: deps.cwd, env: deps.env, flags });
  const branch = await preflightRepository(git, deps.env, exempt);
  refuseRunInProgress(previous);
  refuseAttachOnResume(previous, resume, options.attachCount ?? 0);
  const planned = resume ? undefined : await planFresh(project, first.config, options, deps);
  const planCli = kept ? kept.plan_cli ?? undefined : planned?.graph?.cli;
  const planMaxAgents = kept ? undefined : planned?.graph?.max_agents;
  // The plan's defaults are a layer of their own: above .sdd/config.yaml, below bernstein.yaml.
  const planDefaults = planCli === undefined && planMaxAgents === undefined ? undefined : {
    file: planned?.graph?.source ?? "plan",
    values: {
      ...(planCli === undefined ? {} : { cli: planCli }),
      ...(planMaxAgents === undefined ? {} : { max_agents: planMaxAgents }),
    },
  };
  const { config, warnings, loaded } = planDefaults === undefined
    ? first
    : await requireConfig({ cwd: deps.cwd, env: deps.env, flags, planDefaults });
  for (const w of warnings) deps.warn(w);
  refuseBadConfig(checkConfig({ config, locate: loaded.locate }));
  refuseBadConfig(await worktreesDirProblems(config, project, loaded.locate));
  // Merge-critical roles on endpoint profiles: their receipts must verify now, at the start.
  refuseBadConfig(
    await certificationProblems(config, loaded.locate, project.sdd, deps.clock.nowMs()),
  );
  // Catalog roles fill what role_model_policy leaves unset (the policy always wins).
  const catalog = await loadCatalogs(project.root, config.catalogs);
  for (const p of catalog.problems) if (p.severity === "warning") deps.warn(p);
  refuseBadConfig(catalog.problems.filter((p) => p.severity === "error"));
  config.role_model_policy = withCatalogRoles(config, catalog).role_model_policy;
  const watch = new ConfigWatch(
    {
      cwd: deps.cwd,
      env: deps.env,
      flags,
      ...(planDefaults === undefined ? {} : { planDefaults }),
    },
    { config, sourceFiles: loaded.sourceFiles },
    (c) => withCatalogRoles(c, catalog),
  );
  // With agents on worker hosts only, adapters resolve there (the pool sends each task to a
  // worker that has its adapter): this host need not have the CLIs.
  const lookup = config.workers?.listen !== undefined && config.workers.local_agents === 0
    ? WORKER_HOSTS_LOOKUP
    : systemPathLookup(deps.env);
  const modelOverride = kept ? kept.model ?? undefined : options.model;
  // Refuse an unknown or missing adapter before any worktree or process exists. `--cli` and
  // the plan's `cli` are layers of `cli` now: a role's own `cli` stays exclusive to it.
  const adapters = planned ? await resolvePlannedAdapters(planned.drafts, { config, lookup }) : {};
  refuseUnenforced(config, adapters);
  // A step reading `${var:NAME}` of a variable with no value is refused before anything starts.
  if (planned) {
    await checkPlanVariables(project.sdd, planned.drafts, deps.env);
  }
  // So is a step asking for a connection that does not exist.
  const connections = planned
    ? await checkPlanConnections(project.sdd, planned.drafts, deps.env)
    : [];
  const isolation = await decideRunIsolation(config, options.isolation, deps);
  if (connections.length > 0 && isolation.isolation !== "sandbox") {
    deps.warn({
      code: "run.connections_unsandboxed",
      message: `steps get connection secrets (${
        [...new Set(connections.map((c) => c.name))].join(", ")
      }) while agents run without a sandbox: any agent of this run can read another's environment`,
    });
  }
  return {
    isolation,
    project,
    config,
    configSources: loaded.sources,
    context: loaded.context,
    git,
    branch,
    previous,
    resume,
    lookup,
    planned,
    planCli,
    cliOverride: kept ? kept.cli ?? undefined : options.cli,
    modelOverride,
    maxAgents: config.max_agents,
    adapters,
    watch,
    catalog,
  };
}

/** `--max-agents` and `--cli` as the flags layer (a resumed run's own, when it has them). */
function runFlags(
  options: RunOptions,
  kept: CurrentRun["choices"] | undefined,
): Record<string, unknown> {
  const flags: Record<string, unknown> = {};
  const maxAgents = options.maxAgents ?? kept?.max_agents;
  if (maxAgents !== undefined) flags.max_agents = maxAgents;
  const cli = kept ? kept.cli ?? undefined : options.cli;
  if (cli !== undefined) flags.cli = cli;
  return flags;
}

/** Configuration problems its schema cannot see stop the run (exit 2), even a dry run. */
function refuseBadConfig(problems: readonly ConfigProblem[]): void {
  if (problems.length === 0) return;
  const [first] = problems;
  const more = problems.length > 1
    ? ` (and ${problems.length - 1} more; run 'bernstein config validate')`
    : "";
  throw new UsageError(first.code, first.message + more, {
    location: first.location,
    hint: first.hint,
  });
}

/** `policy.unenforced: refuse`: no task may go to an agent whose CLI has no pre-tool hook. */
function refuseUnenforced(config: Config, adapters: Readonly<Record<string, string>>): void {
  if (!config.policy.enabled || config.policy.unenforced !== "refuse") return;
  const bare = [...new Set(Object.values(adapters))].filter((a) => !enforces(getAdapter(a)));
  if (bare.length === 0) return;
  throw new UsageError(
    "policy.unenforced",
    `agents of ${bare.join(", ")} have no pre-tool hook, and policy.unenforced is refuse`,
    {
      location: "policy.unenforced",
      hint: "run those tasks with an adapter that has one (docs/ADAPTERS.md), or set warn",
    },
  );
}

/**
 * `github.sync_backlog`: open issues into `.sdd/backlog/open/` before the work is chosen (not
 * on --dry-run or --plan-only, which write nothing: they show the local backlog).
 */
async function syncBacklogFirst(
  project: ProjectPaths,
  config: Config,
  options: RunOptions,
  deps: RunDeps,
): Promise<GitHubSyncSource | undefined> {
  if (options.dryRun || options.planOnly) {
    deps.warn({
      code: "github.sync_skipped",
      message: "GitHub backlog sync skipped: --dry-run and --plan-only write nothing; the " +
        "local .sdd/backlog/open/ is shown",
      location: "github.sync_backlog",
    });
    return undefined;
  }
  const { warnings, synced } = await syncGithubBacklog({
    config,
    root: project.root,
    sdd: project.sdd,
    env: deps.env,
    clock: deps.clock,
    random: deps.random,
  });
  for (const w of warnings) deps.warn(w);
  return synced;
}

/**
 * The isolation agents will get. `sandbox` without a working sandbox is refused (exit 2);
 * running without one (auto on a machine without it, or `none`) is warned about loudly,
 * naming what an agent can then reach, before anything starts.
 */
async function decideRunIsolation(
  config: Config,
  requested: IsolationMode | undefined,
  deps: RunDeps,
): Promise<IsolationDecision> {
  let decision: IsolationDecision;
  try {
    decision = decideIsolation(
      requested ?? config.isolation,
      await (deps.probeSandbox ?? probeSandbox)(),
    );
  } catch (error) {
    if (!(error instanceof BernsteinError)) throw error;
    throw new UsageError(error.code, error.message, {
      location: requested === undefined ? error.location : "--isolation",
      hint: error.hint,
    });
  }
  if (decision.reason !== null) {
    deps.warn({ code: "run.unsandboxed", message: decision.reason });
  }
  return decision;
}

async function planFresh(
  project: ProjectPaths,
  config: Config,
  options: RunOptions,
  deps: RunDeps,
): Promise<PlannedWork> {
  const synced = config.github.sync_backlog
    ? await syncBacklogFirst(project, config, options, deps)
    : undefined;
  const planned = await planWork(project.sdd, deps.cwd, {
    planPath: options.planPath,
    goal: options.goal ?? config.goal,
    manager: { cli: config.internal_llm_provider, model: config.internal_llm_model },
    taskFilter: deps.env.get("BERNSTEIN_TASK_FILTER"),
  });
  for (const w of planned.warnings) deps.warn(w);
  // The run records where its work came from: a synced backlog names its repository.
  if (synced !== undefined && planned.source.kind === "backlog") {
    planned.source = { ...planned.source, github: synced };
  }
  return planned;
}

/** Opens everything, runs the loop, and writes the run's record. */
async function carryOutRun(plan: RunPlan, deps: RunDeps): Promise<RunReport> {
  const { project, resume, previous } = plan;
  await initWorkspace(project, deps.random, { projectTemplate: false });
  // Checked when the run was planned; created (and kept out of git) now.
  const worktreesDir = await prepareWorktreesDir(plan.config, project, () => undefined);
  // Connection secrets minted for agents register here; every record the run writes is
  // redacted with it (audit, ledger, task server bodies, facts, agent output).
  const redactor = new SecretRedactor();
  const opened = await openAudit(project.sdd, deps.env, deps.clock, deps.random, redactor);
  const attempt = resume ? (previous as CurrentRun).attempt + 1 : 1;
  const runId = resume ? (previous as CurrentRun).run_id : runIdFromSeed(deps.random.bytes(16));
  // Agents a killed orchestrator left behind are ended before anything else (audited below).
  const leftovers = await endLeftoverAgents(project.sdd);
  if (!resume) await archivePreviousRun(project.sdd, previous);
  const current = currentRunOf(plan, deps, runId, attempt);
  const feed = await startDashboardFeed({
    sdd: project.sdd,
    run: current,
    audit: opened.audit,
    auditKey: opened.auditKey,
    reporter: deps.reporter,
    resume,
  });
  // The run reports through the feed, which pokes the dashboard when the live view redraws.
  const runDeps: RunDeps = { ...deps, reporter: feed.reporter };
  // Decisions are recorded through the run's recorder, which exists once the stores do; no
  // agent (and so no decision) exists before that.
  let recorder: Recorder | undefined;
  const policy = await openRunPolicy(
    plan,
    deps,
    worktreesDir,
    (fact) =>
      recorder === undefined
        ? Promise.reject(new Error("the run has not started"))
        : recorder.record(fact),
  );
  const stores = await openRunStores(opened, {
    sdd: project.sdd,
    runId,
    config: plan.config,
    configSources: plan.configSources,
    host: hostName(),
    env: deps.env,
    clock: deps.clock,
    random: deps.random,
    warn: (message) => deps.reporter.event({ type: "run.warning", message }),
    dashboard: feed.journal,
    redactor,
    ...(policy ? { policy: policy.service } : {}),
  }).catch((error) => {
    feed.end();
    throw error;
  });
  await writeCurrentRun(project.sdd, current);
  let uninstall = () => {};
  let workers: RunWorkers | undefined;
  let notifier: RunNotifier | undefined;
  const checkpoints = new RunCheckpoints({
    lineage: stores.lineage,
    audit: stores.audit,
    signer: async () =>
      checkpointSignerOf(await ensureOperatorSigningKey(project.sdd, deps.random)),
    everyEntries: plan.config.tuning.checkpoints.every_entries,
    clock: deps.clock,
    warn: (message) => runDeps.reporter.event({ type: "run.warning", message }),
  });
  let isolation: RunIsolation | undefined;
  // The gates' and merges' object reads go through one git process for the whole run.
  plan.git.openObjectBatch();
  try {
    recorder = new Recorder({
      audit: stores.audit,
      ledger: stores.ledger,
      reporter: runDeps.reporter,
      sdd: project.sdd,
      policyCounts: policy !== undefined,
      redactor,
    });
    if (policy) {
      recorder.on((fact) => {
        if (fact.kind === "agent.exited") policy.release(fact.session);
      });
    }
    notifier = await openNotifier(plan, deps, recorder, current, stores.audit);
    await recordStart(recorder, plan, current, await stillToDo(stores.store));
    // The run's configuration identity, bound to the chain (`bernstein runs diff`).
    await recordRunConfig(
      project.sdd,
      runConfigRecord({
        runId,
        attempt: current.attempt,
        config: plan.config,
        sources: plan.configSources,
        context: plan.context,
      }),
      stores.audit,
    );
    for (const a of leftovers) {
      await recorder.record({
        kind: "agent.leftover_ended",
        taskId: a.taskId,
        session: a.session,
        pid: a.pid,
      });
    }
    const rec = recorder;
    isolation = await setUpIsolation({
      decision: plan.isolation,
      config: plan.config,
      env: deps.env,
      project,
      git: plan.git,
      self: selfCommand(deps.env),
      secretFiles: stores.secretFiles,
      worktreesDir,
      onRefused: (r) => void rec.record({ kind: "network.refused", ...r }).catch(() => {}),
    });
    const gitDir = await plan.git.text(["rev-parse", "--path-format=absolute", "--git-common-dir"]);
    const gitState = await snapshotGitState(gitDir);
    const fixedSecrets = lazy(async () => [
      ...await runSecrets(plan.config, deps.env, {
        auditKey: stores.auditKey.path,
        operatorToken: stores.tokens.operatorTokenPath,
      }),
      ...await githubConnectionSecrets({
        config: plan.config,
        root: project.root,
        sdd: project.sdd,
        env: deps.env,
        clock: deps.clock,
      }),
    ]);
    // The connection secrets minted so far count too.
    const secrets = async () => [...await fixedSecrets(), ...redactor.secrets()];
    workers = await startWorkers(plan, runDeps, stores, runId, isolation.spawnPath);
    const loop = newLoop(plan, runDeps, stores, recorder, current, workers?.executor, policy, {
      spawnPath: isolation.spawnPath,
      commandIsolation: isolation.isolateCommand,
      secrets,
      gitState,
      gitDir,
      worktreesDir,
      redactor,
      connections: new RunConnections({
        sdd: project.sdd,
        runId,
        auditKey: stores.auditKey,
        audit: stores.audit,
        env: deps.env,
        random: deps.random,
        redactor,
      }),
    });
    feed.connect({ tasks: () => stores.store.list({}), agents: () => loop.liveAgents() });
    await (resume ? resumeTasks(plan, stores, recorder, loop, current) : createTasks(
      plan,
      stores,
      recorder,
      current,
    ));
    notifier.learnTitles(await stores.store.list({}));
    const unenforced = await recordPolicyStart(recorder, stores, loop, runId, policy);
    announceDashboard(runDeps.reporter, stores);
    await attachAttachments(plan, deps, stores, loop, runId);
    // Installed until the run's end is written: a signal during the end records bounds it too.
    uninstall = deps.onStopSignal?.({
      stop: (reason) => loop.requestStop(reason),
      killAgentsNow: () => loop.killAgentsNow(),
      graceMs: stopGraceMs(plan.config),
    }) ?? (() => {});
    const outcome = await loop.run();
    if (outcome.end === "storage-failed") throw storageFailed(outcome.reason);
    await restoreGitStateAtEnd(gitState, recorder);
    await recorder.record({
      kind: "run.finished",
      runId,
      end: outcome.end,
      reason: outcome.reason,
    });
    const tasks = await stores.store.list({});
    await notifier.runEnded({ outcome, tasks, health: runHealth(outcome, tasks) });
    // Deliveries are recorded as they end; the checkpoints below cover them.
    const notifications = await notifier.finish();
    // Last of the run's records: the checkpoints cover everything up to run.finished.
    const signed = await checkpoints.finish();
    feed.end();
    const scorecard = await writeScorecard(project.sdd, runId);
    const summary = buildSummary(
      { runId, branch: current.branch, sdd: project.sdd },
      outcome,
      tasks,
      scorecard,
      signed,
      { enabled: policy !== undefined, unenforced },
      notifications,
    );
    summary.isolation = await isolationSummary(plan.isolation, project.sdd);
    await writeRunRecord(project.sdd, summary, loop.decisions);
    await writeCurrentRun(project.sdd, { ...current, status: "finished" });
    return { kind: "run", summary, decisions: loop.decisions.length };
  } finally {
    uninstall();
    await notifier?.finish();
    checkpoints.close();
    await checkpoints.settled();
    feed.end();
    await workers?.close().catch(() => {});
    await isolation?.close();
    await plan.git.closeObjectBatch();
    await stores.close();
  }
}

/**
 * The run's notifications (`notify.*`): channels that are off say why once, at the start; the
 * notifier hears every fact from here on.
 */
async function openNotifier(
  plan: RunPlan,
  deps: RunDeps,
  recorder: Recorder,
  current: CurrentRun,
  audit: AuditSink,
): Promise<RunNotifier> {
  const { notifier, warnings } = await RunNotifier.open({
    audit,
    config: plan.config,
    root: plan.project.root,
    sdd: plan.project.sdd,
    runId: current.run_id,
    branch: plan.branch,
    env: deps.env,
    clock: deps.clock,
    random: deps.random,
    record: (fact) => recorder.record(fact),
  });
  for (const w of warnings) deps.warn(w);
  recorder.on((fact) => notifier.observe(fact));
  return notifier;
}

/** The run's tool-call policy, unless `policy.enabled` is false. */
async function openRunPolicy(
  plan: RunPlan,
  deps: RunDeps,
  worktreesDir: string,
  record: (fact: RunFact) => Promise<void>,
): Promise<RunPolicy | undefined> {
  if (!plan.config.policy.enabled) return undefined;
  const self = selfCommand(deps.env);
  return await RunPolicy.open({
    root: plan.project.root,
    sdd: plan.project.sdd,
    worktreesDir,
    config: plan.config,
    env: deps.env,
    clock: deps.clock,
    random: deps.random,
    lookup: systemPathLookup(deps.env),
    self: { argv: self.argv, env: self.env },
    record,
  });
}

/**
 * `policy.started`: the rules in force, rule file problems, and the adapters of this run's
 * tasks whose agents get no pre-tool hook (said at the start, and in the summary).
 */
async function recordPolicyStart(
  recorder: Recorder,
  stores: RunStores,
  loop: RunLoop,
  runId: string,
  policy: RunPolicy | undefined,
): Promise<string[]> {
  const names = new Set<string>();
  for (const t of await stores.store.list({})) {
    const resolved = await loop.resolveAdapter(t).catch(() => undefined);
    if (resolved !== undefined) names.add(resolved.adapter.name);
  }
  const unenforced = [...names].filter((n) => !enforces(getAdapter(n))).sort();
  await recorder.record({
    kind: "policy.started",
    runId,
    enabled: policy !== undefined,
    rules: policy?.rules ?? 0,
    problems: (policy?.problems ?? []).map((p) => `${p.location}: ${p.message}`),
    unenforced,
  });
  return policy === undefined ? [] : unenforced;
}

/** A value computed once, on first use. */
function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => (value ??= make());
}

/**
 * After the loop: whatever an agent planted in the repository's .git (config, hooks) while no
 * merge checked it is undone now, before the operator's next `git status`, and recorded.
 */
async function restoreGitStateAtEnd(snapshot: GitStateSnapshot, recorder: Recorder): Promise<void> {
  const changes = await gitStateChanges(snapshot);
  if (changes.length === 0) return;
  await restoreGitState(snapshot);
  await recorder.record({
    kind: "git.state_restored",
    changes: changes.map((c) => `${c.path} ${c.change}`),
    when: "run end",
  });
}

/** The run's isolation and each agent's, from the session files (the run record). */
async function isolationSummary(
  decision: IsolationDecision,
  sdd: string,
): Promise<IsolationSummary> {
  const agents: JsonObject = {};
  for (const file of await listSessionFiles(sdd)) {
    agents[file.session] = file.isolation ?? null;
  }
  return {
    requested: decision.requested,
    in_force: decision.isolation,
    backend: decision.backend,
    reason: decision.reason,
    agents,
  };
}

/** Prints the dashboard's one-time login link (`bernstein dashboard` mints more). */
function announceDashboard(reporter: RunReporter, stores: RunStores): void {
  const url = stores.server.loginLink?.();
  if (url !== undefined) reporter.event({ type: "dashboard.ready", url });
}

/** The worker pool, when `workers.listen` is set. */
async function startWorkers(
  plan: RunPlan,
  deps: RunDeps,
  stores: RunStores,
  runId: string,
  spawnPath: SpawnPathWrapper,
): Promise<RunWorkers | undefined> {
  if (plan.config.workers?.listen === undefined || deps.workers === undefined) return undefined;
  const self = selfCommand(deps.env);
  const { root, sdd } = plan.project;
  return await deps.workers({
    runId,
    sdd,
    config: plan.config,
    git: plan.git,
    store: stores.store,
    audit: stores.audit,
    server: stores.server,
    clock: deps.clock,
    env: deps.env,
    local: processExecutor({
      root,
      sdd,
      git: plan.git,
      env: deps.env,
      selfCommand: self.argv,
      selfEnv: self.env,
      clock: deps.clock,
      spawnPath,
    }),
  });
}

/** The current run's record: a resumed run keeps its own, with this process and attempt. */
function currentRunOf(
  plan: RunPlan,
  deps: RunDeps,
  runId: string,
  attempt: number,
): CurrentRun {
  if (plan.resume) return { ...(plan.previous as CurrentRun), pid: Deno.pid, attempt };
  return {
    run_id: runId,
    status: "running",
    pid: Deno.pid,
    host: hostName(),
    started_at: new Date(deps.clock.nowMs()).toISOString(),
    branch: plan.branch,
    source: (plan.planned as PlannedWork).source,
    goal: plan.planned?.source.kind === "goal" ? plan.planned.source.goal : null,
    attempt,
    choices: {
      plan_cli: plan.planCli ?? null,
      cli: plan.cliOverride ?? null,
      model: plan.modelOverride ?? null,
      max_agents: plan.maxAgents,
    },
  };
}

/** Tasks of a resumed run still to do: neither closed nor failed nor cancelled. */
async function stillToDo(store: TaskStore): Promise<number> {
  return (await store.list({})).filter((t) => !FINISHED_STATUSES.includes(t.status)).length;
}

/** `run.started` (audit + ledger) for a fresh run; `run.resumed` for a resumed one. */
async function recordStart(
  recorder: Recorder,
  plan: RunPlan,
  current: CurrentRun,
  open: number,
): Promise<void> {
  const source = current.source;
  if (plan.resume) {
    await recorder.record({
      kind: "run.resumed",
      runId: current.run_id,
      branch: plan.branch,
      runBranch: current.branch,
      attempt: current.attempt,
      source,
      host: hostName(),
      open,
    });
    return;
  }
  await recorder.record({
    kind: "run.started",
    runId: current.run_id,
    branch: plan.branch,
    attempt: current.attempt,
    source,
    sourceKind: (plan.planned as PlannedWork).source.kind,
    host: hostName(),
    maxAgents: plan.maxAgents,
  });
}

function newLoop(
  plan: RunPlan,
  deps: RunDeps,
  stores: RunStores,
  recorder: Recorder,
  current: CurrentRun,
  executor: Executor | undefined,
  policy: RunPolicy | undefined,
  guard: Pick<
    RunContext,
    | "spawnPath"
    | "commandIsolation"
    | "secrets"
    | "gitState"
    | "gitDir"
    | "worktreesDir"
    | "redactor"
    | "connections"
  >,
): RunLoop {
  const self = selfCommand(deps.env);
  return new RunLoop({
    runId: current.run_id,
    root: plan.project.root,
    sdd: plan.project.sdd,
    branch: current.branch,
    config: plan.config,
    git: plan.git,
    store: stores.store,
    holds: stores.holds,
    server: stores.server,
    tokens: stores.tokens,
    audit: stores.audit,
    auditKey: stores.auditKey,
    ledger: stores.ledger,
    lineage: stores.lineage,
    clock: deps.clock,
    env: deps.env,
    lookup: plan.lookup,
    selfCommand: self.argv,
    selfEnv: self.env,
    reporter: deps.reporter,
    // Already layers of config.cli (see planRun): passing them again would put them above it.
    cliOverride: undefined,
    modelOverride: plan.modelOverride,
    planCli: undefined,
    maxAgents: plan.maxAgents,
    configWatch: plan.watch,
    catalog: plan.catalog,
    goal: current.goal ?? undefined,
    runAttempt: current.attempt,
    isRoot: isRoot(),
    recorder,
    executor,
    ...(policy ? { policy } : {}),
    ...guard,
  });
}

/** A fresh run: the planned tasks are created and scheduled. */
async function createTasks(
  plan: RunPlan,
  stores: RunStores,
  recorder: Recorder,
  current: CurrentRun,
): Promise<void> {
  const work = plan.planned as PlannedWork;
  const created = await stores.store.createMany(work.drafts, {
    actor: "orchestrator",
    reason: `planned from ${work.source.kind}`,
  });
  for (const t of created) {
    await recorder.record({ kind: "task.scheduled", taskId: t.id, title: t.title, role: t.role });
  }
  await recorder.record({
    kind: "run.planned",
    runId: current.run_id,
    tasks: created.length,
    source: describeSource(work),
    branch: plan.branch,
  });
}

/** A resumed run: what the crashed one left is recovered. */
async function resumeTasks(
  plan: RunPlan,
  stores: RunStores,
  recorder: Recorder,
  loop: RunLoop,
  current: CurrentRun,
): Promise<void> {
  const open = await recoverAfterCrash({
    sdd: plan.project.sdd,
    store: stores.store,
    git: plan.git,
    recorder,
    adoptDone: (task, file) => loop.adoptDone(task, file),
  });
  await recorder.record({ kind: "run.recovered", runId: current.run_id, open });
}

/** Builds the attachment provider once the tasks exist, and gives it to the loop. */
async function attachAttachments(
  plan: RunPlan,
  deps: RunDeps,
  stores: RunStores,
  loop: RunLoop,
  runId: string,
): Promise<void> {
  if (!deps.attachments) return;
  const provider = await deps.attachments({
    project: plan.project,
    config: plan.config,
    runId,
    resumed: plan.resume,
    store: stores.store,
    auditKey: stores.auditKey,
    audit: stores.audit,
    tasks: await stores.store.list({}),
    adapterOf: async (t) => (await loop.resolveAdapter(t)).adapter.name,
  });
  if (provider) loop.setAttachments(provider);
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
