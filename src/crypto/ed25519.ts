// Ed25519 key pairs from a seed, signatures and verification over node:crypto, with the PKCS#8
// and SPKI prefixes the key encodings need.

import { Buffer } from "node:buffer";
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from "node:crypto";
import { toHex } from "../canonical/mod.ts";
import { CryptoFormatError } from "./errors.ts";

/** DER prefix of an Ed25519 PKCS#8 private key (RFC 8410): the 32-byte seed follows. */
export const PKCS8_ED25519_PREFIX: Uint8Array = new Uint8Array([
  0x30,
  0x2e,
  0x02,
  0x01,
  0x00,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x70,
  0x04,
  0x22,
  0x04,
  0x20,
]);

/** DER prefix of an Ed25519 SPKI public key (RFC 8410): the 32-byte key follows. */
export const SPKI_ED25519_PREFIX: Uint8Array = new Uint8Array([
  0x30,
  0x2a,
  0x30,
  0x05,
  0x06,
  0x03,
  0x2b,
  0x65,
  0x70,
  0x03,
  0x21,
  0x00,
]);

/** An Ed25519 key pair as raw bytes. */
export interface Ed25519KeyPair {
  /** 32-byte private seed. */
  seed: Uint8Array;
  /** 32-byte public key. */
  publicKey: Uint8Array;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

// KeyObjects are costly to build; signers and verifiers reuse a handful of keys.
const privateCache = new Map<string, KeyObject>();
const publicCache = new Map<string, KeyObject>();
const CACHE_LIMIT = 256;

function remember(cache: Map<string, KeyObject>, key: string, value: KeyObject): KeyObject {
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
  return value;
}

function privateKeyObject(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) {
    throw new CryptoFormatError(`an Ed25519 seed is 32 bytes, got ${seed.length}`);
  }
  const id = toHex(seed);
  return privateCache.get(id) ??
    remember(
      privateCache,
      id,
      createPrivateKey({
        key: Buffer.from(concat(PKCS8_ED25519_PREFIX, seed)),
        format: "der",
        type: "pkcs8",
      }),
    );
}

// A verifier checks 100,000 signatures by a handful of keys: the last few keys used are found
// by comparing their bytes (a copy, so a caller changing its array changes nothing here),
// before the hex-keyed cache, whose key costs a string per call.
const RECENT_KEYS = 8;
const recentKeys: { bytes: Uint8Array; key: KeyObject }[] = [];
let nextRecent = 0;

function recentKeyObject(publicKey: Uint8Array): KeyObject | undefined {
  next: for (const recent of recentKeys) {
    for (let i = 0; i < 32; i++) if (recent.bytes[i] !== publicKey[i]) continue next;
    return recent.key;
  }
  return undefined;
}

function publicKeyObject(publicKey: Uint8Array): KeyObject {
  if (publicKey.length !== 32) {
    throw new CryptoFormatError(`an Ed25519 public key is 32 bytes, got ${publicKey.length}`);
  }
  const recent = recentKeyObject(publicKey);
  if (recent !== undefined) return recent;
  const id = toHex(publicKey);
  const key = publicCache.get(id) ??
    remember(
      publicCache,
      id,
      createPublicKey({
        key: Buffer.from(concat(SPKI_ED25519_PREFIX, publicKey)),
        format: "der",
        type: "spki",
      }),
    );
  const entry = { bytes: publicKey.slice(), key };
  if (recentKeys.length < RECENT_KEYS) recentKeys.push(entry);
  else recentKeys[nextRecent++ % RECENT_KEYS] = entry;
  return key;
}

/** The key pair of a 32-byte seed (take the seed from an injected `Random`). */
export function ed25519KeyPairFromSeed(seed: Uint8Array): Ed25519KeyPair {
  const spki = createPublicKey(privateKeyObject(seed)).export({ format: "der", type: "spki" });
  return {
    seed: new Uint8Array(seed),
    publicKey: new Uint8Array(spki).slice(SPKI_ED25519_PREFIX.length),
  };
}

/** Ed25519 signature (RFC 8032, pure) of `message` by `seed`. */
export function ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, privateKeyObject(seed)));
}

/** True when `signature` is a valid Ed25519 signature of `message` by `publicKey`. */
export function ed25519Verify(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean {
  if (signature.length !== 64) return false;
  try {
    return verify(null, message, publicKeyObject(publicKey), signature);
  } catch {
    // An invalid point encoding cannot verify anything.
    return false;
  }
}
