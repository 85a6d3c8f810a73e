/** Randomness source, injected so ids and keys are reproducible in tests. */
export interface Random {
  /** `n` random bytes. */
  bytes(n: number): Uint8Array;
}

/** Cryptographically secure randomness from the runtime. */
export const systemRandom: Random = {
  bytes: (n) => crypto.getRandomValues(new Uint8Array(n)),
};

/** A deterministic byte stream (xorshift128+) for tests and seeded run ids. Not for keys. */
export class SeededRandom implements Random {
  #s0: bigint;
  #s1: bigint;

  constructor(seed: bigint | number) {
    const s = BigInt(seed);
    this.#s0 = (s ^ 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn || 1n;
    this.#s1 = (s * 0xbf58476d1ce4e5b9n + 0x94d049bb133111ebn) & 0xffffffffffffffffn || 2n;
  }

  #next(): bigint {
    const mask = 0xffffffffffffffffn;
    let s1 = this.#s0;
    const s0 = this.#s1;
    this.#s0 = s0;
    s1 ^= (s1 << 23n) & mask;
    this.#s1 = s1 ^ s0 ^ (s1 >> 17n) ^ (s0 >> 26n);
    return (this.#s1 + s0) & mask;
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 8) {
      let v = this.#next();
      for (let j = i; j < Math.min(n, i + 8); j++) {
        out[j] = Number(v & 0xffn);
        v >>= 8n;
      }
    }
    return out;
  }
}
