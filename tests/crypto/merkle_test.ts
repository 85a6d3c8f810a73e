// RFC 9162 Merkle trees: the fast small-message SHA-256 against node:crypto, roots against the
// RFC 6962 / Certificate Transparency test vectors, and every proof against a direct
// transcription of the RFC's recursive definitions (MTH, PATH, PROOF) over many tree sizes.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { createHash } from "node:crypto";
import { fromHex, toHex } from "../../src/canonical/mod.ts";
import {
  emptyMerkleRoot,
  MerkleFrontier,
  merkleLeafHash,
  merkleNodeHash,
  merkleRoot,
  merkleRootFromBatch,
  MerkleTree,
  verifyConsistency,
  verifyInclusion,
} from "../../src/crypto/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";

function nativeSha(...parts: Uint8Array[]): Uint8Array {
  const h = createHash("sha256");
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

// The reference: RFC 9162 §2.1.1, §2.1.3.1 and §2.1.4.1, written as the RFC writes them.
function k(n: number): number {
  let p = 1;
  while (p * 2 < n) p *= 2;
  return p;
}
function mth(d: Uint8Array[]): Uint8Array {
  if (d.length === 0) return nativeSha();
  // The same definition, each range's hash computed once: PATH and PROOF ask MTH of the same
  // ranges over and over (without this the size-70 test made ~10^6 node:crypto hashes, ~6 s
  // of CPU). A range of the test's data is named by its first leaf's array and its length.
  const known = mthOf.get(d[0])?.get(d.length);
  if (known !== undefined) return known;
  const s = k(d.length);
  const hash = d.length === 1
    ? nativeSha(new Uint8Array([0]), d[0])
    : nativeSha(new Uint8Array([1]), mth(d.slice(0, s)), mth(d.slice(s)));
  const byLength = mthOf.get(d[0]) ?? new Map<number, Uint8Array>();
  mthOf.set(d[0], byLength.set(d.length, hash));
  return hash;
}
const mthOf = new WeakMap<Uint8Array, Map<number, Uint8Array>>();
function path(m: number, d: Uint8Array[]): Uint8Array[] {
  if (d.length === 1) return [];
  const s = k(d.length);
  return m < s
    ? [...path(m, d.slice(0, s)), mth(d.slice(s))]
    : [...path(m - s, d.slice(s)), mth(d.slice(0, s))];
}
function subproof(m: number, d: Uint8Array[], b: boolean): Uint8Array[] {
  if (m === d.length) return b ? [] : [mth(d)];
  const s = k(d.length);
  return m <= s
    ? [...subproof(m, d.slice(0, s), b), mth(d.slice(s))]
    : [...subproof(m - s, d.slice(s), false), mth(d.slice(0, s))];
}

function leafHashes(d: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(d.length * 32);
  d.forEach((x, i) => out.set(nativeSha(new Uint8Array([0]), x), i * 32));
  return out;
}

const hex = (b: Uint8Array) => toHex(b);

Deno.test("leaf and node hashes equal node:crypto SHA-256 with the 0x00 / 0x01 prefixes", () => {
  const rnd = new SeededRandom(3);
  for (let i = 0; i < 200; i++) {
    const a = rnd.bytes(32);
    const b = rnd.bytes(32);
    deepStrictEqual(merkleLeafHash(a), nativeSha(new Uint8Array([0]), a));
    deepStrictEqual(merkleNodeHash(a, b), nativeSha(new Uint8Array([1]), a, b));
  }
  strictEqual(
    hex(emptyMerkleRoot()),
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
  );
});

Deno.test("roots match the Certificate Transparency test vectors", () => {
  // RFC 6962 reference test data (certificate-transparency, merkle_tree_test).
  const data = [
    "",
    "00",
    "10",
    "2021",
    "3031",
    "40414243",
    "5051525354555657",
    "606162636465666768696a6b6c6d6e6f",
  ].map((h) => fromHex(h));
  const roots = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
  ];
  const leaves = leafHashes(data);
  const tree = new MerkleTree(leaves, 8);
  const f = new MerkleFrontier();
  for (let n = 1; n <= 8; n++) {
    f.push(leaves, (n - 1) * 32);
    strictEqual(hex(f.root()), roots[n - 1], `frontier root of ${n}`);
    strictEqual(hex(tree.root(n)), roots[n - 1], `tree root of ${n}`);
    strictEqual(hex(merkleRoot(leaves, n)), roots[n - 1]);
  }
});

