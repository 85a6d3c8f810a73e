import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  auditChainKeys,
  AuditLog,
  AuditScanner,
  buildRecord,
  listSegments,
  scanAuditLog,
} from "../../src/audit/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture, onlySegment, segmentLines, writeEvents, writeLines } from "./_helpers.ts";

const ids = (r: { records: { record: { resource_id: string } }[] }) =>
  r.records.map((x) => x.record.resource_id);

Deno.test("a scan returns every authenticated record with its location, then only new ones", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const first = await scanAuditLog(fx.dir, fx.key);
    deepStrictEqual(ids(first), ["r0", "r1", "r2"]);
    deepStrictEqual(first.records.map((r) => [r.segment, r.line]), [
      ["2026-01-01.jsonl", 1],
      ["2026-01-01.jsonl", 2],
      ["2026-01-01.jsonl", 3],
    ]);
    strictEqual(first.rescanned, false);
    const again = await scanAuditLog(fx.dir, fx.key, { cursor: first.cursor });
    deepStrictEqual(ids(again), []);
    await writeEvents(fx, 2, { from: 3 });
    const next = await scanAuditLog(fx.dir, fx.key, { cursor: again.cursor });
    deepStrictEqual(ids(next), ["r3", "r4"]);
    strictEqual(next.rescanned, false);
  });
});

Deno.test("a cursor survives JSON and a new segment", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    const first = await scanAuditLog(fx.dir, fx.key);
    const stored = JSON.parse(JSON.stringify(first.cursor));
    fx.clock.advance(86400_000);
    await writeEvents(fx, 2, { from: 2 });
    strictEqual((await listSegments(fx.dir)).length, 2);
    const next = await scanAuditLog(fx.dir, fx.key, { cursor: stored });
    deepStrictEqual(ids(next), ["r2", "r3"]);
    strictEqual(next.rescanned, false);
    strictEqual(next.cursor.closed.length, 1);
    await writeEvents(fx, 1, { from: 4 });
    deepStrictEqual(ids(await scanAuditLog(fx.dir, fx.key, { cursor: next.cursor })), ["r4"]);
  });
});

Deno.test("the incremental scan reads only bytes after the cursor", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const first = await scanAuditLog(fx.dir, fx.key);
    // Damage line 1 in place (same size) and append: only the new record is read.
    const path = await onlySegment(fx);
    const lines = await segmentLines(path);
    lines[0] = lines[0].replace('"r0"', '"x0"');
    await writeLines(path, lines);
    await writeEvents(fx, 1, { from: 3 });
    const next = await scanAuditLog(fx.dir, fx.key, { cursor: first.cursor });
    deepStrictEqual(ids(next), ["r3"]);
    strictEqual(next.rescanned, false);
    // A scan from the start sees the damage and stops authenticating at it.
    const full = await scanAuditLog(fx.dir, fx.key);
    deepStrictEqual(ids(full), []);
    strictEqual(full.skipped[0].reason, "HMAC mismatch");
  });
});

Deno.test("a shrunk segment forces a full rescan", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const first = await scanAuditLog(fx.dir, fx.key);
    const path = await onlySegment(fx);
    const lines = await segmentLines(path);
    await writeLines(path, [...lines.slice(0, 2), ""]);
    const next = await scanAuditLog(fx.dir, fx.key, { cursor: first.cursor });
    strictEqual(next.rescanned, true);
    deepStrictEqual(ids(next), ["r0", "r1"]);
  });
});

Deno.test("a rewritten last line of the same size forces a full rescan", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const first = await scanAuditLog(fx.dir, fx.key);
    const path = await onlySegment(fx);
    const lines = await segmentLines(path);
    lines[2] = lines[2].replace('"r2"', '"x2"');
    await writeLines(path, lines);
    const next = await scanAuditLog(fx.dir, fx.key, { cursor: first.cursor });
    strictEqual(next.rescanned, true);
    deepStrictEqual(ids(next), ["r0", "r1"]);
    strictEqual(next.skipped_count, 1);
  });
});

