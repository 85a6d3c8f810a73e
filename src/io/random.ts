/** Randomness source, injected so ids and keys are reproducible in tests. */
export interface Random {
  /** `n` random bytes. */
  bytes(n: number): Uint8Array;
}

/** Cryptographically secure randomness from the runtime. */
export const systemRandom: Random = {
  bytes: (n) => crypto.getRandomValues(new Uint8Array(n)),
};

/**
 * A deterministic byte stream (xorshift128+) for tests and seeded run ids. Not for keys.
 * The 64-bit state is kept as 32-bit halves: the same stream as 64-bit BigInt arithmetic
 * (tests/io/random_test.ts holds that transcription), without BigInt operations per byte
 * (tests draw tens of MB from it).
 */
export class SeededRandom implements Random {
  #s0h: number;
  #s0l: number;
  #s1h: number;
  #s1l: number;
  /** The last output's low and high halves. */
  #lo = 0;
  #hi = 0;

  constructor(seed: bigint | number) {
    const s = BigInt(seed);
    const s0 = (s ^ 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn || 1n;
    const s1 = (s * 0xbf58476d1ce4e5b9n + 0x94d049bb133111ebn) & 0xffffffffffffffffn || 2n;
    this.#s0h = Number(s0 >> 32n);
    this.#s0l = Number(s0 & 0xffffffffn);
    this.#s1h = Number(s1 >> 32n);
    this.#s1l = Number(s1 & 0xffffffffn);
  }

  /** One step: the next 64-bit output into #lo/#hi. */
  #next(): void {
    // a = s0; b = s1; s0 = b
    let ah = this.#s0h;
    let al = this.#s0l;
    const bh = this.#s1h;
    const bl = this.#s1l;
    this.#s0h = bh;
    this.#s0l = bl;
    // a ^= a << 23
    ah = (ah ^ ((ah << 23) | (al >>> 9))) >>> 0;
    al = (al ^ (al << 23)) >>> 0;
    // s1 = a ^ b ^ (a >> 17) ^ (b >> 26)
    const nh = (ah ^ bh ^ (ah >>> 17) ^ (bh >>> 26)) >>> 0;
    const nl = (al ^ bl ^ ((al >>> 17) | (ah << 15)) ^ ((bl >>> 26) | (bh << 6))) >>> 0;
    this.#s1h = nh;
    this.#s1l = nl;
    // out = s1 + b (mod 2^64)
    const lo = nl + bl;
    this.#lo = lo >>> 0;
    this.#hi = (nh + bh + (lo > 0xffffffff ? 1 : 0)) >>> 0;
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 8) {
      this.#next();
      // Little-endian, as the 64-bit value shifted right by 8s: the low half's bytes first.
      let w = this.#lo;
      const end = Math.min(n, i + 8);
      for (let j = i; j < end; j++) {
        if (j === i + 4) w = this.#hi;
        out[j] = w & 0xff;
        w >>>= 8;
      }
    }
    return out;
  }
}
