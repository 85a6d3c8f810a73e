/**
 * The lineage writer side: the append-only log under `.sdd/lineage/` (exclusive lock, fsync,
 * mode 0600), its rebuildable projections (`by-artefact/`, `tips/`), signature sidecars,
 * agent identities (an Ed25519 key per agent, minted on first use, with cards in both layouts
 * and key rotation), the steward identity that signs merges, and `recordWrite`.
 *
 * @example
 * ```ts ignore
 * const store = openLineageStore({
 *   sdd: project.sdd,
 *   operatorKey: () => resolveOperatorKey({ env, createWith: systemRandom }),
 *   strict: config.lineage.strict,
 *   enabled: config.lineage.enabled,
 * });
 * await store.recordWrite("src/app.ts", bytes, { agent: "claude-1", toolCallId, spanId });
 * ```
 *
 * @module
 */
export {
  AttestationImportError,
  importAttestation,
  type ImportedAttestation,
} from "./attestations.ts";
export {
  agentKeyDirName,
  AgentKeyError,
  type AgentSigner,
  ensureAgentSigner,
  publishAgentCard,
  rotateAgentKey,
  STEWARD_AGENT_ID,
} from "./identity.ts";
export { resolveOperatorKey, type ResolveOperatorKeyOptions } from "./operator_key.ts";
export { type LineagePaths, lineagePaths } from "./paths.ts";
export { openProjectLineageStore, type ProjectLineageOptions } from "./project.ts";
export {
  appendSpineEntry,
  checkSpineRunId,
  type ReceiptVerification,
  spineDir,
  verifyRecoveryReceipt,
  writeReceipt,
  type WrittenReceipt,
} from "./receipts.ts";
export {
  catchUpProjections,
  type ProjectionReport,
  readTips,
  rebuildProjections,
} from "./projections.ts";
export {
  type ExternalSigner,
  LineageStore,
  type LineageStoreOptions,
  LineageWriteError,
  type LoggedEntry,
  type MergeOptions,
  type MergeResult,
  openLineageStore,
  type RecordWriteOptions,
  type RecordWriteResult,
} from "./store.ts";
