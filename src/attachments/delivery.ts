// How a spawn's attachments reach its CLI (ATTACHMENTS.md "Delivery"). The FORMATS.md §7 wire
// block stays the attested record; an image travels in it as base64 only on the `prompt-text`
// channel. On `content-block` (claude) the prompt keeps a marker block and the bytes go as an
// image block of the user message; on `file-reference` (gemini, qwen) the marker block names a
// copy in the worktree with `@path`, which the CLI reads and sends as inline data; on
// `file-argument` (codex, opencode) the CLI's own flag attaches that copy. Text is
// inlined for every CLI. After the blocks, the outcome of every declared attachment is listed
// (`attached`, `partial`, `unchanged`, `not_attached` with the reason), so an agent knows what
// it was not given and why.
import type { AttachmentChannel, PromptMedia } from "../adapters/mod.ts";
import type { AttachmentOutcome } from "./record.ts";
import { encodeAttachmentBlock, type WireAttachment } from "./wire.ts";

/** Folder inside the worktree of the copies `@path` CLIs read (git never sees `.sdd/runtime/`). */
export const ATTACHMENT_COPY_DIR = ".sdd/runtime/attachments";

/** A prompt ready for one CLI: its text and the bytes its own channel carries. */
export interface ComposedPrompt {
  /** The prompt text. */
  prompt: string;
  /** Bytes for the CLI's channel (empty on `prompt-text`). */
  media: PromptMedia[];
}

/** One declared attachment's outcome, as the agent is told it. */
export interface OutcomeLine {
  /** Path (or name) as declared. */
  path: string;
  /** What became of it. */
  outcome: AttachmentOutcome;
  /** Why (partial, not attached, unchanged), or null. */
  reason: string | null;
}

/** How a spawn's attachments are composed. */
export interface ComposeOptions {
  /** The CLI's channel for image bytes (text is always inlined). */
  channel: AttachmentChannel;
  /** The outcome of every declaration of the task, in declaration order (none: no list). */
  outcomes?: readonly OutcomeLine[];
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  "image/png": "png",
  "image/jpeg": "jpg",
  "image/gif": "gif",
  "image/webp": "webp",
  "application/pdf": "pdf",
};

/** The worktree-relative path of an attachment's copy: `.sdd/runtime/attachments/<sha256>.<ext>`. */
export function copyPathOf(wire: Pick<WireAttachment, "mime" | "sha256">): string {
  return `${ATTACHMENT_COPY_DIR}/${wire.sha256}.${EXTENSIONS[wire.mime] ?? "bin"}`;
}

function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/** Text of one line: control characters (a newline in a name) cannot start a new prompt line. */
function oneLine(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, "?");
}

/** The marker block of an image that travels on the CLI's own channel. */
function markerBlock(wire: WireAttachment, channel: AttachmentChannel): string {
  const attrs = [`mime="${attribute(wire.mime)}"`, `sha256="${wire.sha256}"`];
  attrs.push(`delivery="${channel}"`);
  let body = "[attached to this message as a content block]";
  if (channel !== "content-block") {
    const path = copyPathOf(wire);
    attrs.push(`file="${attribute(path)}"`);
    body = channel === "file-reference" ? `@${path}` : `[attached to this message: ${path}]`;
  }
  return `<attachment ${attrs.join(" ")}>\n${body}\n</attachment>\n`;
}

/** The list of every declared attachment's outcome (FORMATS.md §7). */
export function outcomeBlock(outcomes: readonly OutcomeLine[]): string {
  const lines = outcomes.map((o) =>
    `- ${oneLine(o.path)}: ${o.outcome}${o.reason ? ` (${oneLine(o.reason)})` : ""}`
  );
  return `<attachment-outcomes>\n${lines.join("\n")}\n</attachment-outcomes>\n`;
}

/**
 * The prompt of one spawn for its CLI's channel: a block per attachment in declaration order
 * (text inlined; images inlined as base64 on `prompt-text`, else a marker and the bytes as
 * media), then the outcome list, then the body.
 */
export function composeForChannel(
  wires: readonly WireAttachment[],
  body: string,
  options: ComposeOptions,
): ComposedPrompt {
  const blocks: string[] = [];
  const media: PromptMedia[] = [];
  for (const wire of wires) {
    const travels = !wire.mime.startsWith("text/") && options.channel !== "prompt-text";
    if (!travels) {
      blocks.push(encodeAttachmentBlock(wire));
      continue;
    }
    blocks.push(markerBlock(wire, options.channel));
    media.push({
      mime: wire.mime,
      sha256: wire.sha256,
      bytes: wire.bytes,
      ...(options.channel !== "content-block" ? { path: copyPathOf(wire) } : {}),
    });
  }
  const outcomes = options.outcomes ?? [];
  if (outcomes.length > 0) blocks.push(outcomeBlock(outcomes));
  if (blocks.length === 0) return { prompt: body, media };
  return { prompt: blocks.join("\n") + "\n" + body, media };
}
