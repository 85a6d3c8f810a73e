/**
 * Attachments: files handed to agents with their prompt — images for multimodal adapters, text
 * and line-range excerpts for all — sniffed by content, screened against limits and the path
 * policy, encoded in one wire format (FORMATS.md §7), stored in CAS and attested in the audit
 * chain per worker (`multimodal.attach`), and resolved back only for the worktree they were
 * attested to.
 *
 * @example
 * ```ts ignore
 * const attachments = await RunAttachments.fromCommandLine(["design.png", "src/app.ts:40-80"], {
 *   cwd: Deno.cwd(),
 *   warn: (w) => console.error(w.message),
 * });
 * // executeRun(options, { attachmentGate: (i) => attachments.gate(i),
 * //                       attachments: (p) => attachments.provider(p) })
 * ```
 *
 * @module
 */
export {
  ATTACH_EVENT,
  attachEventDetails,
  attestAttachment,
  type AttestTarget,
  type Delivery,
  installIdSig,
  readInstallIdSig,
  worktreeIdOf,
} from "./attest.ts";
export {
  ATTACHMENT_COPY_DIR,
  type ComposedPrompt,
  composeForChannel,
  type ComposeOptions,
  copyPathOf,
  outcomeBlock,
  type OutcomeLine,
} from "./delivery.ts";
export {
  AttachmentCapabilityError,
  AttachmentChainUnverified,
  AttachmentError,
  AttachmentNotAttested,
  AttachmentProblemsError,
  AttachmentSpawnPathError,
  AttachmentUnreadableError,
  WorktreeAccessDenied,
} from "./errors.ts";
export {
  adaptersTakingDocument,
  adaptersTakingImage,
  attachmentKinds,
  checkAdapterTakesDocument,
  checkAdapterTakesImage,
  checkAdapterTakesMedia,
  checkAttachmentCount,
  formatSize,
  type ImageDestination,
  type ImageFacts,
  MAX_ATTACHMENTS,
  MAX_SOURCE_BYTES,
  MAX_TEXT_CHARS,
  seatDescriptor,
} from "./limits.ts";
export {
  type AttachmentOutcome,
  type AttachmentRow,
  loadRecord,
  recordPath,
  type RunAttachmentRecord,
  type RunWideEntry,
  type SpawnEntry,
} from "./record.ts";
export {
  type AttachEvent,
  AttachmentResolver,
  type AttachmentResolverOptions,
  type PinOptions,
  type ResolvedAttachment,
} from "./resolver.ts";
export { type AttachmentGateInput, RunAttachments } from "./run_attachments.ts";
export {
  type AttachmentConfig,
  type AttachmentProject,
  type AttachmentProviderParts,
  SpawnAttachmentProvider,
  type SpawnAttachmentSet,
  type SpawnInfo,
} from "./spawn_provider.ts";
export {
  type AttachmentKind,
  codePointLength,
  screenAttachment,
  type Screened,
  type ScreenOptions,
} from "./screen.ts";
export {
  collectPeriodAttachments,
  EXPORT_KIND,
  type ExportOptions,
  exportRunAttachments,
  type ExportSummary,
} from "./export.ts";
export { type FolderListing, listFolder, MAX_LISTING_ENTRIES } from "./folder.ts";
export { renderNotebook } from "./notebook.ts";
export { sniffBytes, type SniffedKind } from "./sniff.ts";
export {
  checkReadable,
  DEFAULT_DENY,
  type LocateOptions,
  locateSource,
  readSource,
  type SourceDecision,
} from "./source.ts";
export {
  ATTACHMENT_SPAWN_PATHS,
  DIRECT_SPAWN,
  refuseNonDirectSpawn,
  type SpawnPath,
} from "./spawn_path.ts";
export { type AttachmentSpec, parseAttachmentSpec, rangeText } from "./spec.ts";
export { composePrompt, encodeAttachmentBlock, numberLines, type WireAttachment } from "./wire.ts";
export {
  type BlobReference,
  type BlobRepair,
  type BlobSource,
  type CasReferences,
  checkProjectCas,
  collectCasReferences,
  type ProjectCasReport,
  recoverBlob,
  type RecoveredBlob,
  repairProjectCas,
} from "./cas_sources.ts";
