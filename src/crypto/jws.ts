// Detached compact JWS with an unencoded payload (RFC 7515 App. F + RFC 7797), EdDSA only,
// exactly as FORMATS.md §4 writes it: `<header_b64>..<signature_b64url>`, no newline.
import {
  bytesEqual,
  canonicalBytes,
  decodeUtf8Strict,
  fromBase64Url,
  type JsonValue,
  parseJson,
  toBase64Url,
} from "../canonical/mod.ts";
import { ed25519Sign, ed25519Verify } from "./ed25519.ts";
import { JwsFormatError } from "./errors.ts";

/** The protected header of every detached JWS bernstein writes or accepts. */
export interface DetachedJwsHeader {
  /** Always `EdDSA`. */
  alg: "EdDSA";
  /** Always false: the payload is signed as raw bytes (RFC 7797). */
  b64: false;
  /** Always `["b64"]`: a verifier that does not know `b64` must refuse. */
  crit: ["b64"];
  /** Key id of the signing key. */
  kid: string;
}

/** A parsed detached JWS: the header as written plus the raw signature. */
export interface ParsedDetachedJws {
  /** The protected header segment exactly as written (part of the signing input). */
  headerB64: string;
  /** The decoded, checked header. */
  header: DetachedJwsHeader;
  /** The 64-byte Ed25519 signature. */
  signature: Uint8Array;
  /** ASCII(header_b64) || "." — the start of the signing input. */
  signingPrefix?: Uint8Array;
}

const encoder = new TextEncoder();
// A JWS we write is ~150 bytes; anything far larger is not ours and is not parsed.
const MAX_JWS_BYTES = 4096;

/** The base64url protected header for `kid`: `canon-ascii` of the fixed header object. */
export function detachedJwsHeaderB64(kid: string): string {
  if (kid === "") throw new JwsFormatError("a JWS kid must not be empty");
  const header: JsonValue = { alg: "EdDSA", b64: false, crit: ["b64"], kid };
  return toBase64Url(canonicalBytes(header, "canon-ascii"));
}

// Verification builds each signing input here instead of allocating one per signature.
let scratch = new Uint8Array(4096);

function signingInput(
  headerB64: string,
  payload: Uint8Array,
  prefix?: Uint8Array,
): Uint8Array {
  const head = prefix ?? encoder.encode(headerB64 + ".");
  if (prefix !== undefined) {
    const n = prefix.length + payload.length;
    if (n > scratch.length) scratch = new Uint8Array(Math.max(n, scratch.length * 2));
    scratch.set(prefix);
    scratch.set(payload, prefix.length);
    return scratch.subarray(0, n);
  }
  const out = new Uint8Array(head.length + payload.length);
  out.set(head);
  out.set(payload, head.length);
  return out;
}

/** Options for {@linkcode signDetachedJws}. */
export interface SignDetachedJwsOptions {
  /** Key id written into the protected header. */
  kid: string;
}

/**
 * Signs `payload` with an Ed25519 seed and returns the compact detached JWS text
 * (`<header_b64>..<signature_b64url>`, no newline).
 *
 * @example
 * ```ts ignore
 * const jws = signDetachedJws(pair.seed, entryBytes, { kid: "k1" });
 * verifyDetachedJws(parseDetachedJws(jws), { payload: entryBytes, publicKey }); // true
 * ```
 */
export function signDetachedJws(
  seed: Uint8Array,
  payload: Uint8Array,
  options: SignDetachedJwsOptions,
): string {
  const headerB64 = detachedJwsHeaderB64(options.kid);
  const signature = ed25519Sign(seed, signingInput(headerB64, payload));
  return `${headerB64}..${toBase64Url(signature)}`;
}

/**
 * As {@linkcode signDetachedJws}, over a signing input the caller assembled in place —
 * `ASCII(header_b64) || "." || payload`, the header that of `options.kid` — so a large payload
 * is not copied once more. Throws when `input` does not start with that header and dot.
 *
 * @example
 * ```ts ignore
 * const head = new TextEncoder().encode(detachedJwsHeaderB64("k1") + ".");
 * const input = new Uint8Array(head.length + payload.length);
 * input.set(head);
 * input.set(payload, head.length);
 * const jws = signDetachedJwsInput(pair.seed, input, { kid: "k1" });
 * ```
 */
export function signDetachedJwsInput(
  seed: Uint8Array,
  input: Uint8Array,
  options: SignDetachedJwsOptions,
): string {
  const headerB64 = detachedJwsHeaderB64(options.kid);
  const head = encoder.encode(headerB64 + ".");
  for (let i = 0; i < head.length; i++) {
    if (input[i] !== head[i]) {
      throw new JwsFormatError("the signing input does not start with the JWS header");
    }
  }
  return `${headerB64}..${toBase64Url(ed25519Sign(seed, input))}`;
}

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype;
}

// Verifying 100 000 entries sees a handful of distinct headers (one per kid): parse each once.
const headerCache = new Map<string, { header: DetachedJwsHeader; input: Uint8Array }>();
const HEADER_CACHE_LIMIT = 256;

