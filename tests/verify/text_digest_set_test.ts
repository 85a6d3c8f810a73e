// The pack window's external-parent set asked by digest: the same answers as the Set of texts.
import { strictEqual } from "node:assert/strict";
import { SeededRandom } from "../../src/io/mod.ts";
import { digestInto } from "../../src/lineage/mod.ts";
import { TextDigestSet } from "../../src/verify/_text_digest_set.ts";

Deno.test("a set of entry hashes asked by digest answers as the Set of its texts, for texts that are no digest's too", () => {
  const rnd = new SeededRandom(12);
  const hex = () => Array.from(rnd.bytes(32), (b) => b.toString(16).padStart(2, "0")).join("");
  const digestTexts = Array.from({ length: 50 }, () => `sha256:${hex()}`);
  // Texts a manifest or a log could hold that are no digest's: upper case, short, long, another
  // prefix, non-ASCII characters that mask onto hex digits (İ is 0x130, ０ is 0xff10).
  const odd = (t: string) => [
    t.toUpperCase(),
    t.slice(0, -1),
    t + "0",
    "SHA256:" + t.slice(7),
    t.slice(0, 20) + "\u0130" + t.slice(21),
    t.slice(0, 30) + "\uff10" + t.slice(31),
    "",
  ];
  const member = [...digestTexts.slice(0, 25), ...odd(digestTexts[0]).slice(0, 4)];
  for (const texts of [new Set<string>(), new Set(member)]) {
    const set = new TextDigestSet(texts);
    const asked = [...digestTexts, ...digestTexts.flatMap(odd), ...member];
    const buf = new Uint8Array(70);
    for (const text of asked) {
      const want = texts.has(text);
      strictEqual(set.has(text, undefined, 0), want, text);
      // With the digest the caller decoded (at an offset), when the text is a digest's.
      if (digestInto(text, buf, 5)) strictEqual(set.has(text, buf, 5), want, text);
    }
  }
});
