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
