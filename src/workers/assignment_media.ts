/**
 * Attachment bytes on the worker wire (ATTACHMENTS.md "Delivery"): the orchestrator encodes an
 * ExecutionRequest's `media` into an Assignment's `media` (base64 beside the attested digest);
 * the worker decodes it and checks every item against its digest before any agent sees it, so
 * bytes altered on the way never reach a model under the attested digest.
 */
import type { PromptMedia } from "../adapters/mod.ts";
import { fromBase64, toBase64 } from "../canonical/mod.ts";
import { sha256Hex } from "../crypto/mod.ts";
import { BernsteinError } from "../errors/mod.ts";
import type { Assignment } from "./protocol.ts";

/** The Assignment form of a request's media (undefined when there is none). */
export function encodeAssignmentMedia(
  media: readonly PromptMedia[] | undefined,
): Assignment["media"] {
  if (media === undefined || media.length === 0) return undefined;
  return media.map((m) => ({
    mime: m.mime,
    sha256: m.sha256,
    base64: toBase64(m.bytes),
    ...(m.path !== undefined ? { path: m.path } : {}),
  }));
}

/**
 * An assignment's media as bytes, each checked against the digest the orchestrator attested
 * (`worker.media_digest` when one does not match or is not base64).
 */
export function decodeAssignmentMedia(
  a: Pick<Assignment, "session" | "media">,
): PromptMedia[] | undefined {
  if (a.media === undefined) return undefined;
  return a.media.map((m, i) => {
    let bytes: Uint8Array;
    try {
      bytes = fromBase64(m.base64);
    } catch {
      bytes = new Uint8Array();
    }
    if (sha256Hex(bytes) !== m.sha256) {
      throw new BernsteinError(
        "worker.media_digest",
        `assignment ${a.session}: media[${i}] (${m.mime}) does not hash to ${m.sha256}`,
      );
    }
    return {
      mime: m.mime,
      sha256: m.sha256,
      bytes,
      ...(m.path !== undefined ? { path: m.path } : {}),
    };
  });
}
