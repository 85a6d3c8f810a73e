// Canonical JSON serialization in the project's profiles (docs/FORMATS.md §1) and checks that
// bytes are canonical.

import { CanonicalEncodeError } from "./errors.ts";
import { pythonFloatRepr } from "./float_repr.ts";
import {
  type CanonicalProfile,
  JsonFloat,
  type JsonShaped,
  type JsonValue,
  jsonValueOf,
} from "./value.ts";

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  "\\": "\\\\",
  "\b": "\\b",
  "\f": "\\f",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
};

// Characters that need work in each mode; surrogates are included so lone ones are caught.
// deno-lint-ignore no-control-regex -- control characters are exactly what must be escaped
const NEEDS_ESCAPE_UTF8 = /["\\\u0000-\u001f\ud800-\udfff]/;
const NEEDS_ESCAPE_ASCII = /["\\]|[^\u0020-\u007e]/;

function hex4(code: number): string {
  return "\\u" + code.toString(16).padStart(4, "0");
}

function quote(text: string, ascii: boolean): string {
  if (!(ascii ? NEEDS_ESCAPE_ASCII : NEEDS_ESCAPE_UTF8).test(text)) return `"${text}"`;
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    const code = text.charCodeAt(i);
    const short = SHORT_ESCAPES[ch];
    if (short !== undefined) {
      out += short;
    } else if (code < 0x20) {
      out += hex4(code);
    } else if (code >= 0xd800 && code <= 0xdfff) {
      const next = text.charCodeAt(i + 1);
      if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) {
        // ASCII profiles escape it as Python's ensure_ascii does; UTF-8 has no form for it.
        if (ascii) {
          out += hex4(code);
          continue;
        }
        throw new CanonicalEncodeError(
          `string has a lone surrogate U+${code.toString(16).toUpperCase()} at index ${i}`,
        );
      }
      out += ascii ? hex4(code) + hex4(next) : ch + text[i + 1];
      i++;
    } else if (ascii && code > 0x7e) {
      out += hex4(code);
    } else {
      out += ch;
    }
  }
  return out + '"';
}

/** Compares two strings by Unicode code point (Python's `sorted` on `str`). */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code-point order only when one side is a surrogate
    // (astral) and the other is U+E000..U+FFFF.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys && (xs ? y >= 0xe000 : x >= 0xe000)) return xs ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

interface Style {
  ascii: boolean;
  comma: string;
  colon: string;
}

const STYLES: Readonly<Record<CanonicalProfile, Style>> = {
  "canon": { ascii: false, comma: ",", colon: ":" },
  "canon-ascii": { ascii: true, comma: ",", colon: ":" },
  "py-default": { ascii: true, comma: ", ", colon: ": " },
};

const MAX_DEPTH = 512;

function write(value: JsonValue, style: Style, depth: number): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "boolean":
      return value ? "true" : "false";
    case "string":
      return quote(value, style.ascii);
    case "bigint":
      return value.toString();
    case "number":
      // Below 2^53 String() prints the same digits as BigInt (no exponent, -0 as "0") and is
      // much cheaper; beyond, only BigInt prints every digit of the double.
      if (Number.isSafeInteger(value)) return value === 0 ? "0" : String(value);
      if (Number.isInteger(value)) return BigInt(value).toString();
      return pythonFloatRepr(value);
    case "object":
      break;
    default:
      throw new CanonicalEncodeError(`a value of type ${typeof value} has no JSON form`);
  }
  if (depth > MAX_DEPTH) throw new CanonicalEncodeError(`nesting deeper than ${MAX_DEPTH}`);
  if (value instanceof JsonFloat) return pythonFloatRepr(value.value);
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    const parts: string[] = [];
    for (const item of value) {
      if (item === undefined) throw new CanonicalEncodeError("undefined inside an array");
      parts.push(write(item, style, depth + 1));
    }
    return "[" + parts.join(style.comma) + "]";
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    throw new CanonicalEncodeError(
      `an object of class ${proto?.constructor?.name ?? "unknown"} has no JSON form`,
    );
  }
  const keys = Object.keys(value).filter((k) => value[k] !== undefined);
  // Parsed canonical records arrive sorted already: check before sorting.
  for (let i = 1; i < keys.length; i++) {
    if (compareCodePoints(keys[i - 1], keys[i]) > 0) {
      keys.sort(compareCodePoints);
      break;
    }
  }
  if (keys.length === 0) return "{}";
  const parts: string[] = [];
  for (const key of keys) {
    parts.push(
      quote(key, style.ascii) + style.colon + write(value[key] as JsonValue, style, depth + 1),
    );
  }
  return "{" + parts.join(style.comma) + "}";
}