Deno.test("a changed closed segment, or one inserted before the cursor, forces a rescan", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 1);
    fx.clock.advance(86400_000);
    await writeEvents(fx, 1, { from: 1 });
    const first = await scanAuditLog(fx.dir, fx.key);
    strictEqual(first.cursor.closed.length, 1);
    await Deno.writeTextFile(join(fx.dir, "2026-01-01.jsonl"), "junk\n", { append: true });
    const changed = await scanAuditLog(fx.dir, fx.key, { cursor: first.cursor });
    strictEqual(changed.rescanned, true);
    deepStrictEqual(ids(changed), ["r0", "r1"]);
    await Deno.writeTextFile(join(fx.dir, "2025-12-31.jsonl"), "");
    const inserted = await scanAuditLog(fx.dir, fx.key, { cursor: changed.cursor });
    strictEqual(inserted.rescanned, true);
  });
});

Deno.test("an unterminated tail is left for a later scan until it is sealed", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    const path = await onlySegment(fx);
    const full = await Deno.readFile(path);
    await Deno.writeFile(path, full.subarray(0, full.length - 1)); // record 2 lost its newline
    const first = await scanAuditLog(fx.dir, fx.key);
    deepStrictEqual(ids(first), ["r0"]);
    await writeEvents(fx, 1, { from: 2 }); // seals, then appends
    const next = await scanAuditLog(fx.dir, fx.key, { cursor: first.cursor });
    strictEqual(next.rescanned, false);
    deepStrictEqual(next.records.map((r) => r.record.event_type), [
      "probe",
      "chain.torn_record",
      "probe",
    ]);
    deepStrictEqual(ids(next), ["r1", "2026-01-01.jsonl", "r2"]);
  });
});

Deno.test("garbage lines are skipped; a broken link stops authentication after it", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 4);
    const path = await onlySegment(fx);
    const lines = await segmentLines(path);
    lines.splice(1, 0, "not json");
    const withGarbage = await (async () => {
      await writeLines(path, lines);
      return await scanAuditLog(fx.dir, fx.key);
    })();
    deepStrictEqual(ids(withGarbage), ["r0", "r1", "r2", "r3"]);
    strictEqual(withGarbage.skipped_count, 1);
    lines.splice(3, 1); // delete r2
    await writeLines(path, lines);
    const broken = await scanAuditLog(fx.dir, fx.key);
    deepStrictEqual(ids(broken), ["r0", "r1"]);
    ok(broken.skipped.some((s) => s.reason.startsWith("prev_hmac mismatch")));
  });
});

Deno.test("records with a false predecessor claim are not returned", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 1);
    const path = await onlySegment(fx);
    const prev = JSON.parse((await segmentLines(path))[0]).hmac;
    const { line, record } = buildRecord({
      actor: "x",
      event_type: "multimodal.attach",
      resource_type: "task",
      resource_id: "liar",
      details: { prev_chain_digest: "c".repeat(64) },
    }, {
      prevHmac: prev,
      timestamp: "2026-01-01T11:00:00.000000Z",
      keys: auditChainKeys(fx.key),
    });
    await Deno.writeFile(path, line, { append: true });
    const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
    const after = await log.append({
      actor: "x",
      event_type: "probe",
      resource_type: "task",
      resource_id: "after",
    });
    await log.close();
    strictEqual(after.prev_hmac, record.hmac);
    const scan = await scanAuditLog(fx.dir, fx.key);
    deepStrictEqual(ids(scan), ["r0", "after"]);
    strictEqual(scan.skipped[0].reason, "false predecessor claim");
  });
});

Deno.test("an event-type filter returns only those records, authenticating all", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    await writeEvents(fx, 1, { eventType: "multimodal.attach", from: 2 });
    await writeEvents(fx, 1, { from: 3 });
    const scanner = new AuditScanner(fx.dir, fx.key, { eventTypes: ["multimodal.attach"] });
    deepStrictEqual(ids(await scanner.scan()), ["r2"]);
    await writeEvents(fx, 1, { eventType: "multimodal.attach", from: 4 });
    deepStrictEqual(ids(await scanner.scan()), ["r4"]);
    deepStrictEqual(ids(await scanner.scan()), []);
    ok(scanner.cursor !== undefined);
  });
});
