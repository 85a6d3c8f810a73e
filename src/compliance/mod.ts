/**
 * The compliance pack builder (FORMATS.md §5), pure: the window of the lineage log, the
 * agent cards it needs, Article 12 facts and audit cross-links, the README and the auditor's
 * guide, the sealed manifest and the reproducible ZIP. The file system side (reading `.sdd/`,
 * the operator signing key, writing the ZIP) is `src/compliance/project/`; the pack format is
 * `src/pack_format/` (shared with the verifier) and its verification `src/verify/`, so the
 * read-only verifier never loads the builder.
 *
 * @example
 * ```ts ignore
 * const pack = buildPack({ org, since, until, builtAt: null, builder, entries, externalParents,
 *   cards, article12, operatorPublicKey: signer.publicKey }, signer);
 * pack.zip; // same inputs, same bytes
 * ```
 *
 * @module
 */
export { type Article12Input, type AuditCrossLinks, buildArticle12 } from "./article12.ts";
export { AuditLinker } from "./audit_links.ts";
export {
  agentIsolationBlock,
  AgentIsolationCollector,
  type AgentIsolationFacts,
} from "./agent_isolation.ts";
export { resolveBuildTime } from "./build_time.ts";
export { selectCards } from "./cards.ts";
export { renderReadme } from "./documents.ts";
export { CompliancePackError } from "./errors.ts";
export {
  buildPack,
  CheckpointedWindow,
  type OperatorSigner,
  type PackAttestation,
  type PackCard,
  type PackCheckpoint,
  packCheckpointMembers,
  type PackContent,
  type PackEntry,
  type PackHeader,
  renderPackMembers,
  sealPack,
  windowFacts,
  writePack,
} from "./pack.ts";
export { type CollectedWindow, WindowMembers } from "./window_members.ts";
export {
  compressMember,
  inThreadDeflate,
  type MembersDeflate,
  offThreadDeflate,
} from "./_off_thread_deflate.ts";
export {
  type SkippedLine,
  type WindowEntry,
  type WindowSelection,
  WindowSelector,
} from "./window.ts";
export {
  loadNativeCrc32,
  MemberCompressor,
  MemorySink,
  ONE_SHOT_BYTES,
  PACK_DEFLATE_LEVEL,
  prepareMember,
  zipMembers,
  type ZipSink,
  ZipStreamWriter,
} from "./zip_writer.ts";
