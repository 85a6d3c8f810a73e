// Acknowledged records cut off the log after the fact: the tip witness shows how many bytes
// went, `audit verify` says so before the next append, the next append seals the loss into
// the chain, and every later verification still shows it with the count.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { type AuditRecord, TORN_RECORD_EVENT, verifyAuditLog } from "../../src/audit/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture, onlySegment, segmentLines, writeEvents } from "./_helpers.ts";

const EMPTY_SHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

async function lastRecords(path: string): Promise<AuditRecord[]> {
  return (await segmentLines(path)).filter((l) => l !== "").map((l) =>
    JSON.parse(l) as AuditRecord
  );
}

Deno.test("a tail cut at a record boundary: verify names the bytes lost, the next append seals them, verify shows it forever", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 4);
    const path = await onlySegment(fx);
    const full = await Deno.readFile(path);
    const records = await lastRecords(path);
    // The last record (say run.finished, acknowledged) is cut off whole: no torn bytes left.
    const cut = full.lastIndexOf(0x0a, full.length - 2) + 1;
    await Deno.writeFile(path, full.subarray(0, cut));
    const before = await verifyAuditLog(fx.dir, fx.key);
    ok(before.ok, "what is left still verifies");
    strictEqual(before.torn_tail, null, "nothing torn to see in the file itself");
    deepStrictEqual(before.truncated, {
      segment: "2026-01-01.jsonl",
      acknowledged_size: full.length,
      size: cut,
      bytes_lost: full.length - cut,
      acknowledged_tip: records[3].hmac,
    });
    await writeEvents(fx, 2, { from: 10 });
    const after = await lastRecords(path);
    const seal = after[3];
    strictEqual(seal.event_type, TORN_RECORD_EVENT);
    deepStrictEqual(seal.details, {
      segment: "2026-01-01.jsonl",
      byte_offset: cut,
      verified_prefix_offset: cut,
      torn_bytes_sha256: EMPTY_SHA256,
      tear_class: "truncated",
      bytes_lost: full.length - cut,
      acknowledged_size: full.length,
      acknowledged_tip: records[3].hmac,
    });
    strictEqual(seal.prev_hmac, records[2].hmac, "the seal follows what is left");
    for (let round = 0; round < 2; round++) {
      const report = await verifyAuditLog(fx.dir, fx.key);
      ok(report.ok, JSON.stringify(report.issues));
      strictEqual(report.truncated, null, "sealed: no longer pending");
      deepStrictEqual(report.tears, [{
        segment: "2026-01-01.jsonl",
        first_line: null,
        last_line: null,
        region_offset: cut,
        byte_offset: cut,
        torn_bytes: 0,
        tear_class: "truncated",
        sealed_by_line: 4,
        bytes_lost: full.length - cut,
        acknowledged_tip: records[3].hmac,
      }]);
      await writeEvents(fx, 3, { from: 20 + round * 3 });
    }
  });
});

Deno.test("a tail cut inside a record: the seal keeps the torn bytes and counts the bytes cut off", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const path = await onlySegment(fx);
    const full = await Deno.readFile(path);
    await Deno.writeFile(path, full.subarray(0, full.length - 40));
    await writeEvents(fx, 1, { from: 9 });
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.tears.length, 1);
    strictEqual(report.tears[0].tear_class, "partial_record");
    strictEqual(report.tears[0].bytes_lost, 40);
    ok(report.tears[0].torn_bytes > 0);
  });
});

Deno.test("the newest segment deleted: the seal starts a file of its name and counts the whole segment", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    fx.clock.advance(24 * 3600_000);
    await writeEvents(fx, 2, { from: 2 });
    const day2 = join(fx.dir, "2026-01-02.jsonl");
    const size = (await Deno.stat(day2)).size;
    const acknowledged = (await lastRecords(day2))[1].hmac;
    await Deno.remove(day2);
    strictEqual((await verifyAuditLog(fx.dir, fx.key)).truncated?.bytes_lost, size);
    await writeEvents(fx, 1, { from: 7 });
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    deepStrictEqual(
      report.tears.map((t) => [t.segment, t.tear_class, t.sealed_by_line, t.bytes_lost]),
      [["2026-01-02.jsonl", "segment_lost", 1, size]],
    );
    strictEqual(report.tears[0].acknowledged_tip, acknowledged);
    strictEqual(report.records, 2 + 1 + 1);
  });
});

Deno.test("no false loss: a witness older than the log (a crash before it was written), none at all, or a torn witness", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    const witness = join(fx.dir, ".tip");
    const older = await Deno.readTextFile(witness);
    await writeEvents(fx, 2, { from: 2 });
    // The segment got its fsync, the witness write did not happen: the log is longer.
    await Deno.writeTextFile(witness, older);
    strictEqual((await verifyAuditLog(fx.dir, fx.key)).truncated, null);
    await Deno.writeTextFile(witness, older.slice(0, 10));
    strictEqual((await verifyAuditLog(fx.dir, fx.key)).truncated, null);
    await Deno.remove(witness);
    strictEqual((await verifyAuditLog(fx.dir, fx.key)).truncated, null);
    await writeEvents(fx, 1, { from: 9 });
    const report = await verifyAuditLog(fx.dir, fx.key);
    deepStrictEqual(report.tears, []);
    strictEqual(report.records, 5);
    ok(
      (await Deno.readTextFile(witness)).includes(
        `"size":${(await Deno.stat(await onlySegment(fx))).size}`,
      ),
    );
  });
});
