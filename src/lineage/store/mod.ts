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
 *   operatorKey: () => resolveOperatorHmacKey({ env, createWith: systemRandom }),
 *   strict: config.lineage.strict,
 *   enabled: config.lineage.enabled,
 * });
 * await store.recordWrite("src/app.ts", bytes, { agent: "claude-1", toolCallId, spanId });
 * ```
 *
 * @module
 */
export { importAttestation } from "./attestations.ts";
export {
  agentKeyDirName,
  ensureAgentSigner,
  publishAgentCard,
  rotateAgentKey,
  STEWARD_AGENT_ID,
} from "./identity.ts";
export { resolveOperatorHmacKey } from "./operator_hmac_key.ts";
export { type LineagePaths, lineagePaths } from "./paths.ts";
export { openProjectLineageStore } from "./project.ts";
export {
  appendSpineEntry,
  checkSpineRunId,
  spineDir,
  verifyRecoveryReceipt,
  writeReceipt,
} from "./receipts.ts";

export {
  type ExternalSigner,
  LineageStore,
  LineageWriteError,
  type LoggedEntry,
  openLineageStore,
  type RecordWriteOptions,
} from "./store.ts";
