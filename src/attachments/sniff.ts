// Deciding what a file is from its bytes, never its name.
import { type ImageMime, imageMimeOf } from "../plan/mod.ts";

/** What the bytes of a file are, decided from the bytes (never the extension). */
export type SniffedKind =
  | { kind: "image"; mime: ImageMime }
  | { kind: "document"; mime: "application/pdf" }
  | { kind: "text"; mime: "text/plain" }
  | { kind: "binary"; mime: "application/octet-stream" };

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return bytes.length >= prefix.length && prefix.every((b, i) => bytes[i] === b);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Sniffs bytes: PNG, JPEG, GIF and WebP by their magic numbers, PDF by `%PDF-`; text when the
 * bytes are valid UTF-8 without NUL; anything else is binary.
 */
export function sniffBytes(bytes: Uint8Array): SniffedKind {
  const image = imageMimeOf(bytes);
  if (image !== undefined) return { kind: "image", mime: image };
  if (startsWith(bytes, [0x25, 0x50, 0x44, 0x46, 0x2d])) {
    return { kind: "document", mime: "application/pdf" };
  }
  if (bytes.includes(0)) return { kind: "binary", mime: "application/octet-stream" };
  try {
    strictUtf8.decode(bytes);
    return { kind: "text", mime: "text/plain" };
  } catch {
    return { kind: "binary", mime: "application/octet-stream" };
  }
}
