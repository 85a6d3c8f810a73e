/**
 * What a run hands back for its summary: how it ended and why, what merged, what was refused,
 * which branches were kept, and what each agent run cost. The recorder's subscribers tally it
 * from the run's facts.
 */

/** How a run ended. */
export type RunEnd = "quiescent" | "backstop" | "stopped" | "manager-stalled" | "infra-error";

/** Cost of one agent run, for the summary. */
export interface CostRow {
  /** Adapter. */
  adapter: string;
  /** Model (or "default"). */
  model: string;
  /** USD when the CLI reported it, else null. */
  cost_usd: number | null;
  /** Tokens in + out, when reported. */
  tokens: number | null;
  /** Turns, when reported. */
  turns: number | null;
}

/** What the loop hands back for the summary. */
export interface RunOutcome {
  /** How the run ended. */
  end: RunEnd;
  /** Merged tasks with their files. */
  merges: { task_id: string; session: string; files: string[]; sha: string }[];
  /** Refused merges (branch kept). */
  refused: { task_id: string; branch: string; reason: string; detail: string }[];
  /** Branches kept for failed tasks. */
  keptBranches: { task_id: string; branch: string; reason: string }[];
  /** Agent runs' costs. */
  costs: CostRow[];
  /** Why the run stopped, in words. */
  reason: string;
}

/** The outcome of a run that has not ended yet. */
export function emptyOutcome(): RunOutcome {
  return { end: "quiescent", merges: [], refused: [], keptBranches: [], costs: [], reason: "" };
}
