/**
 * The run: git worktrees and merges, quality gates, completion signals, the scheduler tick,
 * termination, doctor — and the run loop that puts them together: dispatch, the executor
 * (shared with `bernstein worker`), agent exits, completion, the merge queue, liveness,
 * stopping, and the recorder every fact goes through.
 *
 * @example
 * ```ts ignore
 * import { evaluateCompletionSignals, worktreeEdges } from "./mod.ts";
 * const edges = worktreeEdges(worktreePath, { env: processEnv });
 * const report = await evaluateCompletionSignals(step.completion_signals, edges);
 * ```
 *
 * @module
 */
export { startAgent } from "./agent_session.ts";
export { type DiffEntry, Git, parseRawDiff } from "./git.ts";
export { gitStateGate, snapshotGitState } from "./git_guard.ts";
export {
  gitmodulesProblems,
  gitSafetyGate,
  isDotGitSegment,
  isLocalUrl,
  symlinkProblem,
} from "./merge_safety.ts";
export { cleanedGitConfig, setUpIsolation } from "./isolation.ts";
export { runSecrets, secretVariableNames } from "./run_secrets.ts";
export { findSecrets, type Secret, secretNeedles, secretsGate } from "./secrets_gate.ts";
export { commandGate, runConfigGate } from "./gates.ts";
export { ownedEntriesOverlap } from "./owned_files.ts";
export {
  isRateLimitReason,
  retryDelayMs,
  type SchedulableTask,
  scheduleTick,
  spawnBackoffMs,
} from "./scheduler.ts";
export { decideTermination, type StallState } from "./termination.ts";

export { runDoctor } from "./doctor.ts";
export {
  decideSignal,
  evaluateCompletionSignals,
  type SignalEdges,
  worktreeEdges,
} from "./completion_signals.ts";

export { buildPromptBody } from "./prompt.ts";
export {
  JsonLinesReporter,
  LineReporter,
  LiveReporter,
  type RunEvent,
  type RunReporter,
} from "./reporter.ts";
export { executeRun, type RunDeps, type RunWorkers, type WorkerParts } from "./run.ts";
export { attemptLines, buildSummary, type RunSummary, SHOWN_ATTEMPTS } from "./run_summary.ts";
export { RunCheckpoints } from "./checkpoints.ts";
export { RunLoop } from "./run_loop.ts";
export { type RunStopControl, type StopSignal, StopSignals } from "./stop_signals.ts";

export { emptyOutcome, type RunOutcome } from "./outcome.ts";
export { budgetTotal, ErrorBudget, spentBudget } from "./error_budget.ts";
export { resolveTaskCli } from "./adapter_choice.ts";
export {
  type AgentExit,
  type Execution,
  type ExecutionRequest,
  type Executor,
  processExecutor,
} from "./executor.ts";

export { type RunFact, tallyOutcome } from "./recorder.ts";
export { isRemoteSession, listSessionFiles } from "./run_state.ts";
export { loadRunRecords } from "./run_records.ts";
export { readCurrentRun } from "./current_run.ts";
export { processAlive } from "./pid_liveness.ts";
export { selfCommand, verifyCommand } from "./self_command.ts";
export { checkConfig } from "./config_checks.ts";
export { worktreesDirProblems } from "./worktrees_dir.ts";
export { certificationProblems, certifyEndpoint } from "./endpoint_certification.ts";
export { runFailoverDrill } from "./provider_routing.ts";
export { applyReloadable, ConfigWatch } from "./config_reload.ts";
export {
  catalogPreamble,
  loadCatalogs,
  parseAgentDefinition,
  withCatalogRoles,
} from "./catalogs.ts";
export { CHANNEL_NAMES, sendTestNotification } from "./notify_check.ts";
export {
  githubCommentChannel,
  githubConnectionSecrets,
  githubDoctor,
  syncGithubBacklog,
} from "./github_backlog.ts";
export { notificationOfFact, runEndNotice } from "./run_notify.ts";
