// A set of entry hashes asked by digest: the pack window's external parents, looked up for
// every entry and each of its parents with the digests the gate decoded already.
import { digestInto, DigestTable } from "../lineage/mod.ts";

/**
 * Membership in a set of entry hashes, asked with the digest the gate decoded already: a
 * lookup by a freshly received hash text would hash its 71 characters first (per entry and per
 * parent). A text that is no digest's (`sha256:` + lowercase hex) is looked up as text; the
 * answers are the Set's.
 */
export class TextDigestSet {
  readonly #texts: ReadonlySet<string>;
  readonly #digests: DigestTable;
  readonly #scratch = new Uint8Array(32);

  constructor(texts: ReadonlySet<string>) {
    this.#texts = texts;
    this.#digests = new DigestTable(texts.size);
    for (const t of texts) this.#digests.set(t, 0);
  }

  /** `texts.has(text)`; `digest`, when given, holds the digest of `text` at `at`. */
  has(text: string, digest: Uint8Array | undefined, at: number): boolean {
    if (this.#texts.size === 0) return false;
    if (digest !== undefined) return this.#digests.hasDigest(digest, at);
    // Two texts that decode are equal exactly when their digests are; one that does not is
    // no digest's text, so only the Set can hold it.
    return digestInto(text, this.#scratch)
      ? this.#digests.hasDigest(this.#scratch, 0)
      : this.#texts.has(text);
  }
}
