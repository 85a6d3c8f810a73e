// Variable values (pure): the command-line text → a JSON value, its canonical bytes, its
// content hash, and the text a `${var:NAME}` reference renders to.
import {
  canonicalBytes,
  JsonParseError,
  type JsonValue,
  parseJson,
  parseJsonBytes,
  toHex,
} from "../canonical/mod.ts";
import { sha256 } from "../crypto/mod.ts";
import { FleetError } from "./errors.ts";

/**
 * The largest value stored, in canonical bytes (1 MiB). A format limit like the pack's
 * attestation cap: a variable is configuration, not a data store, and every claim that reads
 * it copies it into a prompt.
 */
export const MAX_VALUE_BYTES = 1024 * 1024;

/** A bare word: stored as a string without JSON quotes (`var set mode fast`). */
const BARE_WORD = /^[A-Za-z_][A-Za-z0-9_.:/@+-]*$/;
const JSON_WORDS = new Set(["true", "false", "null"]);

/**
 * Reads a value as given on the command line: JSON, or a bare word (a string). Anything else
 * is `fleet.bad_value` with the parser's reason; a value over {@linkcode MAX_VALUE_BYTES} is
 * `fleet.value_too_large`.
 *
 * @example
 * ```ts
 * parseValueText("5");        // 5
 * parseValueText("fast");     // "fast"
 * parseValueText('{"a":[1]}'); // { a: [1] }
 * ```
 */
export function parseValueText(text: string): JsonValue {
  // Checked before parsing, so a huge argument is refused without building it.
  if (text.length > MAX_VALUE_BYTES) throw tooLarge(new TextEncoder().encode(text).length);
  let value: JsonValue;
  if (BARE_WORD.test(text) && !JSON_WORDS.has(text)) {
    value = text;
  } else {
    try {
      value = parseJson(text);
    } catch (error) {
      const reason = error instanceof JsonParseError ? error.message : String(error);
      throw new FleetError("fleet.bad_value", `value is not JSON: ${reason}`, {
        hint: `a bare word is a string; quote other text as JSON: '"${
          text.slice(0, 20).replaceAll('"', '\\"')
        }"'`,
      });
    }
  }
  valueBytes(value);
  return value;
}

function tooLarge(size: number): FleetError {
  return new FleetError(
    "fleet.value_too_large",
    `value is ${size} bytes; the limit is ${MAX_VALUE_BYTES} bytes (1 MiB)`,
    { hint: "keep large data in the repository and put its path in the variable" },
  );
}

/** The canonical (`canon`) bytes of a value: what is stored and hashed. */
export function valueBytes(value: JsonValue): Uint8Array {
  let bytes: Uint8Array;
  try {
    bytes = canonicalBytes(value, "canon");
  } catch (error) {
    throw new FleetError("fleet.bad_value", `value cannot be stored: ${(error as Error).message}`);
  }
  if (bytes.length > MAX_VALUE_BYTES) throw tooLarge(bytes.length);
  return bytes;
}

/** `sha256:` + hex SHA-256 of canonical bytes. */
export function valueHashOf(bytes: Uint8Array): string {
  return `sha256:${toHex(sha256(bytes))}`;
}

/** The hex digest of a `sha256:<hex>` value hash, or undefined when malformed. */
export function hexOfValueHash(hash: string): string | undefined {
  return /^sha256:([0-9a-f]{64})$/.exec(hash)?.[1];
}

/** Decodes stored canonical bytes (they must re-serialise to themselves). */
export function decodeValue(bytes: Uint8Array): JsonValue {
  return parseJsonBytes(bytes);
}

/** The text a `${var:NAME}` reference becomes: a string as itself, anything else as JSON. */
export function renderValue(value: JsonValue, bytes: Uint8Array): string {
  return typeof value === "string" ? value : new TextDecoder().decode(bytes);
}
