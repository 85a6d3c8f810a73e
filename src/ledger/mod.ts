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
export { type LedgerBreak, type LedgerCheck, verifyLedgerBytes } from "./chain.ts";
export { LedgerError } from "./errors.ts";
export {
  LEDGER_SEGMENT,
  ledgerDir,
  ledgerPath,
  ledgerRelativePath,
  ledgerRoot,
  scorecardDir,
} from "./paths.ts";
export {
  buildRow,
  entryHash,
  floatValue,
  GENESIS_HASH,
  isSecretKey,
  isTaskKind,
  LEDGER_KINDS,
  LEDGER_SCHEMA_VERSION,
  type LedgerEntryInput,
  type LedgerKind,
  type LedgerRow,
  REDACTED,
  redactPayload,
  rowBytes,
  rowJson,
  tsFromMs,
} from "./row.ts";
export { GENERATED_RUN_ID, runIdFromSeed, runTag } from "./run_id.ts";
export {
  deriveScorecard,
  divergingFields,
  GATE_FAILURE_REASONS,
  type Outcome,
  OUTCOMES,
  SCORECARD_FIELDS,
  SCORECARD_VERSION,
  type ScorecardEnvelope,
  scorecardEnvelope,
  WEDGED_CLOSE_REASONS,
} from "./scorecard.ts";
export {
  checkScorecardArtefact,
  findScorecard,
  type ScorecardVerification,
  type StoredScorecard,
  type VerificationStatus,
  verifyScorecard,
  writeScorecard,
  type WrittenScorecard,
} from "./scorecard_store.ts";
export { type LedgerRead, LedgerWriter, type LedgerWriterOptions, readLedger } from "./store.ts";
