/**
 * Attachments: files handed to agents with their prompt — images for multimodal adapters, text
 * and line-range excerpts for all — sniffed by content, encoded in one wire format.
 *
 * @module
 */
export { AttachmentError } from "./errors.ts";
export { sniffBytes, type SniffedKind } from "./sniff.ts";
export { type AttachmentSpec, parseAttachmentSpec } from "./spec.ts";
export { composePrompt, encodeAttachmentBlock, numberLines, type WireAttachment } from "./wire.ts";
