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
  type Ed25519KeyPair,
  ed25519KeyPairFromSeed,
  ed25519Sign,
  ed25519Verify,
  PKCS8_ED25519_PREFIX,
  SPKI_ED25519_PREFIX,
} from "./ed25519.ts";
export {
  type CarriedConsistencyProof,
  type Checkpoint,
  CHECKPOINT_DOCUMENT_SCHEMA,
  CHECKPOINT_LOGS,
  checkpointBody,
  type CheckpointDocument,
  type CheckpointFileLine,
  checkpointLineBytes,
  type CheckpointLog,
  type CheckpointSigner,
  hashesOfHex,
  INCLUSION_BATCH_SCHEMA,
  type InclusionBatch,
  indexRanges,
  merkleHashHex,
  merkleHashOfHex,
  parseCheckpointDocument,
  parseCheckpointLine,
  type ParsedCheckpoint,
  type ParsedCheckpointDocument,
  parseInclusionBatch,
  parseSignedCheckpoint,
  readCheckpointLines,
  renderCheckpointDocument,
  renderInclusionBatch,
  signCheckpoint,
  type SignedCheckpoint,
  signedCheckpointJson,
  verifyCheckpointSignature,
} from "./checkpoint.ts";
export {
  checkLogAgainstCheckpoints,
  type CheckpointCheckOptions,
  type CheckpointCheckResult,
  type CheckpointFileProblem,
  type CheckpointFileReview,
  type CheckpointFinding,
  type CheckpointUnderTest,
  type CommittedLeaves,
  type LogLeaves,
  reviewCheckpointFile,
  type ReviewCheckpointFileOptions,
} from "./checkpoint_check.ts";
export { CryptoFormatError, JwsFormatError } from "./errors.ts";
export {
  type HkdfOptions,
  hkdfSha256,
  hmacSha256,
  hmacSha256Hex,
  type KeyedHmacSha256,
  keyedHmacSha256,
  sha256,
  sha256Hex,
  type Sha256Stream,
  sha256Stream,
  timingSafeEqualBytes,
} from "./hash.ts";
export {
  type DetachedJwsHeader,
  detachedJwsHeaderB64,
  type ParsedDetachedJws,
  parseDetachedJws,
  signDetachedJws,
  type SignDetachedJwsOptions,
  verifyDetachedJws,
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
export {
  keyedHmacSha256Pure,
  type ReferenceCrypto,
  referenceCrypto,
  sha256HexPure,
  sha256IntoPure,
} from "./reference.ts";
