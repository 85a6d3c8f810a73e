// Who signed a pack (FORMATS.md §5): the operator's Ed25519 key is named in the manifest by its
// kid and fingerprint (the SHA-256 of its SPKI DER), and the manifest's detached JWS carries the
// same kid in its header. The builder makes the block and the header from the signing key; the
// verifier checks `operator.pub`, the manifest and the JWS header against each other with the
// same two functions. Pure.
import { sha256Hex, spkiDer } from "../crypto/mod.ts";
import { kidForPublicKey } from "../lineage/mod.ts";

/** Hex SHA-256 of an Ed25519 public key's SPKI DER: the operator fingerprint. */
export function operatorFingerprint(publicKey: Uint8Array): string {
  return sha256Hex(spkiDer(publicKey));
}

/**
 * Normalises a fingerprint as people paste it (`SHA256:`/`sha256:` prefix, colons, spaces,
 * upper case) to 64 lowercase hex, or undefined when it is not one.
 */
export function normalizeFingerprint(text: string): string | undefined {
  const hex = text.trim().replace(/^sha256:/i, "").replace(/[:\s]/g, "").toLowerCase();
  return /^[0-9a-f]{64}$/.test(hex) ? hex : undefined;
}

/** The manifest's `operator` block for an operator key. */
export interface ManifestOperator {
  /** The key's kid (as lineage agents' kids are made). */
  kid: string;
  /** {@linkcode operatorFingerprint} of the key. */
  public_key_sha256: string;
}

/**
 * The manifest's `operator` block for `publicKey`; the manifest's JWS header names the same
 * `kid`.
 *
 * @example
 * ```ts
 * import { operatorBlock } from "./mod.ts";
 * const block = operatorBlock(new Uint8Array(32));
 * if (!/^[0-9a-f]{64}$/.test(block.public_key_sha256)) throw new Error("not a fingerprint");
 * ```
 */
export function operatorBlock(publicKey: Uint8Array): ManifestOperator {
  return { kid: kidForPublicKey(publicKey), public_key_sha256: operatorFingerprint(publicKey) };
}
