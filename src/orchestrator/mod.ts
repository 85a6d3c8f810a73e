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
export {
  type AgentLaunch,
  type AgentProcess,
  startAgent,
  type StartAgentOptions,
} from "./agent_session.ts";
export {
  type ChangedPath,
  type DiffEntry,
  Git,
  GitError,
  type GitIdentity,
  type GitOptions,
  type MergeOutcome,
  parseRawDiff,
  SAFE_GIT_CONFIG,
  SAFE_GIT_ENV,
} from "./git.ts";
export {
  type GitStateChange,
  gitStateChanges,
  gitStateGate,
  type GitStateSnapshot,
  restoreGitState,
  snapshotGitState,
} from "./git_guard.ts";
export {
  attributeDrivers,
  type BlobReader,
  gitmodulesProblems,
  gitSafetyGate,
  type GitSafetyInput,
  HOOK_FOLDERS,
  isDotGitSegment,
  isLocalUrl,
  isUnderGitDir,
  symlinkProblem,
} from "./merge_safety.ts";
export { cleanedGitConfig, type RunIsolation, setUpIsolation } from "./isolation.ts";
export { runSecrets, secretVariableNames } from "./run_secrets.ts";
export {
  findSecrets,
  MIN_SECRET_LENGTH,
  type Secret,
  secretNeedles,
  secretsGate,
  type SecretsGateInput,
} from "./secrets_gate.ts";
export { commandGate, type CommandGateOptions, type GateResult, runConfigGate } from "./gates.ts";
export { matchesGlob, ownedEntriesOverlap, ownedFilesOverlap } from "./owned_files.ts";
export {
  isRateLimitReason,
  retryDelayMs,
  type SchedulableTask,
  scheduleTick,
  spawnBackoffMs,
  type TickDecision,
  type TickInput,
} from "./scheduler.ts";
export {
  decideTermination,
  isFinishedStatus,
  isSettledStatus,
  type StallState,
  taskFingerprint,
  type TerminationDecision,
  type TerminationInput,
  type TerminationTask,
} from "./termination.ts";
export { type CheckStatus, type DoctorCheck } from "./doctor_check.ts";
export { type DoctorOptions, runDoctor } from "./doctor.ts";
export {
  type CommandProbe,
  type CompletionReport,
  decideSignal,
  DEFAULT_SIGNAL_ENV,
  evaluateCompletionSignals,
  type EvaluateOptions,
  type GlobProbe,
  type PathProbe,
  type ReadProbe,
  type SignalEdges,
  type SignalObservation,
  type SignalResult,
  type WorktreeEdgeOptions,
  worktreeEdges,
} from "./completion_signals.ts";
export { MANAGER_TASK_ID, type PlannedWork, type PlanningRequest, planWork } from "./planning.ts";
export { buildPromptBody, cellsText, protocolText, roleTemplate } from "./prompt.ts";
export {
  type AgentRow,
  JsonLinesReporter,
  LineReporter,
  LiveReporter,
  type RunEvent,
  type RunReporter,
} from "./reporter.ts";
export {
  type AttachmentGateInput,
  type AttachmentParts,
  executeRun,
  type RunDeps,
  type RunOptions,
  type RunReport,
  type RunWorkers,
  type WorkerParts,
} from "./run.ts";
export { attemptLines, buildSummary, type RunSummary, SHOWN_ATTEMPTS } from "./run_summary.ts";
export {
  type RunCheckpointLog,
  type RunCheckpointRecord,
  RunCheckpoints,
  type RunCheckpointsOptions,
} from "./checkpoints.ts";
export { type DecisionRecord, RunLoop } from "./run_loop.ts";
export type { AttachmentProvider, RunContext, SpawnAttachments } from "./run_context.ts";
export { type CostRow, emptyOutcome, type RunEnd, type RunOutcome } from "./outcome.ts";
export {
  type BudgetCounts,
  budgetTotal,
  ErrorBudget,
  type SpentBudget,
  spentBudget,
} from "./error_budget.ts";
export {
  AdapterResolver,
  type CliChoiceContext,
  type ModelChoice,
  modelForAttempt,
  resolveTaskCli,
} from "./adapter_choice.ts";
export {
  type AgentExit,
  type Execution,
  type ExecutionRequest,
  type Executor,
  processExecutor,
  type ProcessExecutorOptions,
} from "./executor.ts";
export { DIRECT_SUBPROCESS, type SpawnPathWrapper } from "./agent_session.ts";
export {
  type FactListener,
  type FactRecords,
  Recorder,
  type RecorderOptions,
  recordsOf,
  type RunFact,
  tallyOutcome,
} from "./recorder.ts";
export { listSessionFiles, type RefusedMerge, type SessionFile } from "./run_state.ts";
export { loadRunRecords, type LoadRunRecordsOptions, readLogTails } from "./run_records.ts";
export { processAlive, readSession, sessionPath, type SessionRecord } from "./session.ts";
export { type SelfCommand, selfCommand, verifyCommand } from "./self_command.ts";
export { checkConfig, type CheckedConfig } from "./config_checks.ts";
export { worktreesDirOf, worktreesDirProblems } from "./worktrees_dir.ts";
export {
  certificationProblems,
  certifyEndpoint,
  type CertifyOutcome,
  type CertifyRequest,
  gatedEndpointUses,
} from "./endpoint_certification.ts";
export {
  type DrillRole,
  probeElement,
  ProviderRouter,
  runFailoverDrill,
} from "./provider_routing.ts";
export {
  applyReloadable,
  changedKeys,
  configHash,
  ConfigWatch,
  type ReloadOutcome,
} from "./config_reload.ts";
export {
  type CatalogAgent,
  catalogPreamble,
  type CatalogSet,
  loadCatalogs,
  parseAgentDefinition,
  withCatalogRoles,
} from "./catalogs.ts";
export {
  CHANNEL_NAMES,
  notifyDoctor,
  type NotifyTestOptions,
  type NotifyTestReport,
  sendTestNotification,
  testNotification,
} from "./notify_check.ts";
export {
  githubCommentChannel,
  githubConnectionSecrets,
  githubDoctor,
  type GitHubParts,
  type GitHubTarget,
  githubTarget,
  mergeComment,
  syncGithubBacklog,
  TOKEN_VARIABLES,
} from "./github_backlog.ts";
export {
  type FactNotice,
  notificationOfFact,
  type RunEndInput,
  runEndNotice,
  RunNotifier,
  type RunNotifierParts,
} from "./run_notify.ts";
