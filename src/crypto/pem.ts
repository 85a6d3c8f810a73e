// PEM encoding and decoding of Ed25519 private (PKCS#8) and public (SPKI) keys.

import { fromBase64, toBase64 } from "../canonical/mod.ts";
import { PKCS8_ED25519_PREFIX, SPKI_ED25519_PREFIX } from "./ed25519.ts";
import { CryptoFormatError } from "./errors.ts";

function pem(label: string, der: Uint8Array): string {
  const b64 = toBase64(der);
  const lines = b64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

function unpem(label: string, text: string): Uint8Array {
  const re = new RegExp(
    `^\\s*-----BEGIN ${label}-----\\r?\\n([A-Za-z0-9+/=\\r\\n]+?)\\r?\\n?-----END ${label}-----\\s*$`,
  );
  const m = re.exec(text);
  if (!m) throw new CryptoFormatError(`not a PEM ${label} block`);
  try {
    return fromBase64(m[1].replace(/[\r\n]/g, ""));
  } catch (cause) {
    throw new CryptoFormatError(`PEM ${label} body is not base64`, { cause });
  }
}

function stripPrefix(der: Uint8Array, prefix: Uint8Array, what: string): Uint8Array {
  if (der.length !== prefix.length + 32 || prefix.some((b, i) => der[i] !== b)) {
    throw new CryptoFormatError(`${what} is not an Ed25519 key`);
  }
  return der.slice(prefix.length);
}

/** PKCS#8 PEM (`PRIVATE KEY`) of an Ed25519 seed. */
export function encodePrivateKeyPem(seed: Uint8Array): string {
  const der = new Uint8Array(PKCS8_ED25519_PREFIX.length + 32);
  der.set(PKCS8_ED25519_PREFIX);
  der.set(seed, PKCS8_ED25519_PREFIX.length);
  return pem("PRIVATE KEY", der);
}

/** The Ed25519 seed inside a PKCS#8 PEM. */
export function decodePrivateKeyPem(text: string): Uint8Array {
  return stripPrefix(unpem("PRIVATE KEY", text), PKCS8_ED25519_PREFIX, "PKCS#8 key");
}

/** SPKI PEM (`PUBLIC KEY`) of an Ed25519 public key. */
export function encodePublicKeyPem(publicKey: Uint8Array): string {
  return pem("PUBLIC KEY", spkiDer(publicKey));
}

/** The raw Ed25519 public key inside an SPKI PEM. */
export function decodePublicKeyPem(text: string): Uint8Array {
  return stripPrefix(unpem("PUBLIC KEY", text), SPKI_ED25519_PREFIX, "SPKI key");
}

/** SPKI DER bytes of an Ed25519 public key (what fingerprints hash). */
export function spkiDer(publicKey: Uint8Array): Uint8Array {
  if (publicKey.length !== 32) throw new CryptoFormatError("an Ed25519 public key is 32 bytes");
  const der = new Uint8Array(SPKI_ED25519_PREFIX.length + 32);
  der.set(SPKI_ED25519_PREFIX);
  der.set(publicKey, SPKI_ED25519_PREFIX.length);
  return der;
}
