// The attachment wire format in a prompt (FORMATS.md §7): one marked block per attachment at
// the prompt's head, text line-numbered, images as base64.

import { toBase64 } from "../canonical/mod.ts";

/** One attachment ready to be put into a prompt. */
export interface WireAttachment {
  /** MIME type decided by sniffing. */
  mime: string;
  /** Hex SHA-256 of `bytes`: what CAS stores and the audit event attests. */
  sha256: string;
  /** The exact bytes that are encoded. */
  bytes: Uint8Array;
  /** For text: the repo-relative path shown to the agent. */
  path?: string;
  /** For text excerpts: the first line number of `bytes` in the source file. */
  firstLine?: number;
}

function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/** Text rendered with right-aligned line numbers (`  40 | code`), starting at `firstLine`. */
export function numberLines(text: string, firstLine = 1): string {
  const lines = text.split("\n");
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop();
  const width = String(firstLine + lines.length - 1).length;
  return lines.map((line, i) => `${String(firstLine + i).padStart(width)} | ${line}`).join("\n");
}

/**
 * One attachment block (FORMATS.md §7): images as standard base64 of the bytes, text
 * line-numbered, both in the same marked form. Identical for every adapter.
 */
export function encodeAttachmentBlock(a: WireAttachment): string {
  const attrs = [`mime="${attribute(a.mime)}"`, `sha256="${a.sha256}"`];
  let body: string;
  if (a.mime.startsWith("text/")) {
    if (a.path !== undefined) attrs.push(`path="${attribute(a.path)}"`);
    const first = a.firstLine ?? 1;
    const text = new TextDecoder().decode(a.bytes);
    const count = text === "" ? 0 : text.replace(/\n$/, "").split("\n").length;
    if (a.firstLine !== undefined) attrs.push(`lines="${first}-${first + Math.max(count, 1) - 1}"`);
    body = numberLines(text, first);
  } else {
    body = toBase64(a.bytes);
  }
  return `<attachment ${attrs.join(" ")}>\n${body}\n</attachment>\n`;
}

/** The prompt with every attachment block at its head, in declaration order (FORMATS.md §7). */
export function composePrompt(attachments: readonly WireAttachment[], body: string): string {
  if (attachments.length === 0) return body;
  return attachments.map(encodeAttachmentBlock).join("\n") + "\n" + body;
}
