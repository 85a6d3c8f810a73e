// SHA-256 (FIPS 180-4) of the two tiny messages a Merkle tree hashes: a leaf (one prefix byte
// and a 32-byte digest: one block) and an interior node (one prefix byte and two digests: two
// blocks). A checkpoint check hashes ~3 such messages per log line, so this works in place on
// preallocated words: no allocation, no native call (whose per-call cost and native objects
// would dominate at 33 and 65 bytes). Tests compare it with node:crypto on random input.

const K = new Int32Array([
  0x428a2f98,
  0x71374491,
  0xb5c0fbcf,
  0xe9b5dba5,
  0x3956c25b,
  0x59f111f1,
  0x923f82a4,
  0xab1c5ed5,
  0xd807aa98,
  0x12835b01,
  0x243185be,
  0x550c7dc3,
  0x72be5d74,
  0x80deb1fe,
  0x9bdc06a7,
  0xc19bf174,
  0xe49b69c1,
  0xefbe4786,
  0x0fc19dc6,
  0x240ca1cc,
  0x2de92c6f,
  0x4a7484aa,
  0x5cb0a9dc,
  0x76f988da,
  0x983e5152,
  0xa831c66d,
  0xb00327c8,
  0xbf597fc7,
  0xc6e00bf3,
  0xd5a79147,
  0x06ca6351,
  0x14292967,
  0x27b70a85,
  0x2e1b2138,
  0x4d2c6dfc,
  0x53380d13,
  0x650a7354,
  0x766a0abb,
  0x81c2c92e,
  0x92722c85,
  0xa2bfe8a1,
  0xa81a664b,
  0xc24b8b70,
  0xc76c51a3,
  0xd192e819,
  0xd6990624,
  0xf40e3585,
  0x106aa070,
  0x19a4c116,
  0x1e376c08,
  0x2748774c,
  0x34b0bcb5,
  0x391c0cb3,
  0x4ed8aa4a,
  0x5b9cca4f,
  0x682e6ff3,
  0x748f82ee,
  0x78a5636f,
  0x84c87814,
  0x8cc70208,
  0x90befffa,
  0xa4506ceb,
  0xbef9a3f7,
  0xc67178f2,
]);
/** SHA-256's initial state. */
export const SHA256_IV: Int32Array = new Int32Array([
  0x6a09e667,
  0xbb67ae85,
  0x3c6ef372,
  0xa54ff53a,
  0x510e527f,
  0x9b05688c,
  0x1f83d9ab,
  0x5be0cd19,
]);

const W = new Int32Array(64);
const H = new Int32Array(8);
// The message (at most two blocks) as big-endian words, padding included.
const M = new Int32Array(32);

/** SHA-256's compression of the 16 words at `offset` of `words` into `state` (8 words). */
export function compressInto(state: Int32Array, words: Int32Array, offset: number): void {
  const H = state;
  for (let i = 0; i < 16; i++) W[i] = words[offset + i];
  for (let i = 16; i < 64; i++) {
    const w15 = W[i - 15];
    const w2 = W[i - 2];
    const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
    const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = H[0], b = H[1], c = H[2], d = H[3], e = H[4], f = H[5], g = H[6], h = H[7];
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const ch = (e & f) ^ (~e & g);
    const t1 = (h + S1 + ch + K[i] + W[i]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const maj = (a & b) ^ (a & c) ^ (b & c);
    const t2 = (S0 + maj) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0] + a) | 0;
  H[1] = (H[1] + b) | 0;
  H[2] = (H[2] + c) | 0;
  H[3] = (H[3] + d) | 0;
  H[4] = (H[4] + e) | 0;
  H[5] = (H[5] + f) | 0;
  H[6] = (H[6] + g) | 0;
  H[7] = (H[7] + h) | 0;
}

// The padded message bytes (at most two blocks).
const BYTES = new Uint8Array(128);

/** Writes the message `prefix ‖ a ‖ b?` into M, padded; returns its number of blocks. */
function load(prefix: number, a: Uint8Array, aAt: number, b?: Uint8Array, bAt = 0): number {
  const n = b === undefined ? 33 : 65;
  const blocks = n + 9 > 64 ? 2 : 1;
  const end = blocks * 64;
  BYTES[0] = prefix;
  for (let i = 0; i < 32; i++) BYTES[1 + i] = a[aAt + i];
  if (b !== undefined) { for (let i = 0; i < 32; i++) BYTES[33 + i] = b[bAt + i]; }
  BYTES[n] = 0x80;
  BYTES.fill(0, n + 1, end - 4);
  const bits = n * 8;
  BYTES[end - 4] = bits >>> 24;
  BYTES[end - 3] = (bits >>> 16) & 0xff;
  BYTES[end - 2] = (bits >>> 8) & 0xff;
  BYTES[end - 1] = bits & 0xff;
  for (let w = 0; w < blocks * 16; w++) {
    const at = 4 * w;
    M[w] = (BYTES[at] << 24) | (BYTES[at + 1] << 16) | (BYTES[at + 2] << 8) | BYTES[at + 3];
  }
  return blocks;
}

function finish(blocks: number, out: Uint8Array, outAt: number): void {
  H.set(SHA256_IV);
  for (let blk = 0; blk < blocks; blk++) compressInto(H, M, blk * 16);
  for (let i = 0; i < 8; i++) {
    const v = H[i];
    out[outAt + 4 * i] = v >>> 24;
    out[outAt + 4 * i + 1] = (v >>> 16) & 0xff;
    out[outAt + 4 * i + 2] = (v >>> 8) & 0xff;
    out[outAt + 4 * i + 3] = v & 0xff;
  }
}

/** SHA-256(prefix ‖ a[aAt..aAt+32]) into out[outAt..outAt+32]. */
export function sha256Prefixed32(
  prefix: number,
  a: Uint8Array,
  aAt: number,
  out: Uint8Array,
  outAt: number,
): void {
  finish(load(prefix, a, aAt), out, outAt);
}

/** SHA-256(prefix ‖ a[aAt..aAt+32] ‖ b[bAt..bAt+32]) into out[outAt..outAt+32]. */
export function sha256Prefixed64(
  prefix: number,
  a: Uint8Array,
  aAt: number,
  b: Uint8Array,
  bAt: number,
  out: Uint8Array,
  outAt: number,
): void {
  finish(load(prefix, a, aAt, b, bAt), out, outAt);
}
