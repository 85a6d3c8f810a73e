// The pure-JS reference implementations (@noble). The native functions in hash.ts and
// ed25519.ts are what bernstein runs; these exist so tests and benchmarks can prove the native
// ones agree byte for byte (TOOLCHAIN.md: native is 4-20x faster on these machines).
import * as ed from "@noble/ed25519";
import { hkdf } from "@noble/hashes/hkdf.js";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256, sha512 } from "@noble/hashes/sha2.js";
import type { Ed25519KeyPair } from "./ed25519.ts";
import type { HkdfOptions } from "./hash.ts";

// The sync API of @noble/ed25519 v3 needs a SHA-512 wired in.
ed.hashes.sha512 = sha512;

/** SHA-256 by @noble/hashes. */
function refSha256(data: Uint8Array): Uint8Array {
  return sha256(data);
}

/** HMAC-SHA256 by @noble/hashes. */
function refHmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array {
  return hmac(sha256, key, data);
}

/** HKDF-SHA256 by @noble/hashes (same option rules as the native one). */
function refHkdfSha256(ikm: Uint8Array, options: HkdfOptions): Uint8Array {
  const info = typeof options.info === "string"
    ? new TextEncoder().encode(options.info)
    : options.info;
  return hkdf(sha256, ikm, options.salt, info, options.length ?? 32);
}

/** Ed25519 key pair of a seed by @noble/ed25519. */
function refEd25519KeyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  return { seed: new Uint8Array(seed), publicKey: ed.getPublicKey(seed) };
}

/** Ed25519 signature by @noble/ed25519. */
function refEd25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return ed.sign(message, seed);
}

/** Ed25519 verification by @noble/ed25519 with RFC 8032 (not ZIP-215) acceptance rules. */
function refEd25519Verify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  if (signature.length !== 64 || publicKey.length !== 32) return false;
  try {
    return ed.verify(signature, message, publicKey, { zip215: false });
  } catch {
    // noble throws on a public key that is not a curve point: it verifies nothing.
    return false;
  }
}

const HEX_CODES = new TextEncoder().encode("0123456789abcdef");
const hexChars = new Uint8Array(64);
const latin1 = new TextDecoder("latin1");

/** Lowercase hex of a 32-byte digest, built in one buffer (no intermediate strings). */
function hex(bytes: Uint8Array): string {
  const out = bytes.length === 32 ? hexChars : new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    out[2 * i] = HEX_CODES[bytes[i] >> 4];
    out[2 * i + 1] = HEX_CODES[bytes[i] & 15];
  }
  return latin1.decode(out);
}

// Hash states reused across calls (`_cloneInto` resets one without allocating): a verifier
// hashes 100 000 records, and fresh noble states per record are what fills the young heap.
const sha256Fresh = sha256.create();
const sha256Work = sha256.create();
const digestOut = new Uint8Array(32);

/**
 * Lowercase hex SHA-256 in pure JS. Slower than native per call (see `deno task bench`), but it
 * allocates no native state: the native hash objects are freed only by a major GC, so hashing
 * 100 000 small records natively grows the process by tens of MB. Bulk verifiers use this.
 */
export function sha256HexPure(data: Uint8Array): string {
  sha256Fresh._cloneInto(sha256Work);
  sha256Work.update(data);
  sha256Work.digestInto(digestOut);
  return hex(digestOut);
}

/** {@linkcode sha256HexPure} into `out` at `at` (32 bytes), for callers that compare digests. */
export function sha256IntoPure(data: Uint8Array, out: Uint8Array, at = 0): void {
  sha256Fresh._cloneInto(sha256Work);
  sha256Work.update(data);
  sha256Work.digestInto(digestOut);
  out.set(digestOut, at);
}

/** The reference (pure-JS) counterpart of every native primitive, for differential tests. */
export interface ReferenceCrypto {
  /** SHA-256. */
  sha256(data: Uint8Array): Uint8Array;
  /** HMAC-SHA256. */
  hmacSha256(key: Uint8Array, data: Uint8Array): Uint8Array;
  /** HKDF-SHA256. */
  hkdfSha256(ikm: Uint8Array, options: HkdfOptions): Uint8Array;
  /** Ed25519 key pair of a seed. */
  ed25519KeyPairFromSeed(seed: Uint8Array): Ed25519KeyPair;
  /** Ed25519 signature. */
  ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array;
  /** Ed25519 verification. */
  ed25519Verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean;
}

/** The @noble reference implementations, shaped like the native functions. */
export const referenceCrypto: ReferenceCrypto = {
  sha256: refSha256,
  hmacSha256: refHmacSha256,
  hkdfSha256: refHkdfSha256,
  ed25519KeyPairFromSeed: refEd25519KeyPairFromSeed,
  ed25519Sign: refEd25519Sign,
  ed25519Verify: refEd25519Verify,
};
