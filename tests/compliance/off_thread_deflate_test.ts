// The pack builder's off-thread deflate: the same member bytes as on this thread, whatever
// pieces they come in; the CSV and facts read back from the log are the ones made from its
// entries; a failing worker, or a log that is not the window's entries, is a named error,
// never a hang or a short member.
import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { inflateSync } from "fflate";
import {
  compressMember,
  inThreadDeflate,
  offThreadDeflate,
} from "../../src/compliance/_off_thread_deflate.ts";
import { CompliancePackError, ONE_SHOT_BYTES, prepareMember } from "../../src/compliance/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { concatBytes } from "../../src/canonical/mod.ts";
import { csvHeader, csvRow, LogFactsCollector } from "../../src/pack_format/mod.ts";
import { sampleLog } from "../../scripts/sample_pack.ts";

const LOG = "lineage-log.jsonl";
const CSV = "article12-evidence.csv";
const sample = sampleLog({ seed: 9, before: 0, entries: 4000, forkAndMerge: true });

/** The sample's lines (over 1 MiB: the streamed deflate), in pieces cut across lines. */
function pieces(): Uint8Array[] {
  const log = concatBytes(sample.log.flatMap((e) => [e.line, new Uint8Array([0x0a])]));
  const out: Uint8Array[] = [];
  for (let at = 0, k = 0; at < log.length; k++) {
    const n = [1, 7, 300, 4093, 65536, 100_000][k % 6];
    out.push(log.subarray(at, at + n));
    at += n;
  }
  return out;
}

function memberBytes(m: { data: Uint8Array[]; method: number }): Uint8Array {
  const data = concatBytes(m.data);
  return m.method === 0 ? data : inflateSync(data);
}

Deno.test("members deflated on a worker are the members deflated here, byte for byte", async () => {
  const here = inThreadDeflate();
  const there = offThreadDeflate();
  for (const p of pieces()) {
    here.write(LOG, p);
    there.write(LOG, p);
    await there.backlog();
  }
  const names = [LOG, CSV, "empty.txt"];
  const mine = await here.finish(names);
  deepStrictEqual(await there.finish(names), mine);
  // The CSV and facts are those the entries make, as the builder made them from each entry.
  const facts = new LogFactsCollector();
  let csv = csvHeader();
  for (const e of sample.log) {
    facts.add(e.entry);
    csv += csvRow(e.entry);
  }
  deepStrictEqual(mine.facts, facts.facts());
  strictEqual(new TextDecoder().decode(memberBytes(mine.members[1])), csv);
  strictEqual(mine.facts.entry_count, sample.log.length);
});

Deno.test("an empty window: an empty log, the CSV header alone, no entries", async () => {
  for (const d of [inThreadDeflate(), offThreadDeflate()]) {
    const r = await d.finish([LOG, CSV]);
    strictEqual(memberBytes(r.members[0]).length, 0);
    strictEqual(new TextDecoder().decode(memberBytes(r.members[1])), csvHeader());
    strictEqual(r.facts.entry_count, 0);
  }
});

Deno.test("a log that is not whole entries is a named failure on a worker, an error here", async () => {
  const enc = new TextEncoder();
  const bad = [
    enc.encode('{"a": 1}\n'), // not canonical
    enc.encode('{"v":1}\n'), // canonical, not an entry
    concatBytes([sample.log[0].line, new Uint8Array([0x0a]), sample.log[1].line]), // cut line
  ];
  for (const bytes of bad) {
    const here = inThreadDeflate();
    await rejects(async () => {
      here.write(LOG, bytes);
      await here.finish([LOG, CSV]);
    });
    const there = offThreadDeflate();
    await rejects(async () => {
      there.write(LOG, bytes);
      await there.finish([LOG, CSV]);
    }, (e) => e instanceof CompliancePackError && e.code === "compliance.deflate_failed");
  }
});

Deno.test("a deflate worker that fails is compliance.deflate_failed", async () => {
  const d = offThreadDeflate(new URL("./_failing_deflate_worker.ts", import.meta.url));
  try {
    const failed = (e: unknown) =>
      e instanceof CompliancePackError && e.code === "compliance.deflate_failed" &&
      e.message.includes("deflate worker broke");
    await rejects(async () => {
      for (const p of pieces()) {
        d.write(LOG, p);
        await d.backlog();
      }
      await d.finish([LOG]);
    }, failed);
  } finally {
    d.close();
  }
});

Deno.test("a reusable worker compresses the window, then whole members, as prepareMember does", async () => {
  const random = new SeededRandom(21);
  const text = (n: number) => new TextEncoder().encode("abcdefgh".repeat(n / 8 + 1).slice(0, n));
  const sizes = [0, 5, ONE_SHOT_BYTES, ONE_SHOT_BYTES + 1, 3 * ONE_SHOT_BYTES + 17];
  for (const d of [inThreadDeflate(), offThreadDeflate(undefined, { reusable: true })]) {
    try {
      for (const p of pieces()) {
        d.write(LOG, p);
        await d.backlog();
      }
      const window = await d.finish([LOG, CSV]);
      strictEqual(window.facts.entry_count, sample.log.length);
      for (const n of sizes) {
        for (const bytes of [text(n), random.bytes(n)]) {
          // Made first: compressMember hands the bytes over (a worker detaches them).
          const expected = prepareMember("pack-manifest.json", bytes);
          deepStrictEqual(await compressMember(d, "pack-manifest.json", bytes), expected);
        }
      }
    } finally {
      d.close();
    }
  }
});

Deno.test("a reusable worker that fails is compliance.deflate_failed, and stops", async () => {
  const d = offThreadDeflate(new URL("./_failing_deflate_worker.ts", import.meta.url), {
    reusable: true,
  });
  try {
    await rejects(
      () => compressMember(d, "pack-manifest.json", new Uint8Array(ONE_SHOT_BYTES + 1)),
      (e) => e instanceof CompliancePackError && e.code === "compliance.deflate_failed",
    );
    // Once failed, every later use fails the same way instead of waiting on a dead worker.
    await rejects(
      () => compressMember(d, "pack-manifest.json", new Uint8Array(10)),
      (e) => e instanceof CompliancePackError && e.code === "compliance.deflate_failed",
    );
  } finally {
    d.close();
  }
});