/**
 * Serialises a value with one of the canonical profiles of FORMATS.md §1 (what CPython's
 * `json.dumps(v, sort_keys=True, separators=…, ensure_ascii=…)` prints).
 *
 * @example
 * ```ts
 * canonicalize({ b: 1, a: "é" }, "canon"); // '{"a":"é","b":1}'
 * canonicalize({ b: 1, a: "é" }, "py-default"); // '{"a": "\\u00e9", "b": 1}'
 * ```
 */
export function canonicalize<T>(value: T & JsonShaped<T>, profile: CanonicalProfile): string {
  return write(jsonValueOf(value), STYLES[profile], 0);
}

const encoder = new TextEncoder();

/** The UTF-8 bytes of {@linkcode canonicalize}. */
export function canonicalBytes<T>(
  value: T & JsonShaped<T>,
  profile: CanonicalProfile,
): Uint8Array {
  return encoder.encode(canonicalize(value, profile));
}

/**
 * Whether `text` starting at `at` is exactly what {@linkcode canonicalize} prints for `value`
 * there; returns the position after it, or -1. Compares in place, building no output string:
 * checking a parsed record this way allocates a fraction of what re-serialising does. Any
 * value `canonicalize` would refuse gives -1.
 */
function matchAt(value: JsonValue, text: string, at: number, style: Style, depth: number): number {
  if (value === null) return text.startsWith("null", at) ? at + 4 : -1;
  switch (typeof value) {
    case "boolean": {
      const word = value ? "true" : "false";
      return text.startsWith(word, at) ? at + word.length : -1;
    }
    case "string": {
      if ((style.ascii ? NEEDS_ESCAPE_ASCII : NEEDS_ESCAPE_UTF8).test(value)) {
        let quoted: string;
        try {
          quoted = quote(value, style.ascii);
        } catch {
          return -1;
        }
        return text.startsWith(quoted, at) ? at + quoted.length : -1;
      }
      if (text.charCodeAt(at) !== 0x22 || !text.startsWith(value, at + 1)) return -1;
      const end = at + 1 + value.length;
      return text.charCodeAt(end) === 0x22 ? end + 1 : -1;
    }
    case "bigint":
    case "number": {
      const printed = write(value, style, depth);
      return text.startsWith(printed, at) ? at + printed.length : -1;
    }
    case "object":
      break;
    default:
      return -1;
  }
  if (depth > MAX_DEPTH) return -1;
  if (value instanceof JsonFloat) {
    const printed = pythonFloatRepr(value.value);
    return text.startsWith(printed, at) ? at + printed.length : -1;
  }
  if (Array.isArray(value)) {
    if (text.charCodeAt(at) !== 0x5b) return -1;
    let pos = at + 1;
    for (let i = 0; i < value.length; i++) {
      if (value[i] === undefined) return -1;
      if (i > 0) {
        if (!text.startsWith(style.comma, pos)) return -1;
        pos += style.comma.length;
      }
      pos = matchAt(value[i], text, pos, style, depth + 1);
      if (pos < 0) return -1;
    }
    return text.charCodeAt(pos) === 0x5d ? pos + 1 : -1;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return -1;
  const keys = Object.keys(value).filter((k) => value[k] !== undefined);
  for (let i = 1; i < keys.length; i++) {
    if (compareCodePoints(keys[i - 1], keys[i]) > 0) {
      keys.sort(compareCodePoints);
      break;
    }
  }
  if (text.charCodeAt(at) !== 0x7b) return -1;
  let pos = at + 1;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) {
      if (!text.startsWith(style.comma, pos)) return -1;
      pos += style.comma.length;
    }
    pos = matchAt(keys[i], text, pos, style, depth + 1);
    if (pos < 0 || !text.startsWith(style.colon, pos)) return -1;
    pos = matchAt(value[keys[i]] as JsonValue, text, pos + style.colon.length, style, depth + 1);
    if (pos < 0) return -1;
  }
  return text.charCodeAt(pos) === 0x7d ? pos + 1 : -1;
}

