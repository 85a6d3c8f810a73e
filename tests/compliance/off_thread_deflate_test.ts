// The pack builder's off-thread deflate: the same member bytes as on this thread, whatever
// pieces they come in, and a failing worker is a named error, never a hang or a short member.
import { deepStrictEqual, rejects } from "node:assert/strict";
import { inThreadDeflate, offThreadDeflate } from "../../src/compliance/_off_thread_deflate.ts";
import { CompliancePackError } from "../../src/compliance/mod.ts";

/** 3 MiB of lines that compress a little, fed in pieces of uneven sizes. */
function pieces(): Uint8Array[] {
  const out: Uint8Array[] = [];
  const enc = new TextEncoder();
  for (let i = 0, size = 0; size < 3 * 1024 * 1024; i++) {
    const line = enc.encode(`{"n":${i},"h":"${(i * 2654435761 % 4294967296).toString(16)}"}\n`);
    out.push(line);
    size += line.length;
  }
  return out;
}

Deno.test("members deflated on a worker are the members deflated here, byte for byte", async () => {
  const here = inThreadDeflate();
  const there = offThreadDeflate();
  for (const p of pieces()) {
    here.write("lineage-log.jsonl", p);
    there.write("lineage-log.jsonl", p);
    here.write("article12-evidence.csv", p.subarray(0, 7));
    there.write("article12-evidence.csv", p.subarray(0, 7));
    await there.backlog();
  }
  const names = ["lineage-log.jsonl", "article12-evidence.csv", "empty.txt"];
  deepStrictEqual(await there.finish(names), await here.finish(names));
});

Deno.test("a deflate worker that fails is compliance.deflate_failed", async () => {
  const d = offThreadDeflate(new URL("./_failing_deflate_worker.ts", import.meta.url));
  try {
    const failed = (e: unknown) =>
      e instanceof CompliancePackError && e.code === "compliance.deflate_failed" &&
      e.message.includes("deflate worker broke");
    await rejects(async () => {
      for (const p of pieces()) {
        d.write("lineage-log.jsonl", p);
        await d.backlog();
      }
      await d.finish(["lineage-log.jsonl"]);
    }, failed);
  } finally {
    d.close();
  }
});
