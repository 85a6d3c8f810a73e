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
export { artefactKeyProblem, checkArtefactKey } from "./artefact_key.ts";
export {
  type AgentCard,
  AgentCardSet,
  agentDirName,
  cardLayoutOf,
  kidForPublicKey,
  makeAgentCard,
  parseAgentCard,
  type ParsedAgentCard,
  renderAgentCard,
} from "./card.ts";
export { randomSlotMix, slotOfPrefix } from "./_digest_slot.ts";
export { digestInto, DigestTable, digestText, hexDigestInto } from "./digest_table.ts";
export {
  type ArtefactKind,
  computeOperatorHmac,
  entryBytes,
  type EntryField,
  entryHash,
  entryHashOfBytes,
  entryToJson,
  isEntryHash,
  type LineageEntry,
  operatorHmacInput,
  parseEntry,
  sealEntry,
  type TrustClass,
} from "./entry.ts";
export { plainEntryOfLine } from "./entry_line.ts";
export { AgentCardError, LineageConflictError, LineageEntryError } from "./errors.ts";
export {
  type ForeignAttestationResult,
  parseForeignAttestation,
  signForeignAttestation,
  verifyForeignAttestation,
} from "./foreign.ts";
export {
  artefactDigest,
  attestationPath,
  byArtefactPath,
  LOG_FILE,
  signaturePath,
  tipsPath,
} from "./layout.ts";
export { type ByteSource, chunksOf, LineFramer, streamLines } from "./line_stream.ts";
export {
  buildMergeEntry,
  chooseMergeWinner,
  type MergeCandidate,
  type MergePolicy,
  parseMergePolicy,
} from "./merge.ts";
export {
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
  SPINE_FILE,
  SPINE_HEAD_FILE,
  type SpineEntry,
  spineEntryHash,
  type SpineFields,
  spineHeadBytes,
  spineKey,
  type SpineProblem,
  spineRowBytes,
  verifySpine,
} from "./spine.ts";
