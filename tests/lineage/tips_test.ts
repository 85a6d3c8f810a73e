// Tips projection bytes and the incremental tips/forks analysis.
import { deepStrictEqual, strictEqual, throws } from "node:assert/strict";
import { SeededRandom } from "../../src/io/mod.ts";
import {
  applyToTipSet,
  digestInto,
  LineageAnalyzer,
  parseTipSet,
  renderTipSet,
  type TipSet,
} from "../../src/lineage/mod.ts";

const h = (c: string) => "sha256:" + c.repeat(64);

Deno.test("a tips file is canon-ascii {merged, open} without a newline", () => {
  const tips: TipSet = { open: [h("b")], merged: [h("a")] };
  strictEqual(
    new TextDecoder().decode(renderTipSet(tips)),
    `{"merged":["${h("a")}"],"open":["${h("b")}"]}`,
  );
  deepStrictEqual(parseTipSet(renderTipSet(tips)), tips);
  throws(() => parseTipSet(new TextEncoder().encode('{"open":["x"],"merged":[]}')));
});

Deno.test("linear successors close their parent; a merge moves its parents to merged", () => {
  let t: TipSet = { open: [], merged: [] };
  t = applyToTipSet(t, { hash: h("1"), parents: [] });
  t = applyToTipSet(t, { hash: h("2"), parents: [h("1")] });
  deepStrictEqual(t, { open: [h("2")], merged: [] });
  t = applyToTipSet(t, { hash: h("3"), parents: [h("2")] });
  t = applyToTipSet(t, { hash: h("4"), parents: [h("2")] }); // a fork: both 3 and 4 are open
  deepStrictEqual(t.open, [h("3"), h("4")]);
  t = applyToTipSet(t, { hash: h("5"), parents: [h("3"), h("4")] });
  deepStrictEqual(t, { open: [h("5")], merged: [h("3"), h("4")] });
  // Applying the same entry twice changes nothing (catch-up replays are safe).
  deepStrictEqual(applyToTipSet(t, { hash: h("5"), parents: [h("3"), h("4")] }), t);
});

Deno.test("the analyzer finds forks, resolves them by covering merges, and splits", () => {
  const a = new LineageAnalyzer();
  const add = (hash: string, parents: string[], content = hash, artefact = "f") =>
    a.add({ hash, artefact_path: artefact, parent_hashes: parents, content_hash: content });
  add(h("1"), []);
  add(h("2"), [h("1")], h("a"));
  add(h("3"), [h("1")], h("a")); // same content: not a fork, but two heads
  deepStrictEqual(a.unresolvedForks(), []);
  deepStrictEqual(a.splitHeads(), [{ artefact_path: "f", open: [h("2"), h("3")] }]);
  add(h("4"), [h("1")], h("b")); // different content: now a fork of three children
  deepStrictEqual(a.unresolvedForks(), [{
    artefact_path: "f",
    parent_hash: h("1"),
    children: [h("2"), h("3"), h("4")],
  }]);
  deepStrictEqual(a.splitHeads(), []); // explained by the fork
  add(h("5"), [h("2"), h("3"), h("4")]);
  deepStrictEqual(a.unresolvedForks(), []);
  deepStrictEqual(a.openTips("f"), [h("5")]);
  // Same parent in another artefact is another group.
  add(h("6"), [h("1")], h("c"), "g");
  deepStrictEqual(a.unresolvedForks("g"), []);
  deepStrictEqual(a.artefacts(), ["f", "g"]);
  deepStrictEqual(a.openTips("f"), [h("5")]);
});

Deno.test("forks under one parent in several artefacts name that parent, whatever the size hint", () => {
  for (const hint of [undefined, 0, 4, 1_000, -7, Number.NaN, Infinity]) {
    const a = new LineageAnalyzer(hint);
    const add = (hash: string, parents: string[], content: string, artefact: string) =>
      a.add({ hash, artefact_path: artefact, parent_hashes: parents, content_hash: content });
    add(h("1"), [], h("a"), "f");
    add(h("9"), [], h("a"), "k");
    // Three artefacts' groups chained under parent 1; forks in the first and the last.
    add(h("2"), [h("1")], h("a"), "f");
    add(h("3"), [h("1")], h("b"), "g");
    add(h("4"), [h("1")], h("c"), "h");
    add(h("5"), [h("1")], h("d"), "h");
    add(h("6"), [h("1")], h("e"), "f");
    add(h("7"), [h("9")], h("a"), "k");
    add(h("8"), [h("9")], h("b"), "k");
    deepStrictEqual(a.unresolvedForks(), [
      { artefact_path: "h", parent_hash: h("1"), children: [h("4"), h("5")] },
      { artefact_path: "f", parent_hash: h("1"), children: [h("2"), h("6")] },
      { artefact_path: "k", parent_hash: h("9"), children: [h("7"), h("8")] },
    ], String(hint));
  }
});

Deno.test("a child seen before its parent never leaves the parent open", () => {
  const a = new LineageAnalyzer();
  a.add({ hash: h("2"), artefact_path: "f", parent_hashes: [h("1")], content_hash: h("x") });
  a.add({ hash: h("1"), artefact_path: "f", parent_hashes: [], content_hash: h("y") });
  deepStrictEqual(a.openTips("f"), [h("2")]);
});

