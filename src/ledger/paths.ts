// The ledger's paths under `.sdd/runtime/ledger/` and the scorecard folder of a run (run ids
// are checked by src/io's `.sdd` layout).

import { join } from "node:path";
import { checkRunId, runFile, runtimePath } from "../io/mod.ts";

/** Name of the (only) ledger segment. */
export const LEDGER_SEGMENT = "000000.jsonl";

/** `<sdd>/runtime/ledger`. */
export function ledgerRoot(sdd: string): string {
  return runtimePath(sdd, "ledger");
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

/** `<sdd>/runs/<run-id>/scorecard`. */
export function scorecardDir(sdd: string, runId: string): string {
  return runFile(sdd, runId, "scorecard");
}
