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
  externalCheckpoint,
  openDirectoryGateInput,
  readAttestationDirectory,
  readCardDirectory,
} from "./directory.ts";
export { checkpointDocumentBytes, verifyCheckpointConsistency } from "./consistency.ts";
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
  type GateCheckpointReport,
  type GateResult,
} from "./types.ts";
export { gateResultToJson, gateVerdict } from "./report.ts";
export { openFileBytes } from "./file_bytes.ts";

export {
  article12LogFigures,
  article12Mismatches,
  type LogFacts,
  LogFactsCollector,
} from "./log_facts.ts";
export { type PackVerifyResult, verifyPack } from "./pack.ts";
export { sidecarReader } from "./_sidecars.ts";
export {
  attachmentMemberName,
  attachmentMemberParts,
  attestationMemberName,
  cardMemberName,
  checkManifestBytes,
  csvHeader,
  csvRow,
  isoOfNs,
  manifestOutputHash,
  normalizeFingerprint,
  operatorFingerprint,
  PACK_CHECKPOINT_MEMBER,
  PACK_FORMAT_VERSION,
  PACK_INCLUSION_MEMBER,
  PACK_LIMITS,
  PACK_MEMBERS,
  PACK_SCHEMA,
  packMemberKind,
  type PackWindow,
  packWindow,
  packZipLimits,
  parsePackManifest,
  signatureMemberName,
  utcDay,
} from "./pack_format.ts";
export { foreignLine, trustedIssuerKeys } from "./trust.ts";
export { verifyAttachmentsDir } from "./attachments_dir.ts";
export { runVerifyCli } from "./verify_cli.ts";
export {
  memberNameProblem,
  memoryBytes,
  readZipDirectory,
  readZipMember,
  streamZipMember,
  type ZipLimits,
  ZipMemberError,
} from "./zip_reader.ts";
