// Window selection over the whole log: inclusive UTC days, earlier parents declared, the oldest
// retained entry, and lines that are not entries left out and counted.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { WindowSelector } from "../../src/compliance/mod.ts";
import { packWindow } from "../../src/pack_format/mod.ts";
import { parseCanonicalLine } from "../../src/canonical/mod.ts";
import { entryHashOfBytes, parseEntry } from "../../src/lineage/mod.ts";
import { sampleLog } from "../../scripts/sample_pack.ts";

const enc = new TextEncoder();

Deno.test("the window keeps its days' entries and declares the earlier parents they build on", () => {
  const sample = sampleLog({ seed: 3, before: 3, entries: 6, forkAndMerge: false });
  const w = packWindow(sample.since, sample.until);
  if (w === undefined) throw new Error("window");
  const s = new WindowSelector(w);
  sample.log.forEach((e, i) => s.add(i + 1, e.line, true));
  const r = s.result();
  deepStrictEqual(r.entries.map((e) => e.hash), sample.log.slice(3).map((e) => e.hash));
  // The first three window entries build on the three February entries (one per file).
  deepStrictEqual(r.externalParents, sample.log.slice(0, 3).map((e) => e.hash).sort());
  strictEqual(r.retainedSinceNs, sample.log[0].entry.ts_ns);
  strictEqual(r.logLines, sample.log.length);
  deepStrictEqual(r.skipped, []);
});

Deno.test("a one-day window ends at the last nanosecond of that day", () => {
  const sample = sampleLog({ seed: 3, before: 1, entries: 1, forkAndMerge: false });
  const day = new Date(Number(sample.log[1].entry.ts_ns / 1_000_000n)).toISOString().slice(0, 10);
  const w = packWindow(day, day);
  if (w === undefined) throw new Error("window");
  const s = new WindowSelector(w);
  sample.log.forEach((e, i) => s.add(i + 1, e.line, true));
  strictEqual(s.result().entries.length, 1);
});

Deno.test("lines that are not canonical entries, and a torn tail, are skipped and named", () => {
  const sample = sampleLog({ seed: 3, before: 0, entries: 2, forkAndMerge: false });
  const w = packWindow(sample.since, sample.until);
  if (w === undefined) throw new Error("window");
  const s = new WindowSelector(w);
  s.add(1, sample.log[0].line, true);
  s.add(2, enc.encode('{"a": 1}'), true);
  s.add(3, enc.encode('{"v":1}'), true);
  s.skip(4, "line longer than the reader's limit");
  s.add(5, sample.log[1].line, false);
  const r = s.result();
  strictEqual(r.entries.length, 1);
  deepStrictEqual(r.skipped.map((x) => x.line), [2, 3, 4, 5]);
  strictEqual(r.skipped[0].reason.startsWith("non-canonical line bytes"), true);
  strictEqual(r.skipped[1].reason, "artefact_path: missing");
  strictEqual(r.skipped[3].reason, "torn last line (no trailing newline)");
});

Deno.test("lines read on the fast path are picked and skipped exactly as the strict parse says", () => {
  // The selector reads plain canonical lines straight from their bytes; every other line goes
  // through the strict parse. Seeded byte mutations of real lines: the same picks, entries and
  // skip reasons as a selection made with the strict parse alone.
  const sample = sampleLog({ seed: 5, before: 4, entries: 40, forkAndMerge: true });
  const w = packWindow(sample.since, sample.until);
  if (w === undefined) throw new Error("window");
  let seed = 0x1b873593;
  const next = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const alphabet = enc.encode('{}[]",:0123456789-.eE \\/uabcdefsv_\x7f\x00\xc3');
  const lines: Uint8Array[] = [];
  for (let round = 0; round < 3000; round++) {
    let bytes = sample.log[round % sample.log.length].line.slice();
    if (round % 4 !== 0) {
      const at = Math.floor(next() * bytes.length);
      const b = alphabet[Math.floor(next() * alphabet.length)];
      const kind = next();
      if (kind < 0.5) bytes[at] = b;
      else if (kind < 0.75) {
        bytes = new Uint8Array([...bytes.subarray(0, at), b, ...bytes.subarray(at)]);
      } else bytes = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
    }
    lines.push(bytes);
  }
  const s = new WindowSelector(w);
  lines.forEach((l, i) => s.add(i + 1, l, true));
  const got = s.result();
  // The reference: each line through the strict parse and the entry rules only.
  const skipped: { line: number; reason: string }[] = [];
  const picked: string[] = [];
  lines.forEach((l, i) => {
    const parsed = parseCanonicalLine(l, "canon");
    if (!parsed.ok) {
      return skipped.push({ line: i + 1, reason: `${parsed.reason}: ${parsed.detail}` });
    }
    let entry;
    try {
      entry = parseEntry(parsed.value);
    } catch (error) {
      return skipped.push({ line: i + 1, reason: (error as Error).message });
    }
    if (entry.ts_ns >= w.startNs && entry.ts_ns <= w.endNs) picked.push(entryHashOfBytes(l));
  });
  deepStrictEqual(got.skipped, skipped);
  deepStrictEqual(got.entries.map((e) => e.hash), picked);
  for (const e of got.entries) {
    const parsed = parseCanonicalLine(e.line, "canon");
    if (!parsed.ok) throw new Error("picked a line the strict parse refuses");
    deepStrictEqual(e.entry, parseEntry(parsed.value));
  }
  // Both kinds occur, or the test checks nothing.
  strictEqual(got.entries.length > 500 && skipped.length > 500, true);
});
