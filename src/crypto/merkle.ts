// Merkle trees as RFC 9162 (Certificate Transparency v2) §2.1 defines them: SHA-256, leaves
// hashed with a 0x00 prefix and interior nodes with 0x01 (domain separation, so a leaf can never
// pass for a node), left-balanced trees of any size. Used for the checkpoints of the lineage and
// audit logs (FORMATS.md §8): a streaming root (linear time, logarithmic memory), inclusion and
// consistency proofs with their verification, and the batch inclusion proof a compliance pack
// carries for its window.
import { sha256 } from "./hash.ts";
import { sha256Prefixed32, sha256Prefixed64 } from "./_sha256_small.ts";

/** Bytes of every hash in a tree. */
export const MERKLE_HASH_BYTES = 32;

const LEAF = 0x00;
const NODE = 0x01;

/** MTH({}) = SHA-256 of the empty string: the root of an empty log. */
export function emptyMerkleRoot(): Uint8Array {
  return sha256(new Uint8Array(0));
}

/**
 * The leaf hash SHA-256(0x00 ‖ digest) of a 32-byte leaf value. bernstein's leaves are the
 * SHA-256 digests of log lines, so every leaf is 32 bytes. Writes into `out` when given.
 */
export function merkleLeafHash(
  digest: Uint8Array,
  at = 0,
  out: Uint8Array = new Uint8Array(MERKLE_HASH_BYTES),
  outAt = 0,
): Uint8Array {
  if (digest.length < at + MERKLE_HASH_BYTES) throw new RangeError("a leaf value is 32 bytes");
  sha256Prefixed32(LEAF, digest, at, out, outAt);
  return out;
}

/** The interior node hash SHA-256(0x01 ‖ left ‖ right). */
export function merkleNodeHash(
  left: Uint8Array,
  right: Uint8Array,
  out: Uint8Array = new Uint8Array(MERKLE_HASH_BYTES),
): Uint8Array {
  sha256Prefixed64(NODE, left, 0, right, 0, out, 0);
  return out;
}

function largestPowerOfTwoBelow(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

function equal32(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== MERKLE_HASH_BYTES || b.length !== MERKLE_HASH_BYTES) return false;
  let diff = 0;
  for (let i = 0; i < MERKLE_HASH_BYTES; i++) diff |= a[i] ^ b[i];
  return diff === 0;
}

/**
 * The root of a growing tree in O(log n) memory: the perfect subtrees of the leaves pushed so
 * far ("compact range"), largest first. Folding them right to left gives exactly RFC 9162's MTH
 * of the leaves, so a log is checked against a checkpoint in one streaming pass.
 *
 * @example
 * ```ts ignore
 * const f = new MerkleFrontier();
 * for (const digest of lineDigests) f.push(merkleLeafHash(digest));
 * f.root(); // MTH of every leaf pushed
 * ```
 */
export class MerkleFrontier {
  // Stack of subtree roots (32 bytes each) and their heights; height strictly decreases.
  #hashes = new Uint8Array(64 * MERKLE_HASH_BYTES);
  #heights = new Int8Array(64);
  #depth = 0;
  #size = 0;

  /** Leaves pushed. */
  get size(): number {
    return this.#size;
  }

