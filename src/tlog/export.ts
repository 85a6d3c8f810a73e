// The exported checkpoint document (FORMATS.md §8): the latest signed checkpoint, the
// operator's public key, and — when the holder of an older checkpoint asks — the RFC 9162
// consistency proof that the older tree is a prefix of this one, built from the committed
// leaf record (never from the log as it is now).
import { join } from "node:path";
import { toHex } from "../canonical/mod.ts";
import {
  type CarriedConsistencyProof,
  type CheckpointDocument,
  MERKLE_HASH_BYTES,
  merkleLeafHash,
  MerkleTree,
  renderCheckpointDocument,
  type SignedCheckpoint,
} from "../crypto/mod.ts";
import { readFileIfExists } from "../io/mod.ts";
import { CheckpointError } from "./errors.ts";
import { CHECKPOINT_FILES } from "./writer.ts";

/** The committed tree of the first `size` leaves of a log folder, checked against `root`. */
export async function committedTree(
  dir: string,
  checkpoint: SignedCheckpoint,
): Promise<MerkleTree> {
  const bytes = (await readFileIfExists(join(dir, CHECKPOINT_FILES.leaves))) ?? new Uint8Array();
  const size = checkpoint.size;
  if (bytes.length < size * MERKLE_HASH_BYTES) {
    throw new CheckpointError(
      "checkpoint.leaves_missing",
      `${CHECKPOINT_FILES.leaves} holds fewer than the ${size} leaves the checkpoint covers`,
    );
  }
  const leaves = new Uint8Array(size * MERKLE_HASH_BYTES);
  for (let i = 0; i < size; i++) {
    merkleLeafHash(bytes, i * MERKLE_HASH_BYTES, leaves, i * MERKLE_HASH_BYTES);
  }
  const tree = new MerkleTree(leaves, size);
  if (toHex(tree.root()) !== checkpoint.root) {
    throw new CheckpointError(
      "checkpoint.leaves_mismatch",
      `${CHECKPOINT_FILES.leaves} does not reproduce the root of the checkpoint`,
    );
  }
  return tree;
}

/** Options for {@linkcode exportCheckpoint}. */
export interface ExportCheckpointOptions {
  /** The log folder. */
  dir: string;
  /** The checkpoint to export (normally the latest). */
  checkpoint: SignedCheckpoint;
  /** The operator's public key (embedded in the document). */
  publicKey: Uint8Array;
  /** Older checkpoints to prove this one extends. */
  from?: readonly CheckpointDocument[];
}

/**
 * The document of `checkpoint` with a consistency proof from each `from` checkpoint. Throws
 * {@linkcode CheckpointError} when an older checkpoint is not a prefix of the committed history
 * (another log, or a fork: that is what the proof would show, so none is made).
 */
export async function exportCheckpoint(options: ExportCheckpointOptions): Promise<Uint8Array> {
  const { checkpoint } = options;
  const consistency: CarriedConsistencyProof[] = [];
  const from = options.from ?? [];
  if (from.length > 0) {
    const tree = await committedTree(options.dir, checkpoint);
    for (const old of from) {
      const o = old.checkpoint;
      if (o.log !== checkpoint.log) {
        throw new CheckpointError(
          "checkpoint.other_log",
          `the older checkpoint is of the ${o.log} log, this is the ${checkpoint.log} log`,
        );
      }
      if (o.size > checkpoint.size || toHex(tree.root(o.size)) !== o.root) {
        throw new CheckpointError(
          "checkpoint.fork",
          `the older checkpoint (size ${o.size}, ${o.ts}) is not a prefix of this log's committed history: a fork`,
          {
            hint: "bernstein-verify consistency shows the same; investigate which history is true",
          },
        );
      }
      consistency.push({
        from_size: o.size,
        from_root: o.root,
        proof: tree.consistencyProof(o.size, checkpoint.size).map(toHex),
      });
    }
  }
  return renderCheckpointDocument({
    checkpoint,
    operatorPublicKey: options.publicKey,
    consistency,
  });
}