/** True when `canonicalize(value, profile) === text`, decided without building the string. */
export function isCanonicalText(
  value: JsonValue,
  text: string,
  profile: CanonicalProfile,
): boolean {
  return matchAt(value, text, 0, STYLES[profile], 0) === text.length;
}

// The fast path of reading a canonical record: a `JSON.parse` result walked in lockstep with
// its text. JSON.parse rounds integers beyond 2^53 to doubles (a nanosecond timestamp almost
// always), so where the walk meets one it takes the exact integer from the digits in the
// text; the same walk checks that the text is exactly the canonical print of the value.
type Container = Record<string, unknown> | unknown[];

const FAST_MAX_DEPTH = 64;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;

function digitsEnd(text: string, at: number): number {
  let end = text.charCodeAt(at) === MINUS ? at + 1 : at;
  const first = end;
  while (end < text.length) {
    const c = text.charCodeAt(end);
    if (c < ZERO || c > NINE) break;
    end++;
  }
  return end === first ? -1 : end;
}

function parsedAt(
  holder: Container,
  key: string | number,
  text: string,
  at: number,
  style: Style,
  depth: number,
): number {
  const value = (holder as Record<string | number, unknown>)[key];
  if (value === null) return text.startsWith("null", at) ? at + 4 : -1;
  switch (typeof value) {
    case "boolean": {
      const word = value ? "true" : "false";
      return text.startsWith(word, at) ? at + word.length : -1;
    }
    case "string": {
      if ((style.ascii ? NEEDS_ESCAPE_ASCII : NEEDS_ESCAPE_UTF8).test(value)) {
        let quoted: string;
        try {
          quoted = quote(value, style.ascii);
        } catch {
          return -1;
        }
        return text.startsWith(quoted, at) ? at + quoted.length : -1;
      }
      if (text.charCodeAt(at) !== 0x22 || !text.startsWith(value, at + 1)) return -1;
      const end = at + 1 + value.length;
      return text.charCodeAt(end) === 0x22 ? end + 1 : -1;
    }
    case "number": {
      if (Number.isSafeInteger(value)) {
        const printed = value === 0 ? "0" : String(value);
        return text.startsWith(printed, at) ? at + printed.length : -1;
      }
      // Floats print the Python way from a JsonFloat: that is the strict parser's job.
      if (!Number.isInteger(value)) return -1;
      const end = digitsEnd(text, at);
      if (end < 0) return -1;
      const next = text.charCodeAt(end);
      if (next === 0x2e || next === 0x65 || next === 0x45) return -1; // 1.0, 1e18: not here
      const token = text.slice(at, end);
      // The token is the one JSON.parse read for this value (the walk is in lockstep): its
      // exact value replaces the rounded double. It prints back as itself unless it is
      // "-0…" or has leading zeros, which JSON and the comparison below refuse.
      const exact = BigInt(token);
      if (Number(exact) !== value || exact.toString() !== token) return -1;
      (holder as Record<string | number, unknown>)[key] = exact;
      return end;
    }
    case "object":
      break;
    default:
      return -1;
  }
  // Deep values go to the strict parser, whose depth limit then decides.
  if (depth > FAST_MAX_DEPTH) return -1;
  if (Array.isArray(value)) {
    if (text.charCodeAt(at) !== 0x5b) return -1;
    let pos = at + 1;
    for (let i = 0; i < value.length; i++) {
      if (i > 0) {
        if (!text.startsWith(style.comma, pos)) return -1;
        pos += style.comma.length;
      }
      pos = parsedAt(value, i, text, pos, style, depth + 1);
      if (pos < 0) return -1;
    }
    return text.charCodeAt(pos) === 0x5d ? pos + 1 : -1;
  }
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  for (let i = 1; i < keys.length; i++) {
    if (compareCodePoints(keys[i - 1], keys[i]) > 0) {
      keys.sort(compareCodePoints);
      break;
    }
  }
  if (text.charCodeAt(at) !== 0x7b) return -1;
  let pos = at + 1;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) {
      if (!text.startsWith(style.comma, pos)) return -1;
      pos += style.comma.length;
    }
    pos = parsedAt(keys, i, text, pos, style, depth + 1);
    if (pos < 0 || !text.startsWith(style.colon, pos)) return -1;
    pos = parsedAt(object, keys[i], text, pos + style.colon.length, style, depth + 1);
    if (pos < 0) return -1;
  }
  return text.charCodeAt(pos) === 0x7d ? pos + 1 : -1;
}