function parseHeader(headerB64: string): { header: DetachedJwsHeader; input: Uint8Array } {
  const cached = headerCache.get(headerB64);
  if (cached !== undefined) return cached;
  let headerBytes: Uint8Array;
  try {
    headerBytes = fromBase64Url(headerB64);
  } catch (cause) {
    throw new JwsFormatError("JWS header is not canonical unpadded base64url", { cause });
  }
  let header: JsonValue;
  try {
    header = parseJson(decodeUtf8Strict(headerBytes));
  } catch (cause) {
    throw new JwsFormatError("JWS header is not valid JSON", { cause });
  }
  if (!isObject(header)) throw new JwsFormatError("JWS header is not a JSON object");
  const keys = Object.keys(header).sort();
  if (keys.join(",") !== "alg,b64,crit,kid") {
    throw new JwsFormatError(
      `JWS header has fields [${keys.join(", ")}], expected exactly [alg, b64, crit, kid]`,
    );
  }
  if (header.alg !== "EdDSA") {
    throw new JwsFormatError(`JWS alg is ${JSON.stringify(header.alg)}, expected "EdDSA"`);
  }
  if (header.b64 !== false) throw new JwsFormatError("JWS b64 is not false");
  const crit = header.crit;
  if (!Array.isArray(crit) || crit.length !== 1 || crit[0] !== "b64") {
    throw new JwsFormatError('JWS crit is not ["b64"]');
  }
  const kid = header.kid;
  if (typeof kid !== "string" || kid === "") {
    throw new JwsFormatError("JWS kid is not a non-empty string");
  }
  // The header is covered by the signature, but bytes that are not canonical were not
  // written by any conforming signer, so they are refused rather than interpreted.
  if (!bytesEqual(canonicalBytes(header, "canon-ascii"), headerBytes)) {
    throw new JwsFormatError("JWS header bytes are not canon-ascii");
  }
  const parsed = {
    header: { alg: "EdDSA", b64: false, crit: ["b64"], kid } as DetachedJwsHeader,
    input: encoder.encode(headerB64 + "."),
  };
  if (headerCache.size >= HEADER_CACHE_LIMIT) headerCache.clear();
  headerCache.set(headerB64, parsed);
  return parsed;
}

const B64URL_VALUE = new Int16Array(128).fill(-1);
for (let i = 0; i < 64; i++) {
  B64URL_VALUE["ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".charCodeAt(i)] =
    i;
}

/** Decodes the 86-character base64url of a 64-byte signature; undefined if not canonical. */
function decodeSignature(text: string): Uint8Array | undefined {
  if (text.length !== 86) return undefined;
  const bytes = new Uint8Array(86);
  for (let i = 0; i < 86; i++) {
    const c = text.charCodeAt(i);
    // Not ASCII is not base64url (and would wrap if stored in a byte).
    if (c >= 128) return undefined;
    bytes[i] = c;
  }
  const out = new Uint8Array(64);
  return decodeSignatureBytes(bytes, 0, out) ? out : undefined;
}

/** Decodes the 86 base64url bytes at `from` into the 64 of `out`; false if not canonical. */
function decodeSignatureBytes(bytes: Uint8Array, from: number, out: Uint8Array): boolean {
  let acc = 0;
  let bits = 0;
  let at = 0;
  for (let i = from; i < from + 86; i++) {
    const c = bytes[i];
    const v = c < 128 ? B64URL_VALUE[c] : -1;
    if (v < 0) return false;
    acc = (acc << 6) | v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[at++] = (acc >> bits) & 0xff;
    }
  }
  // 86 characters carry 516 bits: the 4 left over must be zero, or two texts decode alike.
  return (acc & ((1 << bits) - 1)) === 0;
}

const latin1 = new TextDecoder("latin1");

function asciiText(bytes: Uint8Array): string | undefined {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7e || bytes[i] < 0x20) return undefined;
  // Printable ASCII decodes identically in every ASCII-compatible encoding.
  return latin1.decode(bytes);
}

/**
 * Parses a detached JWS strictly: exactly `<header>..<signature>` in unpadded base64url with
 * no surrounding whitespace, a header whose bytes are the `canon-ascii` form of exactly
 * `{alg: "EdDSA", b64: false, crit: ["b64"], kid}`, and a 64-byte signature. Throws
 * {@linkcode JwsFormatError} naming the first rule broken.
 */
