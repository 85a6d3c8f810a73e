// Attachment media on each CLI's own channel (capabilities.ts `attachment_channel`): the
// stream-json user message with content blocks that claude reads from stdin, and the worktree
// copies that gemini and qwen read through the `@path` references in the prompt and that codex
// and opencode attach with a flag.
import { toBase64 } from "../canonical/mod.ts";
import { checkRelativePath } from "../io/mod.ts";
import { AdapterError } from "./errors.ts";
import type { InvocationInput, PlannedWorktreeFile, PromptMedia } from "./types.ts";

/** A media item as an Anthropic content block (`image`, or `document` for a PDF). */
function contentBlock(media: PromptMedia): Record<string, unknown> {
  const source = { type: "base64", media_type: media.mime, data: toBase64(media.bytes) };
  return media.mime.startsWith("image/") ? { type: "image", source } : { type: "document", source };
}

/**
 * The one stream-json line (`--input-format stream-json`) of a prompt with media: a user
 * message whose content is the media blocks in declaration order, then the prompt text.
 */
export function streamJsonUserMessage(prompt: string, media: readonly PromptMedia[]): string {
  const content = [...media.map(contentBlock), { type: "text", text: prompt }];
  return JSON.stringify({ type: "user", message: { role: "user", content } }) + "\n";
}

/** Media a build must deliver as content blocks (no worktree copy). */
export function blockMedia(input: InvocationInput): readonly PromptMedia[] {
  return (input.media ?? []).filter((m) => m.path === undefined);
}

/** The worktree copies of `file-reference` and `file-argument` media. */
export function worktreeCopies(input: InvocationInput): PlannedWorktreeFile[] {
  return (input.media ?? []).filter((m) => m.path !== undefined).map((m) => {
    const path = m.path as string;
    checkRelativePath(path, "attachment copy");
    return { path, bytes: m.bytes };
  });
}

/**
 * Refuses media a CLI has no channel for: the orchestrator only hands an adapter media of its
 * own channel, so anything else is a bug that must not silently drop an attachment.
 */
export function refuseMedia(
  adapter: string,
  input: InvocationInput,
  accepts: { blocks?: boolean; files?: boolean },
): void {
  for (const m of input.media ?? []) {
    const ok = m.path === undefined ? accepts.blocks === true : accepts.files === true;
    if (!ok) {
      throw new AdapterError(
        "adapter.media_channel",
        `${adapter} cannot take ${m.mime} attachment ${m.sha256.slice(0, 12)}… as ${
          m.path === undefined ? "a content block" : `a file reference (${m.path})`
        }`,
      );
    }
  }
}
