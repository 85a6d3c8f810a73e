/**
 * The run: git worktrees and merges, quality gates, and (as they land) planning, the scheduler
 * tick, spawning, liveness, termination and resume.
 *
 * @module
 */
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
