/**
 * Lineage v1 (FORMATS.md §4), the pure part: entries and their rules, entry hash and operator
 * HMAC, artefact keys, the on-disk layout, agent cards, tips and forks, merge policies and
 * merge entries, foreign-attestation verdicts, and streaming JSONL framing. No file system,
 * environment or process access, so the read-only verifier may import it; the writer side is
 * `src/lineage/store/`.
 *
 * @example
 * ```ts ignore
 * import { entryHash, parseEntry, sealEntry } from "./mod.ts";
 * const entry = sealEntry({ artefact_path: "src/a.ts", artefact_kind: "file", … }, operatorKey);
 * entryHash(entry); // "sha256:…"
 * ```
 *
 * @module
 */
export { ARTEFACT_URI_SCHEMES, artefactKeyProblem, checkArtefactKey } from "./artefact_key.ts";
export {
  AGENT_CARD_PROTOCOL,
  type AgentCard,
  AgentCardSet,
  agentDirName,
  type CardLayout,
  cardLayoutOf,
  type CardLookup,
  type CardSetIssue,
  kidForPublicKey,
  makeAgentCard,
  parseAgentCard,
  type ParsedAgentCard,
  renderAgentCard,
} from "./card.ts";
export { digestInto, DigestTable, digestText } from "./digest_table.ts";
export {
  ACTIVITY_SOURCES,
  type ActivitySource,
  ARTEFACT_KINDS,
  type ArtefactKind,
  computeOperatorHmac,
  ENTRY_OPTIONAL_FIELDS,
  ENTRY_REQUIRED_FIELDS,
  entryBytes,
  type EntryField,
  entryHash,
  entryHashOfBytes,
  entryToJson,
  isEntryHash,
  type LineageEntry,
  MODEL_REF_PROVIDERS,
  type ModelRef,
  operatorHmacInput,
  parseEntry,
  sealEntry,
  TRUST_CLASSES,
  type TrustClass,
  type UnsealedEntry,
} from "./entry.ts";
export {
  AgentCardError,
  ArtefactKeyError,
  LineageConflictError,
  LineageEntryError,
} from "./errors.ts";
export {
  FOREIGN_FORMATS,
  type ForeignAttestation,
  type ForeignAttestationOptions,
  type ForeignAttestationResult,
  foreignStatementBytes,
  type ForeignVerdict,
  parseForeignAttestation,
  signForeignAttestation,
  verifyForeignAttestation,
} from "./foreign.ts";
export {
  artefactDigest,
  attestationPath,
  ATTESTATIONS_DIR,
  byArtefactPath,
  LOG_FILE,
  signaturePath,
  tipsPath,
} from "./layout.ts";
export {
  type ByteSource,
  chunksOf,
  LineFramer,
  type LineSink,
  type StreamedLine,
  streamLines,
  type StreamLinesOptions,
} from "./line_stream.ts";
export {
  buildMergeEntry,
  chooseMergeWinner,
  type MergeCandidate,
  type MergeEntryOptions,
  type MergePolicy,
  parseMergePolicy,
} from "./merge.ts";
export {
  type AnalyzedEntry,
  applyToTipSet,
  type Fork,
  LineageAnalyzer,
  parseTipSet,
  renderTipSet,
  type SplitHead,
  type TipSet,
} from "./tips.ts";
export {
  type FailureReceipt,
  parseReceipt,
  RECEIPT_SCHEMA,
  receiptBytes,
  receiptContentHash,
  receiptRelativePath,
  RECEIPTS_DIR,
} from "./receipt.ts";
export {
  sealSpineEntry,
  SPINE_DOMAIN_TAG,
  SPINE_FILE,
  SPINE_HEAD_FILE,
  SPINE_VERSION,
  type SpineEntry,
  spineEntryHash,
  type SpineFields,
  spineHeadBytes,
  spineKey,
  type SpineProblem,
  type SpineReport,
  spineRowBytes,
  verifySpine,
} from "./spine.ts";
