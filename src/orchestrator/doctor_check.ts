// One line of `bernstein doctor`: its verdict and what it found. Its own file so the checks
// that live beside their subject (github_backlog.ts, notify_check.ts) and the doctor that runs
// them do not import each other.

/** The verdict of one doctor check. */
export type CheckStatus = "OK" | "WARN" | "FAIL";

/** One line of `bernstein doctor`. */
export interface DoctorCheck {
  /** Short name (`git`, `disk`, `config`, …). */
  name: string;
  /** Verdict. */
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** How to fix it (WARN/FAIL). */
  hint?: string;
}
