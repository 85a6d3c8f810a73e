/**
 * The HMAC-chained audit log (FORMATS.md §2): key handling, the locked + fsynced writer with
 * torn-tail sealing and group commit, the authenticated incremental scan, and streaming
 * verification.
 *
 * @example
 * ```ts ignore
 * const key = await ensureAuditKey(resolveAuditKeyPath(processEnv).path, systemRandom);
 * const log = new AuditLog(".sdd/audit", key);
 * await log.append({ actor: "orchestrator", event_type: "run.start", resource_type: "run",
 *   resource_id: "r-1", details: {} });
 * await log.close();
 * const report = await verifyAuditLog(".sdd/audit", key); // report.ok
 * ```
 *
 * @module
 */
export { checkpointAuditLog, readAuditCheckpoints } from "./checkpoint.ts";
export { AuditError } from "./errors.ts";
export {
  type AuditKey,
  deriveOperatorKey,
  ensureAuditKey,
  readAuditKey,
  resolveAuditKeyPath,
} from "./key.ts";
export { appendAuditEvent, AuditLog, type AuditLogOptions, type AuditSink } from "./log.ts";
export { MemoryAuditSink } from "./memory_sink.ts";
export {
  type AuditChainKeys,
  auditChainKeys,
  type AuditEventInput,
  type AuditRecord,
  auditTimestampMicros,
  buildRecord,
  checkRecordLine,
  formatAuditTimestamp,
  GENESIS_HMAC,
  TORN_RECORD_EVENT,
} from "./record.ts";
export { AuditScanner, scanAuditLog, type ScannedAuditRecord } from "./scan.ts";
export { listSegments, segmentNameFor } from "./segments.ts";
export { type AuditIssue, type AuditSealedTear, verifyAuditLog } from "./verify.ts";
