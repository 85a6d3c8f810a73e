// Plan problems (FILE:LINE:COL, code, message) and the error a plan that cannot load fails with.

import { BernsteinError, ExitCode, type Warning } from "../errors/mod.ts";

/** One problem found in a plan file or backlog item. */
export interface PlanProblem extends Warning {
  /** Errors make the plan unusable; warnings do not. */
  severity: "error" | "warning";
  /** Field path inside the document (`stages[0].steps[1].attachments[0]`), when known. */
  field?: string;
}

/**
 * A plan file or backlog that cannot be loaded. Carries every problem found; the message is
 * the first one. Exit code 2 (bad input file).
 */
export class PlanLoadError extends BernsteinError {
  /** Every problem, errors and warnings, in document order. */
  readonly problems: readonly PlanProblem[];

  constructor(problems: readonly PlanProblem[]) {
    const errors = problems.filter((p) => p.severity === "error");
    const first = errors[0] ?? problems[0];
    const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : "";
    super(first?.code ?? "plan.invalid", (first?.message ?? "invalid plan") + more, {
      location: first?.location,
      hint: first?.hint,
      exitCode: ExitCode.usage,
    });
    this.problems = problems;
  }
}
