// Splits JSONL bytes into lines (on 0x0A only) and parses one line while checking that it is
// canonical.

import { canonicalize, completeCanonicalParse } from "./serialize.ts";
import { decodeUtf8Strict, parseJson } from "./parse.ts";
import type { CanonicalProfile, JsonValue } from "./value.ts";

/** Byte ranges of the lines of a JSONL buffer, split on 0x0A only. */
export interface SplitLines {
  /** Each line's bytes, without its `\n`. */
  lines: Uint8Array[];
  /** True when the buffer is empty or its last byte is `\n`. */
  endsWithNewline: boolean;
}

/**
 * Splits bytes into lines on `0x0A` only (`\r` stays part of the line, so it is caught as
 * non-canonical). A final fragment without `\n` is returned as the last line.
 */
export function splitLines(bytes: Uint8Array): SplitLines {
  const lines: Uint8Array[] = [];
  let start = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, start);
    if (nl < 0) break;
    lines.push(bytes.subarray(start, nl));
    start = nl + 1;
  }
  if (start < bytes.length) lines.push(bytes.subarray(start));
  return { lines, endsWithNewline: bytes.length === 0 || bytes[bytes.length - 1] === 0x0a };
}

/** Result of {@linkcode parseCanonicalLine}. */
export type CanonicalLineResult =
  | { ok: true; value: JsonValue }
  | { ok: false; reason: "invalid JSON" | "non-canonical line bytes"; detail: string };

/** True when two byte arrays are equal. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * The value of `text` through the native parser when that is provably what the strict parser
 * gives, else undefined. Texts with a backslash are left to the strict parser (it refuses lone
 * surrogate escapes, JSON.parse does not); raw control characters make JSON.parse throw; and
 * duplicate keys, floats, exponents and whitespace all print back differently, so the lockstep
 * comparison ({@linkcode completeCanonicalParse}) sends them to the strict parser too. Integers
 * past 2^53 (every nanosecond timestamp) are taken exactly from their digits in the text.
 */
function fastCanonicalValue(text: string, profile: CanonicalProfile): JsonValue | undefined {
  if (text.includes("\\")) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return completeCanonicalParse(value, text, profile);
}

/**
 * Parses one record line and checks the byte binding: re-serialising the parsed value with
 * `profile` must give back exactly the same bytes.
 */
export function parseCanonicalLine(
  line: Uint8Array,
  profile: CanonicalProfile,
): CanonicalLineResult {
  let text: string;
  let value: JsonValue;
  try {
    text = decodeUtf8Strict(line);
  } catch (error) {
    return { ok: false, reason: "invalid JSON", detail: (error as Error).message };
  }
  // Canonical lines (the common case) parse natively, ~2x faster; anything else gets the
  // strict parser and its precise reasons.
  const fast = fastCanonicalValue(text, profile);
  if (fast !== undefined) return { ok: true, value: fast };
  try {
    // The ASCII profiles write a lone surrogate as an escape (Python's ensure_ascii does);
    // `canon` writes raw UTF-8, where none can exist.
    value = parseJson(text, { loneSurrogates: profile !== "canon" });
  } catch (error) {
    return { ok: false, reason: "invalid JSON", detail: (error as Error).message };
  }
  let again: string;
  try {
    again = canonicalize(value, profile);
  } catch (error) {
    return { ok: false, reason: "non-canonical line bytes", detail: (error as Error).message };
  }
  // Comparing the strictly decoded text is comparing the bytes (UTF-8 is a bijection on
  // valid text), without encoding the re-serialised line again.
  if (again !== text) {
    return {
      ok: false,
      reason: "non-canonical line bytes",
      detail: `re-serialising with the ${profile} profile gives different bytes`,
    };
  }
  return { ok: true, value };
}
