// Run ids and the ledger's paths under `.sdd/ledger/`; `checkRunId` refuses ids that could
// escape their folder.

import { join } from "node:path";
import { UsageError } from "../errors/mod.ts";

/** What a run id may look like on disk (the generated ones are `adjective-noun-hex6`). */
export const RUN_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/** Checks a run id from outside (CLI argument, folder name) before it becomes a path. */
export function checkRunId(runId: string): string {
  if (!RUN_ID_PATTERN.test(runId) || runId.includes("..")) {
    throw new UsageError(
      "runs.bad_id",
      `'${runId}' is not a run id (letters, digits, '.', '_', '-'; e.g. brave-otter-3fa9c2)`,
    );
  }
  return runId;
}

/** Name of the (only) ledger segment. */
export const LEDGER_SEGMENT = "000000.jsonl";

/** `<sdd>/runtime/ledger`. */
export function ledgerRoot(sdd: string): string {
  return join(sdd, "runtime", "ledger");
}

/** `<sdd>/runtime/ledger/<run-id>`. */
export function ledgerDir(sdd: string, runId: string): string {
  return join(ledgerRoot(sdd), checkRunId(runId));
}

/** `<sdd>/runtime/ledger/<run-id>/000000.jsonl`. */
export function ledgerPath(sdd: string, runId: string): string {
  return join(ledgerDir(sdd, runId), LEDGER_SEGMENT);
}

/** The ledger path relative to the project root, as recorded in scorecards. */
export function ledgerRelativePath(runId: string): string {
  return `.sdd/runtime/ledger/${checkRunId(runId)}/${LEDGER_SEGMENT}`;
}

/** `<sdd>/runs`. */
export function runsRoot(sdd: string): string {
  return join(sdd, "runs");
}

/** `<sdd>/runs/<run-id>/scorecard`. */
export function scorecardDir(sdd: string, runId: string): string {
  return join(runsRoot(sdd), checkRunId(runId), "scorecard");
}
