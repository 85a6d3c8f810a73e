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

function signingInput(headerB64: string, payload: Uint8Array): Uint8Array {
  const head = encoder.encode(headerB64 + ".");
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
 * ```ts
 * const jws = signDetachedJws(pair.seed, entryBytes, { kid: "k1" });
 * verifyDetachedJws(parseDetachedJws(jws), entryBytes, pair.publicKey); // true
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

function isObject(value: JsonValue): value is { [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype;
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
    try {
      text = decodeUtf8Strict(jws);
    } catch (cause) {
      throw new JwsFormatError("JWS is not valid UTF-8", { cause });
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
  let headerBytes: Uint8Array;
  let signature: Uint8Array;
  try {
    headerBytes = fromBase64Url(headerB64);
  } catch (cause) {
    throw new JwsFormatError("JWS header is not canonical unpadded base64url", { cause });
  }
  try {
    signature = fromBase64Url(signatureB64);
  } catch (cause) {
    throw new JwsFormatError("JWS signature is not canonical unpadded base64url", { cause });
  }
  if (signature.length !== 64) {
    throw new JwsFormatError(`JWS signature is ${signature.length} bytes, expected 64`);
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
  return { headerB64, header: { alg: "EdDSA", b64: false, crit: ["b64"], kid }, signature };
}

/** True when `jws` is a valid Ed25519 signature by `publicKey` over `payload` (RFC 7797). */
export function verifyDetachedJws(
  jws: ParsedDetachedJws,
  payload: Uint8Array,
  publicKey: Uint8Array,
): boolean {
  return ed25519Verify(publicKey, signingInput(jws.headerB64, payload), jws.signature);
}
