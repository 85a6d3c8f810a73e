// The SHA-256 digests of a log's lines in order (the leaves of its checkpoint tree), collected
// while the gate streams the log. For an entry the digest is its entry hash, already computed;
// only lines that are not entries are hashed here. 32 bytes a line in one growing buffer.
import { sha256HexPure } from "../crypto/mod.ts";
import { digestInto } from "../lineage/mod.ts";

/** Collects line digests back to back. */
export class LeafDigests {
  #buf: Uint8Array;
  #count = 0;
  #unknown: number[] = [];
  readonly #countOnly: boolean;

  /**
   * With `countOnly` (nothing to check the digests against) lines are only counted. `expected`:
   * the lines to make room for up front (a hint; the buffer grows past it).
   */
  constructor(countOnly = false, expected = 0) {
    this.#countOnly = countOnly;
    this.#buf = new Uint8Array(countOnly ? 0 : 32 * Math.max(4096, expected));
  }

  /** Adds the next line: its entry hash when it is an entry, else its bytes are hashed. */
  add(entryHash: string | undefined, bytes: Uint8Array, tooLong: boolean): void {
    if (this.#countOnly) {
      this.#count++;
      return;
    }
    this.#room();
    const at = this.#count * 32;
    if (tooLong) {
      // Only the start of the line was kept: its digest is unknown.
      this.#unknown.push(this.#count);
    } else if (entryHash === undefined || !digestInto(entryHash, this.#buf, at)) {
      digestInto(`sha256:${sha256HexPure(bytes)}`, this.#buf, at);
    }
    this.#count++;
  }

  /**
   * Adds the next line, an entry whose hash the caller decoded already: the 32 bytes of
   * `digest` at `at` (what {@linkcode LeafDigests.add} would decode from its `sha256:` text).
   */
  addDigest(digest: Uint8Array, at: number): void {
    if (!this.#countOnly) {
      this.#room();
      const to = this.#count * 32;
      for (let b = 0; b < 32; b++) this.#buf[to + b] = digest[at + b];
    }
    this.#count++;
  }

  #room(): void {
    if (this.#buf.length < (this.#count + 1) * 32) {
      const grown = new Uint8Array(this.#buf.length * 2);
      grown.set(this.#buf);
      this.#buf = grown;
    }
  }

  /** Lines added. */
  get count(): number {
    return this.#count;
  }

  /** The digests (a view), their count and the lines whose digest is unknown. */
  leaves(): { digests: Uint8Array; count: number; unknown: number[] } {
    return {
      digests: this.#buf.subarray(0, this.#count * 32),
      count: this.#count,
      unknown: this.#unknown,
    };
  }
}
