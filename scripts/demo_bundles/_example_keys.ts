// The example keys of the reference scenarios: derived from a public label with SHA-256, so
// every regeneration gets the same operator key (and fingerprint) and audit key. They are
// EXAMPLE KEYS, published in this file's logic: anyone can recompute them, so they prove
// nothing about who signed. Never use them, or this derivation, for a real project.
import {
  ed25519KeyPairFromSeed,
  encodePrivateKeyPem,
  encodePublicKeyPem,
  sha256,
  sha256Hex,
  SPKI_ED25519_PREFIX,
} from "../../src/crypto/mod.ts";

const LABEL = "bernstein examples/lineage: EXAMPLE KEY, NOT A SECRET";

function seedOf(kind: string, scenario: string): Uint8Array {
  return sha256(new TextEncoder().encode(`${LABEL}: ${kind}: ${scenario}`));
}

/** The scenario's example operator signing key (Ed25519, PKCS#8 PEM). */
export function exampleOperatorKeyPem(scenario: string): string {
  return encodePrivateKeyPem(seedOf("operator", scenario));
}

/** Its public half (SPKI PEM). */
export function exampleOperatorPublicPem(scenario: string): string {
  return encodePublicKeyPem(ed25519KeyPairFromSeed(seedOf("operator", scenario)).publicKey);
}

/** Its fingerprint: SHA-256 of the SPKI DER, what the auditor pins. */
export function exampleOperatorFingerprint(scenario: string): string {
  const pub = ed25519KeyPairFromSeed(seedOf("operator", scenario)).publicKey;
  return sha256Hex(new Uint8Array([...SPKI_ED25519_PREFIX, ...pub]));
}

/** The scenario's example audit key file content (64 hex, no newline). */
export function exampleAuditKeyHex(scenario: string): string {
  return sha256Hex(seedOf("audit", scenario));
}
