/**
 * The run's error budget (the configuration design's SLO check): how many tasks may finally
 * fail before the run pauses. The task-success objective is 90 %, so a run may lose 10 % of the
 * tasks it finished, but never fewer than `tuning.slo.error_budget_min_failures` (3 by default:
 * a few failures among the first tasks are no verdict on the run). Once the failures reach the
 * budget the run stops starting agents: the running ones drain, what is left stays open, and the
 * next `bernstein run` resumes it with a fresh budget. Raise the floor for runs whose early
 * failures are expected; 0 pauses at the first final failure.
 *
 * Only final outcomes of this run attempt count: a retried attempt is not a failure yet, and a
 * dependent failed because its dependency failed is that one failure, not another.
 */
import type { RunFact } from "./recorder.ts";

/** The task-success objective the budget is derived from, in percent. */
export const TASK_SUCCESS_TARGET_PERCENT = 90;

/** Final task outcomes seen in this run attempt. */
export interface BudgetCounts {
  /** Tasks that finished: merged, closed with nothing to merge, or finally failed. */
  finished: number;
  /** Of those, finally failed (dependents of a failure not counted again). */
  failed: number;
}

/** A spent budget: the audit details and the stop's reason. */
export interface SpentBudget extends BudgetCounts {
  /** Failures the run could take: max(floor, 10 % of finished). */
  budget: number;
  /** `tuning.slo.error_budget_min_failures` in force. */
  min_failures: number;
  /** Why the run pauses, in words. */
  reason: string;
}

/**
 * Failures a run may take after `finished` final outcomes.
 *
 * @example
 * ```ts
 * budgetTotal(10, 3); // 3: 10 % of 10 is 1, the floor is 3
 * budgetTotal(100, 3); // 10
 * ```
 */
export function budgetTotal(finished: number, minFailures: number): number {
  // In whole percent: 35 × (1 − 0.9) is 3.4999… in floating point.
  return Math.max(minFailures, Math.round(finished * (100 - TASK_SUCCESS_TARGET_PERCENT) / 100));
}

/** The spent budget, or undefined while failures are below it (none is never spent). */
export function spentBudget(counts: BudgetCounts, minFailures: number): SpentBudget | undefined {
  const budget = budgetTotal(counts.finished, minFailures);
  if (counts.failed === 0 || counts.failed < budget) return undefined;
  return {
    ...counts,
    budget,
    min_failures: minFailures,
    reason: `error budget spent: ${counts.failed} of ${counts.finished} finished task(s) failed ` +
      `(budget ${budget}: the larger of tuning.slo.error_budget_min_failures ${minFailures} and ` +
      `${100 - TASK_SUCCESS_TARGET_PERCENT}% of the finished tasks); ` +
      "the tasks left open resume with the next run",
  };
}

/** Counts final outcomes from the run's facts (subscribe {@linkcode ErrorBudget.observe}). */
export class ErrorBudget {
  readonly #failed = new Set<string>();
  readonly #succeeded = new Set<string>();

  /** Takes one fact into account. */
  observe(fact: RunFact): void {
    if (fact.kind === "task.failed" && fact.final === true && fact.code !== "dependency-failed") {
      this.#failed.add(fact.taskId);
    } else if (fact.kind === "merge.completed" || fact.kind === "task.unchanged") {
      this.#succeeded.add(fact.taskId);
      this.#failed.delete(fact.taskId);
    }
  }

  /** The counts so far. */
  counts(): BudgetCounts {
    return { finished: this.#failed.size + this.#succeeded.size, failed: this.#failed.size };
  }
}
