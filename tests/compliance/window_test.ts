// Window selection over the whole log: inclusive UTC days, earlier parents declared, the oldest
// retained entry, and lines that are not entries left out and counted.
import { deepStrictEqual, strictEqual } from "node:assert/strict";
import { WindowSelector } from "../../src/compliance/mod.ts";
import { packWindow } from "../../src/pack_format/mod.ts";
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
