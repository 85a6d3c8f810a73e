// A strict JSON parser (RFC 8259): exact integers of any size and integral floats kept;
// duplicate keys, lone surrogates, NaN and invalid UTF-8 refused.

import { JsonParseError } from "./errors.ts";
import { JsonFloat, type JsonObject, type JsonValue } from "./value.ts";

const MAX_DEPTH = 512;
const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;
// deno-lint-ignore no-control-regex -- raw control characters are invalid inside JSON strings
const PLAIN_RUN = /[^"\\\u0000-\u001f]*/y;
const UNSAFE_HI = 9007199254740991n;
const UNSAFE_LO = -9007199254740991n;

class Parser {
  pos = 0;
  constructor(readonly text: string, readonly loneSurrogates = false) {}

  fail(message: string, at = this.pos): never {
    throw new JsonParseError(`${message} at offset ${at}`, at);
  }

  skipWhitespace(): void {
    const t = this.text;
    let p = this.pos;
    while (p < t.length) {
      const c = t.charCodeAt(p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) p++;
      else break;
    }
    this.pos = p;
  }

  value(depth: number): JsonValue {
    this.skipWhitespace();
    const c = this.text[this.pos];
    switch (c) {
      case "{":
        return this.object(depth + 1);
      case "[":
        return this.array(depth + 1);
      case '"':
        return this.string();
      case "t":
        return this.literal("true", true);
      case "f":
        return this.literal("false", false);
      case "n":
        return this.literal("null", null);
      case undefined:
        return this.fail("unexpected end of input");
      default:
        if (c === "-" || (c >= "0" && c <= "9")) return this.number();
        return this.fail(`unexpected character ${JSON.stringify(c)}`);
    }
  }

  literal<T extends JsonValue>(word: string, result: T): T {
    if (!this.text.startsWith(word, this.pos)) this.fail("invalid literal");
    this.pos += word.length;
    return result;
  }

  number(): JsonValue {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (match === null) return this.fail("invalid number");
    const token = match[0];
    const start = this.pos;
    this.pos += token.length;
    if (match[1] === undefined && match[2] === undefined) {
      if (token.length < 16) return Number(token);
      const big = BigInt(token);
      return big > UNSAFE_HI || big < UNSAFE_LO ? big : Number(big);
    }
    const value = Number(token);
    if (!Number.isFinite(value)) this.fail("number out of range for a double", start);
    return Number.isInteger(value) ? new JsonFloat(value) : value;
  }

  string(): string {
    const t = this.text;
    this.pos++; // opening quote
    let out = "";
    for (;;) {
      PLAIN_RUN.lastIndex = this.pos;
      PLAIN_RUN.exec(t);
      out += t.slice(this.pos, PLAIN_RUN.lastIndex);
      this.pos = PLAIN_RUN.lastIndex;
      const c = t.charCodeAt(this.pos);
      if (c === 0x22) {
        this.pos++;
        break;
      }
      if (Number.isNaN(c)) this.fail("unterminated string");
      if (c < 0x20) this.fail("unescaped control character in string");
      out += this.escape();
    }
    return out;
  }

  escape(): string {
    const t = this.text;
    const start = this.pos;
    const e = t[this.pos + 1];
    this.pos += 2;
    switch (e) {
      case '"':
        return '"';
      case "\\":
        return "\\";
      case "/":
        return "/";
      case "b":
        return "\b";
      case "f":
        return "\f";
      case "n":
        return "\n";
      case "r":
        return "\r";
      case "t":
        return "\t";
      case "u": {
        const hi = this.hex4();
        if (hi >= 0xd800 && hi <= 0xdbff) {
          const pair = t[this.pos] === "\\" && t[this.pos + 1] === "u";
          if (pair) {
            const at = this.pos;
            this.pos += 2;
            const lo = this.hex4();
            if (lo >= 0xdc00 && lo <= 0xdfff) return String.fromCharCode(hi, lo);
            this.pos = at;
          }
          if (!this.loneSurrogates) this.fail("lone surrogate", start);
          return String.fromCharCode(hi);
        }
        if (hi >= 0xdc00 && hi <= 0xdfff && !this.loneSurrogates) {
          this.fail("lone surrogate", start);
        }
        return String.fromCharCode(hi);
      }
      default:
        return this.fail("invalid escape", start);
    }
  }

  hex4(): number {
    const digits = this.text.slice(this.pos, this.pos + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) this.fail("invalid \\u escape");
    this.pos += 4;
    return parseInt(digits, 16);
  }

  array(depth: number): JsonValue[] {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    this.pos++;
    const out: JsonValue[] = [];
    this.skipWhitespace();
    if (this.text[this.pos] === "]") {
      this.pos++;
      return out;
    }
    for (;;) {
      out.push(this.value(depth));
      this.skipWhitespace();
      const c = this.text[this.pos++];
      if (c === "]") return out;
      if (c !== ",") this.fail("expected ',' or ']'", this.pos - 1);
    }
  }

  object(depth: number): JsonObject {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH}`);
    this.pos++;
    const out: JsonObject = {};
    this.skipWhitespace();
    if (this.text[this.pos] === "}") {
      this.pos++;
      return out;
    }
    for (;;) {
      this.skipWhitespace();
      if (this.text[this.pos] !== '"') this.fail("expected a string key");
      const keyAt = this.pos;
      const key = this.string();
      if (Object.hasOwn(out, key)) this.fail(`duplicate key ${JSON.stringify(key)}`, keyAt);
      this.skipWhitespace();
      if (this.text[this.pos++] !== ":") this.fail("expected ':'", this.pos - 1);
      const item = this.value(depth);
      if (key === "__proto__") {
        // defineProperty keeps a "__proto__" key as data instead of changing the prototype.
        Object.defineProperty(out, key, {
          value: item,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else {
        // Plain assignment keeps the object in fast mode (defineProperty per key made parsing
        // a lineage line ~3x slower).
        out[key] = item;
      }
      this.skipWhitespace();
      const c = this.text[this.pos++];
      if (c === "}") return out;
      if (c !== ",") this.fail("expected ',' or '}'", this.pos - 1);
    }
  }
}

/** Options for {@linkcode parseJson}. */
export interface ParseJsonOptions {
  /**
   * Accept `\\uD800`–`\\uDFFF` escapes that are not a surrogate pair, as Python's
   * `json.dumps(…, ensure_ascii=True)` writes them (the audit log's `py-default` profile).
   * They can only come from an escape: strict UTF-8 never decodes to a surrogate.
   */
  loneSurrogates?: boolean;
}

/**
 * Parses JSON text strictly (RFC 8259): exact integers of any size (`bigint` beyond 2^53),
 * integral floats kept as {@linkcode JsonFloat}, duplicate keys, lone surrogates and
 * NaN/Infinity refused.
 *
 * @example
 * ```ts
 * parseJson('{"ts_ns":1732900000000000000}'); // { ts_ns: 1732900000000000000n }
 * ```
 */
export function parseJson(text: string, options: ParseJsonOptions = {}): JsonValue {
  const parser = new Parser(text, options.loneSurrogates ?? false);
  const value = parser.value(0);
  parser.skipWhitespace();
  if (parser.pos !== text.length) parser.fail("trailing characters after the value");
  return value;
}

const strictDecoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decodes UTF-8 strictly: an invalid byte sequence is an error, never U+FFFD; a BOM is kept. */
export function decodeUtf8Strict(bytes: Uint8Array): string {
  try {
    return strictDecoder.decode(bytes);
  } catch (cause) {
    throw new JsonParseError("bytes are not valid UTF-8", 0, { cause });
  }
}

/** Parses JSON from bytes: strict UTF-8, then {@linkcode parseJson}. */
export function parseJsonBytes(bytes: Uint8Array): JsonValue {
  return parseJson(decodeUtf8Strict(bytes));
}
