/** What the bytes of a file are, decided from the bytes (never the extension). */
export type SniffedKind =
  | { kind: "image"; mime: "image/png" | "image/jpeg" | "image/gif" | "image/webp" }
  | { kind: "document"; mime: "application/pdf" }
  | { kind: "text"; mime: "text/plain" }
  | { kind: "binary"; mime: "application/octet-stream" };

function startsWith(bytes: Uint8Array, prefix: readonly number[], at = 0): boolean {
  if (bytes.length < at + prefix.length) return false;
  return prefix.every((b, i) => bytes[at + i] === b);
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Sniffs bytes: PNG, JPEG, GIF and WebP by their magic numbers, PDF by `%PDF-`; text when the
 * bytes are valid UTF-8 without NUL; anything else is binary.
 */
export function sniffBytes(bytes: Uint8Array): SniffedKind {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) {
    return { kind: "image", mime: "image/png" };
  }
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return { kind: "image", mime: "image/jpeg" };
  if (
    startsWith(bytes, [0x47, 0x49, 0x46, 0x38]) && (bytes[4] === 0x37 || bytes[4] === 0x39) &&
    bytes[5] === 0x61
  ) {
    return { kind: "image", mime: "image/gif" };
  }
  if (
    startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes, [0x57, 0x45, 0x42, 0x50], 8)
  ) {
    return { kind: "image", mime: "image/webp" };
  }
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