Deno.test("roots and proofs equal RFC 9162's recursive definitions for every size up to 70", () => {
  const rnd = new SeededRandom(11);
  const data = Array.from({ length: 70 }, () => rnd.bytes(32));
  const tree = new MerkleTree(leafHashes(data), data.length);
  for (let n = 1; n <= data.length; n++) {
    const d = data.slice(0, n);
    const root = mth(d);
    deepStrictEqual(tree.root(n), root);
    for (let m = 0; m < n; m++) {
      const proof = tree.inclusionProof(m, n);
      deepStrictEqual(proof, path(m, d), `PATH(${m}, ${n})`);
      ok(verifyInclusion(tree.leaf(m), proof, { index: m, size: n, root }), `inclusion ${m}/${n}`);
    }
    for (let m = 1; m < n; m++) {
      const proof = tree.consistencyProof(m, n);
      deepStrictEqual(proof, subproof(m, d, true), `PROOF(${m}, ${n})`);
      ok(
        verifyConsistency(proof, {
          oldSize: m,
          oldRoot: mth(data.slice(0, m)),
          newSize: n,
          newRoot: root,
        }),
        `consistency ${m}→${n}`,
      );
    }
  }
});

Deno.test("inclusion verification refuses a wrong leaf, index, size, root or a changed proof", () => {
  const rnd = new SeededRandom(5);
  const data = Array.from({ length: 37 }, () => rnd.bytes(32));
  const tree = new MerkleTree(leafHashes(data), 37);
  const root = tree.root();
  for (const m of [0, 1, 16, 31, 32, 36]) {
    const proof = tree.inclusionProof(m);
    const leaf = tree.leaf(m);
    ok(verifyInclusion(leaf, proof, { index: m, size: 37, root }));
    ok(!verifyInclusion(tree.leaf((m + 1) % 37), proof, { index: m, size: 37, root }));
    ok(!verifyInclusion(leaf, proof, { index: (m + 1) % 37, size: 37, root }));
    // (The size only shapes the path; it is bound by the signed checkpoint, not by the proof.)
    ok(!verifyInclusion(leaf, proof, { index: m, size: 1, root }));
    ok(!verifyInclusion(leaf, proof, { index: m, size: 37, root: tree.root(36) }));
    ok(!verifyInclusion(leaf, proof.slice(1), { index: m, size: 37, root }));
    ok(!verifyInclusion(leaf, [...proof, proof[0]], { index: m, size: 37, root }));
    const bent = proof.map((p) => p.slice());
    bent[0][5] ^= 1;
    ok(!verifyInclusion(leaf, bent, { index: m, size: 37, root }));
  }
  ok(!verifyInclusion(tree.leaf(0), [], { index: 37, size: 37, root }));
});

