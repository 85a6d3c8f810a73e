/**
 * The verifier library: the lineage gate and its input readers. Used by `bernstein lineage
 * gate` and by the read-only `bernstein-verify`, so it imports only the pure modules
 * (`canonical`, `crypto`, `errors`, `meta`, `lineage/mod.ts`) and never writes, spawns,
 * reads the environment or opens the network.
 *
 * @example
 * ```ts
 * const opened = await openDirectoryGateInput({ logPath: ".sdd/lineage/log.jsonl", cardsDir: ".sdd/agents" });
 * const result = await runLineageGate(opened!.input);
 * console.log(gateVerdict(result)); // "PASS" or "FAIL (3 issues)"
 * ```
 *
 * @module
 */
export {
  type DirectoryGateInput,
  type DirectoryGateOptions,
  openDirectoryGateInput,
  readCardDirectory,
} from "./directory.ts";
export { runLineageGate } from "./gate.ts";
export {
  type CardFile,
  type ForeignAttestationInput,
  type ForeignAttestationReport,
  GATE_ISSUE_KINDS,
  type GateInput,
  type GateIssue,
  type GateIssueKind,
  type GateOptions,
  type GateResult,
  type SignatureFetch,
  type SignatureLookup,
} from "./types.ts";
export { gateResultToJson, gateVerdict } from "./report.ts";
