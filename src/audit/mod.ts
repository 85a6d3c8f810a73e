/**
 * The HMAC-chained audit log (FORMATS.md §2): key handling for now; the chain writer, the
 * authenticated scan and verification build on it.
 *
 * @module
 */
export {
  type AuditKey,
  type AuditKeyLocation,
  deriveChainKey,
  deriveOperatorKey,
  ensureAuditKey,
  readAuditKey,
  resolveAuditKeyPath,
} from "./key.ts";
