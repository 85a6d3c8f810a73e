/**
 * The verifier library: the lineage gate and its input readers, the compliance pack format and
 * its verification (a defensive ZIP reader that never extracts), `chain`/`forks` over a
 * lineage folder, and the `bernstein-verify` command line. Used by `bernstein lineage
 * gate` and by the read-only `bernstein-verify`, so it imports only the pure modules
 * (`canonical`, `crypto`, `errors`, `meta`, `lineage/mod.ts`) and never writes, spawns,
 * reads the environment or opens the network.
 *
 * @example
 * ```ts ignore
 * const opened = await openDirectoryGateInput({ logPath: ".sdd/lineage/log.jsonl", cardsDir: ".sdd/agents" });
 * const result = await runLineageGate(opened!.input);
 * console.log(gateVerdict(result)); // "PASS" or "FAIL (3 issues)"
 * ```
 *
 * @module
 */
export {
  attestationInput,
  type CheckpointInputOptions,
  type DirectoryGateInput,
  type DirectoryGateOptions,
  externalCheckpoint,
  openDirectoryGateInput,
  readAttestationDirectory,
  readCardDirectory,
  readCheckpointInput,
} from "./directory.ts";
export {
  checkpointDocumentBytes,
  type CheckpointSource,
  type ConsistencyOptions,
  type ConsistencyResult,
  verifyCheckpointConsistency,
} from "./consistency.ts";
export { defaultGateWorkers, runLineageGate } from "./gate.ts";
export {
  checkPackFleetEvents,
  PACK_FLEET_EVENT_TYPES,
  PACK_FLEET_MEMBER,
  type PackFleetEvent,
  packFleetLine,
} from "./fleet_events.ts";
export {
  type CardFile,
  type ForeignAttestationInput,
  type ForeignAttestationReport,
  GATE_ISSUE_KINDS,
  type GateCheckpointInput,
  type GateCheckpointReport,
  type GateInput,
  type GateIssue,
  type GateIssueKind,
  type GateOptions,
  type GateResult,
  type SignatureFetch,
  type SignatureLookup,
} from "./types.ts";
export { gateResultToJson, gateVerdict } from "./report.ts";
export { FileReadError, type OpenedFileBytes, openFileBytes } from "./file_bytes.ts";
export {
  type ChainOptions,
  type LineageDirResult,
  verifyChain,
  verifyForks,
} from "./lineage_dir.ts";
export {
  type AgentFacts,
  type Article12LogFigures,
  article12LogFigures,
  article12Mismatches,
  type LogFacts,
  LogFactsCollector,
} from "./log_facts.ts";
export {
  type PackStats,
  type PackVerifyOptions,
  type PackVerifyResult,
  type VerifyIssue,
  verifyPack,
} from "./pack.ts";
export {
  attachmentMemberName,
  attachmentMemberParts,
  attestationMemberName,
  attestationMemberParts,
  cardMemberName,
  checkManifestBytes,
  CSV_COLUMNS,
  csvHeader,
  csvRow,
  isoOfNs,
  manifestOutputHash,
  memberSegment,
  normalizeFingerprint,
  operatorFingerprint,
  PACK_CHECKPOINT_MEMBER,
  PACK_FORMAT_VERSION,
  PACK_FORMAT_VERSIONS,
  PACK_INCLUSION_MEMBER,
  PACK_LIMITS,
  PACK_MEMBERS,
  PACK_SCHEMA,
  type PackManifest,
  type PackMemberKind,
  packMemberKind,
  type PackWindow,
  packWindow,
  packZipLimits,
  type ParsedManifest,
  parsePackManifest,
  signatureMemberName,
  utcDay,
} from "./pack_format.ts";
export { foreignLine, trustedIssuerKeys } from "./trust.ts";
export {
  type AttachmentsDirResult,
  verifyAttachmentExport,
  verifyAttachmentsDir,
} from "./attachments_dir.ts";
export { runVerifyCli, VERIFY_HELP, type VerifyCliIo } from "./verify_cli.ts";
export {
  memberNameProblem,
  memoryBytes,
  type RandomAccessBytes,
  readZipDirectory,
  readZipMember,
  streamZipMember,
  type ZipDirectory,
  type ZipLimits,
  type ZipMember,
  ZipMemberError,
  type ZipProblem,
  type ZipProblemKind,
} from "./zip_reader.ts";
