/**
 * Where UTF-8 goes wrong: the byte offset of the first invalid sequence, so a refused file can
 * say exactly where (a decoder would silently turn it into U+FFFD).
 */

const strict = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Second-byte range of a lead byte that restricts it (overlongs, surrogates, > U+10FFFF). */
function secondByteRange(lead: number): [number, number] {
  if (lead === 0xe0) return [0xa0, 0xbf];
  if (lead === 0xed) return [0x80, 0x9f];
  if (lead === 0xf0) return [0x90, 0xbf];
  if (lead === 0xf4) return [0x80, 0x8f];
  return [0x80, 0xbf];
}

function continuationCount(lead: number): number | undefined {
  if (lead >= 0xc2 && lead <= 0xdf) return 1;
  if (lead >= 0xe0 && lead <= 0xef) return 2;
  if (lead >= 0xf0 && lead <= 0xf4) return 3;
  return undefined;
}

/**
 * The offset of the first byte of the first invalid UTF-8 sequence, or undefined when all of
 * `bytes` is valid UTF-8. Linear.
 *
 * @example
 * ```ts
 * invalidUtf8Offset(new Uint8Array([0x61, 0xff])); // 1
 * ```
 */
export function invalidUtf8Offset(bytes: Uint8Array): number | undefined {
  try {
    strict.decode(bytes);
    return undefined;
  } catch {
    // Find where, below.
  }
  let i = 0;
  while (i < bytes.length) {
    const lead = bytes[i];
    if (lead < 0x80) {
      i++;
      continue;
    }
    const need = continuationCount(lead);
    if (need === undefined || i + need >= bytes.length) return i;
    const [lo, hi] = secondByteRange(lead);
    if (bytes[i + 1] < lo || bytes[i + 1] > hi) return i;
    for (let k = 2; k <= need; k++) {
      if (bytes[i + k] < 0x80 || bytes[i + k] > 0xbf) return i;
    }
    i += need + 1;
  }
  return undefined;
}
