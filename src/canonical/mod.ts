/**
 * Canonical JSON: the one serializer for every hashed, signed or HMAC'd record (FORMATS.md §1),
 * with a strict, BigInt-safe parser and the byte-binding check for JSONL records.
 *
 * @example
 * ```ts
 * import { canonicalize, parseCanonicalLine } from "./mod.ts";
 * const line = new TextEncoder().encode(canonicalize({ a: 1 }, "canon"));
 * parseCanonicalLine(line, "canon"); // { ok: true, value: { a: 1 } }
 * ```
 *
 * @module
 */
export { JsonParseError } from "./errors.ts";

export { decodeUtf8Strict, parseJson, parseJsonBytes } from "./parse.ts";
export { invalidUtf8Offset } from "./utf8.ts";
export {
  canonicalBytes,
  canonicalize,
  canonicalObjectSpans,
  compareCodePoints,
} from "./serialize.ts";
export { bytesEqual, parseCanonicalLine, splitLines } from "./lines.ts";
export {
  type CanonicalProfile,
  isJsonObject,
  JsonFloat,
  jsonFloat,
  type JsonObject,
  type JsonShaped,
  type JsonValue,
  jsonValueOf,
} from "./value.ts";
export {
  type FieldChecks,
  fieldProblem,
  hasFields,
  isSafeInteger,
  isString,
  isStringRecord,
} from "./shape.ts";
export {
  concatBytes,
  fromBase64,
  fromBase64Url,
  fromHex,
  toBase64,
  toBase64Url,
  toHex,
} from "./encoding.ts";