Deno.test("consistency verification refuses a rewritten history, a wrong size or a changed proof", () => {
  const rnd = new SeededRandom(9);
  const data = Array.from({ length: 40 }, () => rnd.bytes(32));
  const tree = new MerkleTree(leafHashes(data), 40);
  // History rewritten: leaf 3 replaced, then the log grew. Its proof cannot bridge the roots.
  const forged = [...data];
  forged[3] = rnd.bytes(32);
  const forgedTree = new MerkleTree(leafHashes(forged), 40);
  for (const m of [1, 4, 7, 8, 20, 32]) {
    const oldRoot = tree.root(m);
    const good = tree.consistencyProof(m, 40);
    ok(verifyConsistency(good, { oldSize: m, oldRoot, newSize: 40, newRoot: tree.root() }));
    ok(!verifyConsistency(good, { oldSize: m, oldRoot, newSize: 100, newRoot: tree.root() }));
    ok(
      !verifyConsistency(good, {
        oldSize: m,
        oldRoot: tree.root(m + 1),
        newSize: 40,
        newRoot: tree.root(),
      }),
    );
    if (m > 3) {
      const lie = forgedTree.consistencyProof(m, 40);
      ok(
        !verifyConsistency(lie, { oldSize: m, oldRoot, newSize: 40, newRoot: forgedTree.root() }),
        `a rewritten history passes consistency from ${m}`,
      );
    }
  }
  ok(
    verifyConsistency([], { oldSize: 5, oldRoot: tree.root(5), newSize: 5, newRoot: tree.root(5) }),
  );
  ok(
    !verifyConsistency([], {
      oldSize: 5,
      oldRoot: tree.root(5),
      newSize: 5,
      newRoot: tree.root(6),
    }),
  );
  ok(
    !verifyConsistency([], {
      oldSize: 5,
      oldRoot: tree.root(5),
      newSize: 9,
      newRoot: tree.root(9),
    }),
  );
  ok(
    verifyConsistency([], {
      oldSize: 0,
      oldRoot: emptyMerkleRoot(),
      newSize: 9,
      newRoot: tree.root(9),
    }),
  );
  ok(
    !verifyConsistency([], {
      oldSize: 10,
      oldRoot: tree.root(10),
      newSize: 9,
      newRoot: tree.root(9),
    }),
  );
});

Deno.test("a batch proof rebuilds the root from any subset of leaves and nothing else", () => {
  const rnd = new SeededRandom(21);
  const data = Array.from({ length: 53 }, () => rnd.bytes(32));
  const leaves = leafHashes(data);
  const tree = new MerkleTree(leaves, 53);
  const subsets = [[], [0], [52], [10, 11, 12, 13, 14], [0, 1, 2, 3, 4, 5, 6, 7], [3, 17, 40]];
  for (let i = 0; i < 20; i++) {
    subsets.push(
      [...new Set(Array.from({ length: 8 }, () => rnd.bytes(1)[0] % 53))].sort((a, b) => a - b),
    );
  }
  for (const size of [53, 40, 1]) {
    for (const set of subsets) {
      const indices = set.filter((x) => x < size);
      const proof = tree.batchProof(indices, size);
      const known = new Uint8Array(indices.length * 32);
      indices.forEach((x, j) => known.set(tree.leaf(x), j * 32));
      deepStrictEqual(
        merkleRootFromBatch(size, { indices, leafHashes: known }, proof),
        tree.root(size),
      );
      if (indices.length > 0) {
        const wrong = known.slice();
        wrong[0] ^= 1;
        ok(
          hex(
            merkleRootFromBatch(size, { indices, leafHashes: wrong }, proof) ?? new Uint8Array(),
          ) !== hex(tree.root(size)),
        );
        if (proof.length > 0) {
          strictEqual(
            merkleRootFromBatch(size, { indices, leafHashes: known }, proof.slice(1)),
            undefined,
          );
        }
      }
      strictEqual(
        merkleRootFromBatch(size, { indices, leafHashes: known }, [
          ...proof,
          proof[0] ?? tree.root(),
        ]),
        undefined,
      );
    }
  }
  // A contiguous window of a large tree needs only a logarithmic number of hashes.
  const big = Array.from({ length: 5000 }, (_, i) => nativeSha(new Uint8Array([i & 255, i >> 8])));
  const bigTree = new MerkleTree(leafHashes(big), 5000);
  const window = Array.from({ length: 1000 }, (_, i) => 2345 + i);
  ok(bigTree.batchProof(window).length <= 2 * 13);
});
