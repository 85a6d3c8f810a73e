/**
 * What a run hands back for its summary: how it ended and why, what merged, what was refused,
 * which branches were kept, and what each agent run cost. The recorder's subscribers tally it
 * from the run's facts.
 */

/** How a run ended. */
export type RunEnd =
  | "quiescent"
  | "backstop"
  | "stopped"
  | "manager-stalled"
  | "infra-error"
  | "store-lock-lost"
  | "storage-failed";

/** One agent run (an attempt), for the summary: who served it and what it cost. */
export interface CostRow {
  /** Task. */
  task_id: string;
  /** Session (one per attempt). */
  session: string;
  /** Adapter. */
  adapter: string;
  /** Model (or "default"). */
  model: string;
  /** `endpoint <name> (<base_url>)` or `<adapter> (its own provider)`. */
  provider: string;
  /** The agent's own verdict (the gates and the merge decide the task). */
  ok: boolean;
  /** USD when the CLI reported it, else null. */
  cost_usd: number | null;
  /** Tokens in + out, when reported. */
  tokens: number | null;
  /** Turns, when reported. */
  turns: number | null;
}

/** Tool-call decisions by action (every `policy.decision` event; a parked call is two). */
export interface PolicyTally {
  /** All decisions. */
  decisions: number;
  /** Allowed. */
  allow: number;
  /** Denied. */
  deny: number;
  /** Asked (parked). */
  ask: number;
  /** The same per task. */
  by_task: Record<string, { decisions: number; allow: number; deny: number; ask: number }>;
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
  /** Tool-call decisions. */
  policy: PolicyTally;
}

/** The outcome of a run that has not ended yet. */
export function emptyOutcome(): RunOutcome {
  return {
    end: "quiescent",
    merges: [],
    refused: [],
    keptBranches: [],
    costs: [],
    reason: "",
    policy: { decisions: 0, allow: 0, deny: 0, ask: 0, by_task: {} },
  };
}
