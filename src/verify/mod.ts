/**
 * The verifier library: the lineage gate and its input readers, the compliance pack's
 * verification (a defensive ZIP reader that never extracts; the format itself is
 * `src/pack_format`, shared with the builder), `chain`/`forks` over a
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
export { checkPackFleetEvents } from "./fleet_events.ts";
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

export { type PackVerifyResult, verifyPack } from "./pack.ts";
export { sidecarReader } from "./_sidecars.ts";
export { PACK_LIMITS, packZipLimits } from "./pack_limits.ts";
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
