/**
 * The run: git worktrees and merges, quality gates, completion signals, the scheduler tick,
 * termination, doctor — and the run loop that puts them together.
 *
 * @example
 * ```ts
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
  Git,
  GitError,
  type GitIdentity,
  type GitOptions,
  type MergeOutcome,
} from "./git.ts";
export {
  commandGate,
  type CommandGateOptions,
  type GateResult,
  RUN_CONFIG_PATTERNS,
  runConfigGate,
} from "./gates.ts";
export { matchesGlob, ownedEntriesOverlap, ownedFilesOverlap } from "./owned_files.ts";
export {
  ACTIVE,
  DEAD_END,
  DEPENDENCY_MET,
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
  type StallState,
  taskFingerprint,
  type TerminationDecision,
  type TerminationInput,
  type TerminationTask,
} from "./termination.ts";
export { type CheckStatus, type DoctorCheck, type DoctorOptions, runDoctor } from "./doctor.ts";
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
export { buildPromptBody, protocolText, roleTemplate } from "./prompt.ts";
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
  type RunSummary,
} from "./run.ts";
export {
  type AttachmentProvider,
  type CostRow,
  type DecisionRecord,
  resolveTaskCli,
  type RunEnd,
  RunLoop,
  type RunOutcome,
  type SpawnAttachments,
} from "./run_loop.ts";
export { listSessionFiles, type RefusedMerge, type SessionFile } from "./run_state.ts";
export { loadRunRecords, type LoadRunRecordsOptions, readLogTails } from "./run_records.ts";
export { processAlive, readSession, sessionPath, type SessionRecord } from "./session.ts";
export { type SelfCommand, selfCommand, verifyCommand } from "./self_command.ts";