export function parseDetachedJws(jws: string | Uint8Array): ParsedDetachedJws {
  let text: string;
  if (typeof jws === "string") {
    text = jws;
  } else {
    if (jws.length > MAX_JWS_BYTES) {
      throw new JwsFormatError(`JWS is ${jws.length} bytes, more than ${MAX_JWS_BYTES}`);
    }
    const ascii = asciiText(jws);
    if (ascii !== undefined) {
      text = ascii;
    } else {
      try {
        text = decodeUtf8Strict(jws);
      } catch (cause) {
        throw new JwsFormatError("JWS is not valid UTF-8", { cause });
      }
    }
  }
  if (text.length > MAX_JWS_BYTES) throw new JwsFormatError("JWS is too long");
  const parts = text.split(".");
  if (parts.length !== 3) {
    throw new JwsFormatError(`JWS has ${parts.length} dot-separated parts, expected 3`);
  }
  const [headerB64, payloadPart, signatureB64] = parts;
  if (payloadPart !== "") {
    throw new JwsFormatError("JWS payload segment is not empty (expected a detached payload)");
  }
  let signature = decodeSignature(signatureB64);
  if (signature === undefined) {
    try {
      signature = fromBase64Url(signatureB64);
    } catch (cause) {
      throw new JwsFormatError("JWS signature is not canonical unpadded base64url", { cause });
    }
    throw new JwsFormatError(`JWS signature is ${signature.length} bytes, expected 64`);
  }
  const { header, input } = parseHeader(headerB64);
  // A header already known is not remembered twice (it would push others out of the slots).
  if (typeof jws !== "string" && knownHeaderOf(jws, headerB64.length) === undefined) {
    rememberHeaderBytes(jws.subarray(0, headerB64.length), header.kid, input);
  }
  return { headerB64, header: { ...header, crit: ["b64"] }, signature, signingPrefix: input };
}

/**
 * What {@linkcode scanDetachedJws} read of a JWS. It is one object, overwritten by the next
 * scan (the signature's bytes too): read it before scanning again.
 */
export interface ScannedDetachedJws {
  /** The header's kid. */
  readonly kid: string;
  /** ASCII(header_b64) || "." — the start of the signing input. */
  readonly signingPrefix: Uint8Array;
  /** The 64-byte signature. */
  readonly signature: Uint8Array;
}

// Headers {@linkcode parseDetachedJws} accepted from bytes, as those bytes (a verifier sees a
// handful, one per kid): a JWS whose header is byte for byte one of them needs no parse.
const HEADER_BYTES_SLOTS = 16;
const knownHeaders: { bytes: Uint8Array; kid: string; prefix: Uint8Array }[] = [];
let nextHeaderSlot = 0;

function rememberHeaderBytes(bytes: Uint8Array, kid: string, prefix: Uint8Array): void {
  const known = { bytes: bytes.slice(), kid, prefix };
  if (knownHeaders.length < HEADER_BYTES_SLOTS) knownHeaders.push(known);
  else knownHeaders[nextHeaderSlot++ % HEADER_BYTES_SLOTS] = known;
}

/** The known header whose bytes are exactly `jws[0, length)`, or undefined. */
function knownHeaderOf(jws: Uint8Array, length: number): (typeof knownHeaders)[number] | undefined {
  next: for (const known of knownHeaders) {
    const bytes = known.bytes;
    if (bytes.length !== length) continue;
    // Kids differ near the end of the header: compare from there.
    for (let i = length - 1; i >= 0; i--) if (jws[i] !== bytes[i]) continue next;
    return known;
  }
  return undefined;
}

const scanned: { kid: string; signingPrefix: Uint8Array; signature: Uint8Array } = {
  kid: "",
  signingPrefix: new Uint8Array(0),
  signature: new Uint8Array(64),
};

/**
 * The common JWS read without parsing: `<header>..<signature>` whose header is byte for byte
 * one {@linkcode parseDetachedJws} already accepted and whose signature is 86 canonical
 * base64url characters. Whatever it reads, `parseDetachedJws` reads alike (same kid, prefix
 * and signature); anything else is undefined, and `parseDetachedJws` then gives the verdict
 * (and its reason). Allocates nothing: the result is overwritten by the next scan.
 */
export function scanDetachedJws(jws: Uint8Array): ScannedDetachedJws | undefined {
  const dot = jws.indexOf(0x2e);
  // A dot, a second one, then exactly the 86 signature characters (none of them a dot).
  if (dot <= 0 || jws[dot + 1] !== 0x2e || jws.length - dot - 2 !== 86) return undefined;
  const known = knownHeaderOf(jws, dot);
  if (known === undefined) return undefined;
  if (!decodeSignatureBytes(jws, dot + 2, scanned.signature)) return undefined;
  scanned.kid = known.kid;
  scanned.signingPrefix = known.prefix;
  return scanned;
}

/** {@linkcode verifyDetachedJws} for a {@linkcode scanDetachedJws} result. */
export function verifyScannedJws(
  jws: ScannedDetachedJws,
  payload: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  return ed25519Verify(publicKey, signingInput("", payload, jws.signingPrefix), jws.signature);
}

/** True when `jws` is a valid Ed25519 signature by `publicKey` over `payload` (RFC 7797). */
export function verifyDetachedJws(
  jws: ParsedDetachedJws,
  against: { payload: Uint8Array; publicKey: Uint8Array },
): boolean {
  const { payload, publicKey } = against;
  return ed25519Verify(
    publicKey,
    signingInput(jws.headerB64, payload, jws.signingPrefix),
    jws.signature,
  );
}