  /** Adds the next leaf hash (32 bytes at `at`). */
  push(leafHash: Uint8Array, at = 0): void {
    const h = this.#hashes;
    h.set(leafHash.subarray(at, at + MERKLE_HASH_BYTES), this.#depth * MERKLE_HASH_BYTES);
    this.#heights[this.#depth] = 0;
    this.#depth++;
    this.#size++;
    while (this.#depth >= 2 && this.#heights[this.#depth - 1] === this.#heights[this.#depth - 2]) {
      const right = (this.#depth - 1) * MERKLE_HASH_BYTES;
      const left = (this.#depth - 2) * MERKLE_HASH_BYTES;
      sha256Prefixed64(NODE, h, left, h, right, h, left);
      this.#heights[this.#depth - 2]++;
      this.#depth--;
    }
  }

  /** MTH of the leaves pushed so far (SHA-256("") when none). */
  root(): Uint8Array {
    if (this.#depth === 0) return emptyMerkleRoot();
    const h = this.#hashes;
    const acc = h.slice((this.#depth - 1) * MERKLE_HASH_BYTES, this.#depth * MERKLE_HASH_BYTES);
    for (let i = this.#depth - 2; i >= 0; i--) {
      sha256Prefixed64(NODE, h, i * MERKLE_HASH_BYTES, acc, 0, acc, 0);
    }
    return acc;
  }

  /** The perfect subtree roots, largest first (what a writer keeps to extend the tree later). */
  hashes(): Uint8Array[] {
    const out: Uint8Array[] = [];
    for (let i = 0; i < this.#depth; i++) {
      out.push(this.#hashes.slice(i * MERKLE_HASH_BYTES, (i + 1) * MERKLE_HASH_BYTES));
    }
    return out;
  }

  /**
   * The frontier of a tree of `size` leaves from its subtree roots ({@linkcode hashes}); their
   * number must be the number of bits set in `size`. Undefined otherwise.
   */
  static fromHashes(size: number, hashes: readonly Uint8Array[]): MerkleFrontier | undefined {
    if (!Number.isSafeInteger(size) || size < 0) return undefined;
    const heights: number[] = [];
    for (let bit = 52; bit >= 0; bit--) {
      if (Math.floor(size / 2 ** bit) % 2 === 1) heights.push(bit);
    }
    if (heights.length !== hashes.length) return undefined;
    if (hashes.some((h) => h.length !== MERKLE_HASH_BYTES)) return undefined;
    const f = new MerkleFrontier();
    hashes.forEach((h, i) => {
      f.#hashes.set(h, i * MERKLE_HASH_BYTES);
      f.#heights[i] = heights[i];
    });
    f.#depth = hashes.length;
    f.#size = size;
    return f;
  }

  /** An independent copy. */
  clone(): MerkleFrontier {
    const c = new MerkleFrontier();
    c.#hashes.set(this.#hashes);
    c.#heights.set(this.#heights);
    c.#depth = this.#depth;
    c.#size = this.#size;
    return c;
  }
}

/** MTH of `count` leaf hashes stored back to back in `leafHashes`. */
export function merkleRoot(leafHashes: Uint8Array, count: number): Uint8Array {
  const f = new MerkleFrontier();
  for (let i = 0; i < count; i++) f.push(leafHashes, i * MERKLE_HASH_BYTES);
  return f.root();
}

/**
 * A whole tree held in memory (≈ 2 × 32 bytes per leaf): every perfect subtree's hash, so
 * inclusion and consistency proofs for any tree size up to the leaf count take O(log² n).
 * Builders use it (packs, exported checkpoints); verifiers never need it.
 */
export class MerkleTree {
  /** levels[j] holds the hashes of the perfect subtrees of height j, left to right. */
  readonly #levels: Uint8Array[] = [];
  readonly #size: number;

  /** A tree over `count` leaf hashes stored back to back. */
  constructor(leafHashes: Uint8Array, count: number) {
    this.#size = count;
    this.#levels.push(leafHashes.slice(0, count * MERKLE_HASH_BYTES));
    let below = this.#levels[0];
    let n = count;
    while (n >= 2) {
      const up = new Uint8Array(Math.floor(n / 2) * MERKLE_HASH_BYTES);
      for (let k = 0; k < Math.floor(n / 2); k++) {
        sha256Prefixed64(
          NODE,
          below,
          2 * k * MERKLE_HASH_BYTES,
          below,
          (2 * k + 1) * MERKLE_HASH_BYTES,
          up,
          k * MERKLE_HASH_BYTES,
        );
      }
      this.#levels.push(up);
      below = up;
      n = Math.floor(n / 2);
    }
  }

  /** Leaves in the tree. */
  get size(): number {
    return this.#size;
  }

  /** The leaf hash at `index`. */
  leaf(index: number): Uint8Array {
    return this.#levels[0].slice(index * MERKLE_HASH_BYTES, (index + 1) * MERKLE_HASH_BYTES);
  }

  /** MTH(D[lo:hi]) for the ranges RFC 9162's recursions visit. */
  subtree(lo: number, hi: number): Uint8Array {
    const n = hi - lo;
    if (n <= 0) return emptyMerkleRoot();
    if ((n & (n - 1)) === 0 && lo % n === 0) {
      const height = Math.log2(n);
      const at = (lo / n) * MERKLE_HASH_BYTES;
      return this.#levels[height].slice(at, at + MERKLE_HASH_BYTES);
    }
    const k = largestPowerOfTwoBelow(n);
    return merkleNodeHash(this.subtree(lo, lo + k), this.subtree(lo + k, hi));
  }

  #check(size: number): void {
    if (!Number.isInteger(size) || size < 0 || size > this.#size) {
      throw new RangeError(`tree size ${size} is outside 0..${this.#size}`);
    }
  }

  /** MTH of the first `size` leaves (default: all). */
  root(size: number = this.#size): Uint8Array {
    this.#check(size);
    return this.subtree(0, size);
  }

  /** RFC 9162 §2.1.3.1 PATH(index, D[0:size]): the audit path, leaf level first. */
  inclusionProof(index: number, size: number = this.#size): Uint8Array[] {
    this.#check(size);
    if (!Number.isInteger(index) || index < 0 || index >= size) {
      throw new RangeError(`leaf ${index} is not in a tree of ${size}`);
    }
    const path = (m: number, lo: number, hi: number): Uint8Array[] => {
      if (hi - lo === 1) return [];
      const k = largestPowerOfTwoBelow(hi - lo);
      return m < k
        ? [...path(m, lo, lo + k), this.subtree(lo + k, hi)]
        : [...path(m - k, lo + k, hi), this.subtree(lo, lo + k)];
    };
    return path(index, 0, size);
  }

  /** RFC 9162 §2.1.4.1 PROOF(oldSize, D[0:newSize]). Empty when oldSize is 0 or newSize. */
  consistencyProof(oldSize: number, newSize: number = this.#size): Uint8Array[] {
    this.#check(newSize);
    if (!Number.isInteger(oldSize) || oldSize < 0 || oldSize > newSize) {
      throw new RangeError(`old size ${oldSize} is outside 0..${newSize}`);
    }
    if (oldSize === 0 || oldSize === newSize) return [];
    const sub = (m: number, lo: number, hi: number, whole: boolean): Uint8Array[] => {
      if (m === hi - lo) return whole ? [] : [this.subtree(lo, hi)];
      const k = largestPowerOfTwoBelow(hi - lo);
      return m <= k
        ? [...sub(m, lo, lo + k, whole), this.subtree(lo + k, hi)]
        : [...sub(m - k, lo + k, hi, false), this.subtree(lo, lo + k)];
    };
    return sub(oldSize, 0, newSize, true);
  }

  /**
   * The batch inclusion proof of the leaves at `indices` (sorted, distinct) in the tree of
   * `size`: the hashes of the maximal subtrees of RFC 9162's recursion that hold none of them,
   * left to right. With the leaves themselves it rebuilds the root
   * ({@linkcode merkleRootFromBatch}); a contiguous window needs about 2·log2(size) hashes.
   */
  batchProof(indices: readonly number[], size: number = this.#size): Uint8Array[] {
    this.#check(size);
    checkIndices(indices, size);
    const out: Uint8Array[] = [];
    let next = 0; // first index not yet left behind
    const walk = (lo: number, hi: number) => {
      while (next < indices.length && indices[next] < lo) next++;
      const has = next < indices.length && indices[next] < hi;
      if (!has) {
        out.push(this.subtree(lo, hi));
        return;
      }
      if (hi - lo === 1) return;
      const k = largestPowerOfTwoBelow(hi - lo);
      walk(lo, lo + k);
      walk(lo + k, hi);
    };
    if (size > 0) walk(0, size);
    return out;
  }
}

function checkIndices(indices: readonly number[], size: number): void {
  for (let i = 0; i < indices.length; i++) {
    const v = indices[i];
    if (!Number.isInteger(v) || v < 0 || v >= size || (i > 0 && v <= indices[i - 1])) {
      throw new RangeError("leaf indices must be distinct, sorted and inside the tree");
    }
  }
}

/**
 * RFC 9162 §2.1.3.2: true when `proof` shows the leaf hash at `index` is in the tree of `size`
 * whose root is `root`.
 */
export function verifyInclusion(
  leafHash: Uint8Array,
  proof: readonly Uint8Array[],
  tree: { index: number; size: number; root: Uint8Array },
): boolean {
  const { index, size, root } = tree;
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) {
    return false;
  }
  let fn = index;
  let sn = size - 1;
  const r = leafHash.slice();
  for (const p of proof) {
    if (p.length !== MERKLE_HASH_BYTES || sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      merkleNodeHash(p, r, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      merkleNodeHash(r, p, r);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal32(r, root);
}

/**
 * RFC 9162 §2.1.4.2: true when `proof` shows the tree of `oldSize` (root `oldRoot`) is a prefix
 * of the tree of `newSize` (root `newRoot`): the log only grew. Equal sizes need equal roots
 * and an empty proof; size 0 is a prefix of everything.
 */
export function verifyConsistency(
  proof: readonly Uint8Array[],
  trees: { oldSize: number; oldRoot: Uint8Array; newSize: number; newRoot: Uint8Array },
): boolean {
  const { oldSize, oldRoot, newSize, newRoot } = trees;
  if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize)) return false;
  if (oldSize < 0 || oldSize > newSize) return false;
  if (oldSize === newSize) return proof.length === 0 && equal32(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0;
  if (proof.length === 0 || proof.some((p) => p.length !== MERKLE_HASH_BYTES)) return false;
  const path = (oldSize & (oldSize - 1)) === 0 ? [oldRoot, ...proof] : [...proof];
  let fn = oldSize - 1;
  let sn = newSize - 1;
  while (fn % 2 === 1) {
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  const fr = path[0].slice();
  const sr = path[0].slice();
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      merkleNodeHash(c, fr, fr);
      merkleNodeHash(c, sr, sr);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      merkleNodeHash(sr, c, sr);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && equal32(fr, oldRoot) && equal32(sr, newRoot);
}

/**
 * Rebuilds the root of a tree of `size` from some of its leaves (`indices`, sorted and
 * distinct, with their leaf hashes back to back in `leafHashes`) and the batch proof
 * {@linkcode MerkleTree.batchProof} made for them. Undefined when the proof has the wrong number
 * of hashes. Compare the result with the checkpoint's root.
 */
export function merkleRootFromBatch(
  size: number,
  leaves: { indices: readonly number[]; leafHashes: Uint8Array },
  proof: readonly Uint8Array[],
): Uint8Array | undefined {
  const { indices, leafHashes } = leaves;
  if (!Number.isSafeInteger(size) || size < 0) return undefined;
  try {
    checkIndices(indices, size);
  } catch {
    return undefined;
  }
  if (leafHashes.length !== indices.length * MERKLE_HASH_BYTES) return undefined;
  if (size === 0) return proof.length === 0 ? emptyMerkleRoot() : undefined;
  let used = 0;
  let next = 0;
  let bad = false;
  // Each subtree's hash is written into a slot of one scratch buffer (two per level: a node's
  // left and right), not into a new array: a 100 000-leaf window has ~200 000 of them.
  const slots = new Uint8Array(2 * (MAX_TREE_DEPTH + 1) * MERKLE_HASH_BYTES);
  const walk = (lo: number, hi: number, slot: number, depth: number): void => {
    const at = slot * MERKLE_HASH_BYTES;
    while (next < indices.length && indices[next] < lo) next++;
    const has = next < indices.length && indices[next] < hi;
    if (!has) {
      const p = proof[used++];
      if (p === undefined || p.length !== MERKLE_HASH_BYTES) {
        bad = true;
        slots.fill(0, at, at + MERKLE_HASH_BYTES);
      } else slots.set(p, at);
      return;
    }
    if (hi - lo === 1) {
      slots.set(leafHashes.subarray(next * MERKLE_HASH_BYTES, (next + 1) * MERKLE_HASH_BYTES), at);
      return;
    }
    const k = largestPowerOfTwoBelow(hi - lo);
    const left = 2 * (depth + 1);
    walk(lo, lo + k, left, depth + 1);
    walk(lo + k, hi, left + 1, depth + 1);
    const l = left * MERKLE_HASH_BYTES;
    sha256Prefixed64(NODE, slots, l, slots, l + MERKLE_HASH_BYTES, slots, at);
  };
  walk(0, size, 0, 0);
  return bad || used !== proof.length ? undefined : slots.slice(0, MERKLE_HASH_BYTES);
}

/** Levels below a tree's root: a safe-integer size has at most 53 (2^53 leaves). */
const MAX_TREE_DEPTH = 53;