/**
 * Completes a `JSON.parse(text)` result into what the strict parser returns, provided `text`
 * is exactly its canonical print: integers beyond ±(2^53 − 1) become the BigInt their digits
 * in `text` spell (JSON.parse has rounded them). Returns undefined when the text is not
 * canonical or holds a value only the strict parser reads (a float): then parse strictly.
 * `parsed` is changed in place.
 */
export function completeCanonicalParse(
  parsed: unknown,
  text: string,
  profile: CanonicalProfile,
): JsonValue | undefined {
  const holder = [parsed];
  const end = parsedAt(holder, 0, text, 0, STYLES[profile], 0);
  return end === text.length ? holder[0] as JsonValue : undefined;
}

/** A top-level member of a canonical object: its key and where `"key":value` is in the text. */
export interface MemberSpan {
  /** The key. */
  key: string;
  /** Index of the key's opening quote. */
  start: number;
  /** Index just past the value. */
  end: number;
}

/**
 * {@linkcode completeCanonicalParse} for a top-level object, also saying where each member is
 * in `text` (so a caller can hash the bytes without one member without printing the rest).
 * Undefined when `parsed` is not an object or the text is not its canonical print.
 */
export function canonicalObjectSpans(
  parsed: unknown,
  text: string,
  profile: CanonicalProfile,
): { value: Record<string, JsonValue>; spans: MemberSpan[] } | undefined {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return undefined;
  const style = STYLES[profile];
  const object = parsed as Record<string, unknown>;
  const keys = Object.keys(object);
  for (let i = 1; i < keys.length; i++) {
    if (compareCodePoints(keys[i - 1], keys[i]) > 0) {
      keys.sort(compareCodePoints);
      break;
    }
  }
  if (text.charCodeAt(0) !== 0x7b) return undefined;
  const spans: MemberSpan[] = [];
  let pos = 1;
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) {
      if (!text.startsWith(style.comma, pos)) return undefined;
      pos += style.comma.length;
    }
    const start = pos;
    pos = parsedAt(keys, i, text, pos, style, 1);
    if (pos < 0 || !text.startsWith(style.colon, pos)) return undefined;
    pos = parsedAt(object, keys[i], text, pos + style.colon.length, style, 1);
    if (pos < 0) return undefined;
    spans.push({ key: keys[i], start, end: pos });
  }
  if (text.charCodeAt(pos) !== 0x7d || pos + 1 !== text.length) return undefined;
  return { value: object as Record<string, JsonValue>, spans };
}
