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
export { ATTACH_EVENT, attestAttachment, installIdSig, worktreeIdOf } from "./attest.ts";
export { composeForChannel, copyPathOf, outcomeBlock } from "./delivery.ts";
export {
  AttachmentChainUnverified,
  AttachmentError,
  AttachmentNotAttested,
  AttachmentProblemsError,
  AttachmentSpawnPathError,
  WorktreeAccessDenied,
} from "./errors.ts";
export {
  adaptersTakingDocument,
  adaptersTakingImage,
  attachmentKinds,
  checkAdapterTakesImage,
  checkAdapterTakesMedia,
  checkAttachmentCount,
  MAX_SOURCE_BYTES,
  seatDescriptor,
} from "./limits.ts";

export { AttachmentResolver } from "./resolver.ts";
export { type AttachmentGateInput, RunAttachments } from "./run_attachments.ts";
export { type SpawnInfo } from "./spawn_provider.ts";
export { codePointLength, screenAttachment } from "./screen.ts";
export { collectPeriodAttachments, exportRunAttachments } from "./export.ts";
export { listFolder, MAX_LISTING_ENTRIES } from "./folder.ts";
export { renderNotebook } from "./notebook.ts";
export { sniffBytes } from "./sniff.ts";
export { checkReadable, locateSource, readSource } from "./source.ts";
export { refuseNonDirectSpawn, type SpawnPath } from "./spawn_path.ts";
export { parseAttachmentSpec, rangeText } from "./spec.ts";
export { composePrompt, encodeAttachmentBlock, numberLines, type WireAttachment } from "./wire.ts";
export { checkProjectCas, repairProjectCas } from "./cas_sources.ts";
