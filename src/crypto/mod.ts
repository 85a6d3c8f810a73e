/**
 * The one crypto interface: SHA-256, HMAC-SHA256, HKDF-SHA256, Ed25519, PEM, detached JWS
 * (RFC 7515 App. F + RFC 7797, FORMATS.md §4) and RFC 9162 Merkle trees. Native
 * `node:crypto` does the work (fast, no permissions needed, so the read-only verifier can use
 * it); tests check it against `@noble` reference implementations and RFC vectors.
 *
 * @example
 * ```ts ignore
 * const pair = ed25519KeyPairFromSeed(systemRandom.bytes(32));
 * const sig = ed25519Sign(pair.seed, bytes);
 * ed25519Verify(pair.publicKey, bytes, sig); // true
 * ```
 *
 * @module
 */
export {
  ed25519KeyPairFromSeed,
  ed25519Sign,
  ed25519Verify,
  SPKI_ED25519_PREFIX,
} from "./ed25519.ts";
export {
  type CarriedConsistencyProof,
  type Checkpoint,
  type CheckpointDocument,
  checkpointLineBytes,
  type CheckpointLog,
  type CheckpointSigner,
  hashesOfHex,
  indexRanges,
  merkleHashHex,
  merkleHashOfHex,
  parseCheckpointDocument,
  parseCheckpointLine,
  parseInclusionBatch,
  readCheckpointLines,
  renderCheckpointDocument,
  renderInclusionBatch,
  signCheckpoint,
  type SignedCheckpoint,
  verifyCheckpointSignature,
} from "./checkpoint.ts";
export {
  checkLogAgainstCheckpoints,
  type CheckpointFileProblem,
  type CheckpointFileReview,
  type CheckpointUnderTest,
  type CommittedLeaves,
  reviewCheckpointFile,
} from "./checkpoint_check.ts";
export { JwsFormatError } from "./errors.ts";
export {
  gitObjectIdHex,
  hkdfSha256,
  hmacSha256,
  hmacSha256Hex,
  type KeyedHmacSha256,
  keyedHmacSha256,
  sha256,
  sha256Hex,
  sha256Stream,
  timingSafeEqualBytes,
} from "./hash.ts";
export {
  detachedJwsHeaderB64,
  type ParsedDetachedJws,
  parseDetachedJws,
  scanDetachedJws,
  signDetachedJws,
  signDetachedJwsInput,
  verifyDetachedJws,
  verifyScannedJws,
} from "./jws.ts";
export {
  emptyMerkleRoot,
  MERKLE_HASH_BYTES,
  MerkleFrontier,
  merkleLeafHash,
  merkleNodeHash,
  merkleRoot,
  merkleRootFromBatch,
  MerkleTree,
  verifyConsistency,
  verifyInclusion,
} from "./merkle.ts";
export {
  decodePrivateKeyPem,
  decodePublicKeyPem,
  encodePrivateKeyPem,
  encodePublicKeyPem,
  spkiDer,
} from "./pem.ts";
export { keyedHmacSha256Pure } from "./_hmac_words.ts";
export { referenceCrypto, sha256HexPure, sha256IntoPure } from "./reference.ts";
export { Crc32 } from "./crc32.ts";
