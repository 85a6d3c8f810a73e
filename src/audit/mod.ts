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
export {
  type AuditCheckpointInput,
  auditLogFiles,
  checkpointAuditLog,
  readAuditCheckpoints,
} from "./checkpoint.ts";
export { AuditError } from "./errors.ts";
export {
  type AuditKey,
  type AuditKeyLocation,
  deriveChainKey,
  deriveOperatorKey,
  ensureAuditKey,
  readAuditKey,
  resolveAuditKeyPath,
} from "./key.ts";
export {
  appendAuditEvent,
  type AppendAuditEventOptions,
  type AppendOptions,
  AuditLog,
  type AuditLogOptions,
  type AuditSink,
} from "./log.ts";
export { MemoryAuditSink, type MemoryAuditSinkOptions } from "./memory_sink.ts";
export {
  AUDIT_SCHEME,
  AUDIT_V2_PREFIX,
  type AuditChainKeys,
  auditChainKeys,
  type AuditEventInput,
  type AuditIssueCode,
  type AuditRecord,
  auditTimestampMicros,
  buildRecord,
  type BuildRecordOptions,
  checkRecordLine,
  formatAuditTimestamp,
  GENESIS_HMAC,
  type LineCheck,
  recordHmac,
  TORN_RECORD_EVENT,
} from "./record.ts";
export {
  type AuditScanCursor,
  AuditScanner,
  type AuditScanResult,
  type AuditScanSkip,
  type AuditSegmentMark,
  scanAuditLog,
  type ScanAuditOptions,
  type ScannedAuditRecord,
} from "./scan.ts";
export {
  ARCHIVE_DIR,
  isSegmentName,
  listSegments,
  openSegment,
  type SegmentEntry,
  segmentNameFor,
  type SegmentReader,
} from "./segments.ts";
export {
  type AuditCheckpointReport,
  type AuditIssue,
  type AuditSealedTear,
  type AuditSegmentSummary,
  type AuditTornTail,
  type AuditTruncation,
  type AuditVerifyReport,
  verifyAuditLog,
  type VerifyAuditOptions,
} from "./verify.ts";