Deno.test("the analyzer finds the same forks, splits and tips when the caller gives the decoded digests", () => {
  const rnd = new SeededRandom(7);
  const pick = <T>(xs: readonly T[]): T => xs[rnd.bytes(1)[0] % xs.length];
  const hex = () => Array.from(rnd.bytes(32), (b) => b.toString(16).padStart(2, "0")).join("");
  for (let round = 0; round < 20; round++) {
    const plain = new LineageAnalyzer();
    const fed = new LineageAnalyzer(round * 10);
    const hashes: string[] = [];
    const digests = new Uint8Array(64);
    for (let k = 0; k < 400; k++) {
      const hash = `sha256:${hex()}`;
      // Parents: earlier entries (shared, so forks), later-looking unknown ones, merges.
      const n = pick([0, 1, 1, 1, 1, 1, 2]);
      const parents = Array.from(
        { length: n },
        () => hashes.length > 0 && rnd.bytes(1)[0] % 5 !== 0 ? pick(hashes) : `sha256:${hex()}`,
      );
      const entry = {
        hash,
        artefact_path: pick(["a.ts", "b.ts", "c/d.ts"]),
        parent_hashes: parents,
        content_hash: pick([h("c"), h("d"), `sha256:${hex()}`]),
      };
      plain.add(entry);
      digestInto(hash, digests, 0);
      if (parents.length === 1) digestInto(parents[0], digests, 32);
      else digests.fill(0xee, 32); // not read: only a single parent is given as bytes
      fed.add(entry, digests);
      hashes.push(hash);
    }
    deepStrictEqual(fed.unresolvedForks(), plain.unresolvedForks(), `round ${round}`);
    deepStrictEqual(fed.splitHeads(new Set()), plain.splitHeads(new Set()));
    deepStrictEqual(fed.artefacts(), plain.artefacts());
    for (const a of plain.artefacts()) deepStrictEqual(fed.openTips(a), plain.openTips(a));
  }
});

/** The open-tip rule as a Set of texts per artefact (the analyzer's rule before digests). */
class SetTips {
  open = new Map<string, Set<string>>();
  early = new Set<string>();
  add(e: { hash: string; artefact_path: string; parent_hashes: readonly string[] }): void {
    const open = this.open.get(e.artefact_path) ?? new Set<string>();
    this.open.set(e.artefact_path, open);
    for (const p of e.parent_hashes) if (!open.delete(p)) this.early.add(`${e.artefact_path}:${p}`);
    if (!this.early.has(`${e.artefact_path}:${e.hash}`)) open.add(e.hash);
  }
}

Deno.test("open tips kept as digests follow the Set rule exactly, past the small limit and with texts that are no digests", () => {
  const rnd = new SeededRandom(22);
  const byte = () => rnd.bytes(1)[0];
  const pick = <T>(xs: readonly T[]): T => xs[byte() % xs.length];
  const hex = () => Array.from(rnd.bytes(32), (b) => b.toString(16).padStart(2, "0")).join("");
  let grew = 0;
  for (let round = 0; round < 40; round++) {
    // A small pool, so hashes come back: duplicate lines, tips re-opened after they closed,
    // parents named twice by one entry, a parent of another artefact, odd texts (upper case,
    // short, a digest's text with a prefix of another case) that must take the text path.
    const pool = Array.from({ length: 6 + (byte() % 30) }, () => `sha256:${hex()}`);
    const odd = [
      `sha256:${"AB".repeat(32)}`,
      "sha256:abc",
      `SHA256:${hex()}`,
      "",
      `sha256:${hex()}0`,
    ];
    const text = () => byte() % 12 === 0 ? pick(odd) : pick(pool);
    const reference = new SetTips();
    const plain = new LineageAnalyzer();
    const fed = new LineageAnalyzer();
    const digests = new Uint8Array(64);
    const artefacts = ["a", "b", "c"].slice(0, 1 + (byte() % 3));
    for (let k = 0; k < 300; k++) {
      // Bursts of genesis entries push an artefact past the small limit (8 tips).
      const n = round % 4 === 0 && k < 40 ? 0 : pick([0, 1, 1, 1, 1, 2, 2, 3]);
      const entry = {
        hash: text(),
        artefact_path: pick(artefacts),
        parent_hashes: Array.from({ length: n }, text),
        content_hash: h("c"),
      };
      reference.add(entry);
      plain.add(entry);
      const decoded = digestInto(entry.hash, digests, 0) &&
        (n !== 1 || digestInto(entry.parent_hashes[0], digests, 32));
      fed.add(entry, decoded ? digests : undefined);
      if (k % 25 === 24 || k === 299) {
        for (const a of artefacts) {
          const want = [...(reference.open.get(a) ?? [])];
          grew = Math.max(grew, want.length);
          deepStrictEqual(plain.openTips(a), want, `round ${round} entry ${k} ${a}`);
          deepStrictEqual(fed.openTips(a), want, `round ${round} entry ${k} ${a} (digests)`);
        }
      }
    }
    deepStrictEqual(fed.splitHeads(), plain.splitHeads());
  }
  // The rounds did reach past the small limit.
  strictEqual(grew > 8, true);
});
