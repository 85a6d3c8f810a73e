/**
 * The work ledger and the run scorecard (FORMATS.md §6): a hash-chained, canon-ascii JSONL
 * record of every run and task event, appended under a lock with fsync and verified row by
 * row; a scorecard derived only from that ledger, stored under its content hash; memorable,
 * deterministic run ids.
 *
 * @example
 * ```ts ignore
 * import { LedgerWriter, runIdFromSeed, verifyScorecard, writeScorecard } from "./mod.ts";
 * const runId = runIdFromSeed(seedBytes);
 * const ledger = await LedgerWriter.open(".sdd", runId, { clock: systemClock });
 * await ledger.append({ kind: "run.open", payload: { branch: "feature", host: "ci-1" } });
 * // … task.scheduled / task.started / task.completed …
 * await ledger.append({ kind: "run.closed", payload: { reason: "quiescent" } });
 * await writeScorecard(".sdd", runId);
 * (await verifyScorecard(".sdd", runId)).ok; // true
 * ```
 *
 * @module
 */
export { verifyLedgerBytes } from "./chain.ts";
export { LedgerError } from "./errors.ts";
export { ledgerPath, ledgerRoot, scorecardDir } from "./paths.ts";
export {
  buildRow,
  entryHash,
  isSecretKey,
  type LedgerEntryInput,
  type LedgerRow,
  redactPayload,
  rowBytes,
  tsFromMs,
} from "./row.ts";
export { GENERATED_RUN_ID, runIdFromSeed, runTag } from "./run_id.ts";
export {
  deriveScorecard,
  divergingFields,
  SCORECARD_FIELDS,
  scorecardEnvelope,
} from "./scorecard.ts";
export { findScorecard, verifyScorecard, writeScorecard } from "./scorecard_store.ts";
export { LedgerWriter, readLedger } from "./store.ts";
