// The checkpoint a pack of format 3 carries (FORMATS.md §8): the operator's signed checkpoint
// of the whole lineage log and the batch inclusion proof that rebuilds its root from the
// window's entries at their leaf indices — so an auditor holding the pack can later show each
// entry was in the log the operator committed to (and, with `consistency`, still is).
import {
  decodePublicKeyPem,
  hashesOfHex,
  MERKLE_HASH_BYTES,
  merkleHashHex,
  merkleLeafHash,
  merkleRootFromBatch,
  parseCheckpointDocument,
  parseInclusionBatch,
  verifyCheckpointSignature,
} from "../crypto/mod.ts";
import {
  operatorFingerprint,
  PACK_CHECKPOINT_MEMBER,
  PACK_INCLUSION_MEMBER,
} from "../pack_format/mod.ts";

/** What the pack's checkpoint check needs. */
export interface PackCheckpointInput {
  /** `checkpoint.json`. */
  document: Uint8Array;
  /** `inclusion-proof.json`. */
  inclusion: Uint8Array;
  /** The pack's operator key (`operator.pub`), when usable. */
  operatorPublicKey?: Uint8Array;
  /** The window's line digests in order (32 bytes each). */
  digests: Uint8Array;
  /** Lines of the window. */
  count: number;
}

/** The checkpoint's figures for the report. */
export interface PackCheckpointFacts {
  /** Lines of the whole log it covers. */
  size: number;
  /** Its root (hex). */
  root: string;
  /** When it was made. */
  ts: string;
}

/** Checks the pack's checkpoint and inclusion proof; returns its facts (when it parsed). */
export function checkPackCheckpoint(
  input: PackCheckpointInput,
  fail: (kind: string, message: string) => void,
): PackCheckpointFacts | undefined {
  const parsed = parseCheckpointDocument(input.document);
  if (!parsed.ok) {
    fail("invalid checkpoint", `${PACK_CHECKPOINT_MEMBER}: invalid checkpoint: ${parsed.problem}`);
    return undefined;
  }
  const c = parsed.document.checkpoint;
  const facts = { size: c.size, root: c.root, ts: c.ts };
  if (c.log !== "lineage") {
    fail(
      "invalid checkpoint",
      `${PACK_CHECKPOINT_MEMBER}: invalid checkpoint: a checkpoint of the ${c.log} log`,
    );
    return facts;
  }
  let embedded: Uint8Array | undefined;
  try {
    embedded = decodePublicKeyPem(parsed.document.operator_public_key);
  } catch {
    embedded = undefined;
  }
  const key = input.operatorPublicKey;
  if (
    key !== undefined &&
    (embedded === undefined || operatorFingerprint(embedded) !== operatorFingerprint(key))
  ) {
    fail(
      "operator key mismatch",
      `${PACK_CHECKPOINT_MEMBER}: operator key mismatch: its operator_public_key is not operator.pub`,
    );
  }
  if (key !== undefined && !verifyCheckpointSignature({ checkpoint: c, jws: parsed.jws }, key)) {
    fail(
      "checkpoint signature invalid",
      `${PACK_CHECKPOINT_MEMBER}: checkpoint signature invalid: does not verify with operator.pub`,
    );
  }
  const batch = parseInclusionBatch(input.inclusion, input.count);
  const bad = (why: string) =>
    fail("inclusion proof invalid", `${PACK_INCLUSION_MEMBER}: inclusion proof invalid: ${why}`);
  if (!batch.ok) {
    bad(batch.problem);
    return facts;
  }
  if (batch.batch.tree_size !== c.size) {
    bad(`it is for a tree of ${batch.batch.tree_size}, the checkpoint covers ${c.size}`);
    return facts;
  }
  if (batch.indices.length !== input.count) {
    bad(`it places ${batch.indices.length} leaves, the window has ${input.count} lines`);
    return facts;
  }
  const leaves = new Uint8Array(input.count * MERKLE_HASH_BYTES);
  for (let i = 0; i < input.count; i++) {
    merkleLeafHash(input.digests, i * MERKLE_HASH_BYTES, leaves, i * MERKLE_HASH_BYTES);
  }
  const root = merkleRootFromBatch(
    c.size,
    { indices: batch.indices, leafHashes: leaves },
    hashesOfHex(batch.batch.proof),
  );
  if (root === undefined) {
    bad("it has the wrong number of proof hashes for these leaves");
  } else if (merkleHashHex(root) !== c.root) {
    const ranges = batch.batch.leaf_ranges.map(([a, n]) => n === 1 ? `${a}` : `${a}-${a + n - 1}`);
    bad(
      `the window's entries at leaves ${ranges.slice(0, 5).join(", ")}${
        ranges.length > 5 ? ", …" : ""
      } do not rebuild the checkpoint's root ${c.root.slice(0, 16)}…`,
    );
  }
  return facts;
}
