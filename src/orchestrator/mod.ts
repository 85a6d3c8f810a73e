/**
 * The orchestrator: the run loop's pieces. So far: completion signals — deciding, per step,
 * whether its worktree shows the work is done (`path_exists`, `glob_exists`,
 * `file_contains`, `test_passes`), with a reason per signal.
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
