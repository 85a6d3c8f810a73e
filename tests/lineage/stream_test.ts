// Streaming framing and the compact digest table.
import { deepStrictEqual, equal, strictEqual } from "node:assert/strict";
import { splitLines } from "../../src/canonical/mod.ts";
import { digestInto, DigestTable, digestText, streamLines } from "../../src/lineage/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";

async function collect(chunks: Uint8Array[], max?: number) {
  const out = [];
  for await (const l of streamLines(chunks, { maxLineBytes: max })) out.push(l);
  return out;
}

Deno.test("streamed lines equal splitLines for random bytes cut at random places", async () => {
  const rnd = new SeededRandom(3);
  for (let round = 0; round < 50; round++) {
    const bytes = rnd.bytes(200 + round * 7).map((
      b,
    ) => (b % 9 === 0 ? 0x0a : b % 9 === 1 ? 0x0d : b));
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length;) {
      const n = 1 + (rnd.bytes(1)[0] % 40);
      chunks.push(bytes.slice(i, i + n));
      i += n;
    }
    const got = await collect(chunks);
    const want = splitLines(bytes);
    deepStrictEqual(got.map((l) => [...l.bytes]), want.lines.map((l) => [...l]));
    equal(got.length === 0 || got[got.length - 1].terminated, want.endsWithNewline);
    // Offsets point at each line's first byte.
    for (const l of got) {
      deepStrictEqual([...bytes.subarray(l.offset, l.offset + l.bytes.length)], [...l.bytes]);
    }
  }
});

Deno.test("a line over the limit is flagged and truncated, and the next line is intact", async () => {
  const enc = new TextEncoder();
  const got = await collect([enc.encode("x".repeat(50)), enc.encode("yy\nok\n")], 10);
  strictEqual(got.length, 2);
  equal(got[0].tooLong, true);
  strictEqual(got[0].bytes.length, 10);
  strictEqual(new TextDecoder().decode(got[1].bytes), "ok");
  strictEqual(got[1].offset, 53);
});

Deno.test("digest table: hex round trip, strict lowercase hex, growth", () => {
  const out = new Uint8Array(32);
  const hash = "sha256:" + "0123456789abcdef".repeat(4);
  equal(digestInto(hash, out), true);
  strictEqual(digestText(out), hash);
  for (
    const bad of [
      hash.replace("a", "A"),
      hash.slice(0, 70) + "g",
      hash.slice(0, 70) + "á",
      hash + "0",
      "md5:" + "0".repeat(67),
    ]
  ) {
    equal(digestInto(bad, out), false, bad);
  }
  const t = new DigestTable(2);
  for (let i = 0; i < 5000; i++) t.set("sha256:" + i.toString(16).padStart(64, "0"), i);
  strictEqual(t.size, 5000);
  for (let i = 0; i < 5000; i += 97) {
    strictEqual(t.get("sha256:" + i.toString(16).padStart(64, "0")), i);
  }
  equal(t.has("sha256:" + "f".repeat(64)), false);
  equal(t.set("nope", 1), false);
});

Deno.test("digest table: any capacity hint, slot counts that are not powers of two", () => {
  const rnd = new SeededRandom(11);
  const keys = Array.from({ length: 300 }, () => digestText(rnd.bytes(32)));
  for (const capacity of [0, 1, 20, 299, 300, 1000, -5, Number.NaN, Infinity]) {
    const t = new DigestTable(capacity);
    keys.forEach((k, i) => equal(t.set(k, i), true));
    strictEqual(t.size, keys.length);
    keys.forEach((k, i) => strictEqual(t.get(k), i, `${capacity} ${k}`));
    const found = [...t.entries()].map((e) => digestText(e.digests, e.at)).sort();
    deepStrictEqual(found, [...keys].sort());
    for (let i = 0; i < 50; i++) equal(t.has(digestText(rnd.bytes(32))), false);
  }
});

Deno.test("digest table: keys given as bytes at an offset are the keys given as text", () => {
  const rnd = new SeededRandom(29);
  // Keys alike in their first four bytes (one slot) and random ones, past two growths.
  const keys = Array.from({ length: 600 }, (_, i) => {
    const d = rnd.bytes(32);
    if (i % 3 === 0) d.set([1, 2, 3, 4]);
    return d;
  });
  const byText = new DigestTable(4);
  const byBytes = new DigestTable(4);
  const buffer = new Uint8Array(40);
  keys.forEach((k, i) => {
    buffer.set(k, 8); // at an offset, with other bytes around it
    equal(byBytes.getDigest(buffer, 8), undefined);
    equal(byBytes.addDigest(buffer, 8, i), true);
    equal(byBytes.addDigest(buffer, 8, -1), false); // already a key: kept
    byText.set(digestText(k), i);
  });
  keys.forEach((k, i) => {
    buffer.set(k, 8);
    strictEqual(byBytes.getDigest(buffer, 8), i);
    strictEqual(byBytes.get(digestText(k)), i);
    strictEqual(byText.getDigest(k), i);
    equal(byText.hasDigest(buffer, 8), true);
  });
  byBytes.setDigest(keys[5], 0, 99); // set replaces
  strictEqual(byBytes.get(digestText(keys[5])), 99);
  strictEqual(byBytes.size, byText.size);
  const near = keys[7].slice();
  near[31] ^= 1;
  equal(byBytes.getDigest(near), undefined);
  equal(byBytes.hasDigest(near), false);
});
