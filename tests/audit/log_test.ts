import { deepStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  appendAuditEvent,
  auditChainKeys,
  AuditError,
  AuditLog,
  type AuditRecord,
  checkRecordLine,
  GENESIS_HMAC,
  listSegments,
  MemoryAuditSink,
  TORN_RECORD_EVENT,
  verifyAuditLog,
} from "../../src/audit/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture, onlySegment, segmentLines, writeEvents } from "./_helpers.ts";

const event = (i: number) => ({
  actor: "tester",
  event_type: "probe",
  resource_type: "task",
  resource_id: `r${i}`,
  details: { index: i },
});

function parseRecords(text: string): AuditRecord[] {
  return text.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as AuditRecord);
}

Deno.test("appends chain from genesis across calls and writer instances", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const r = await appendAuditEvent(fx.dir, fx.key, event(3), { clock: fx.clock });
    const records = parseRecords(await Deno.readTextFile(await onlySegment(fx)));
    strictEqual(records.length, 4);
    strictEqual(records[0].prev_hmac, GENESIS_HMAC);
    for (let i = 1; i < 4; i++) strictEqual(records[i].prev_hmac, records[i - 1].hmac);
    strictEqual(records[3].hmac, r.hmac);
    strictEqual(records[0].timestamp, "2026-01-01T10:00:00.000000Z");
    strictEqual(records[0].scheme, 2);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.records, 4);
  });
});

Deno.test("segments follow the UTC date of the append and the chain runs across them", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    fx.clock.advance(14 * 3600_000 - 2); // 23:59:59.998
    await writeEvents(fx, 4); // two before midnight, two after
    const names = (await listSegments(fx.dir)).map((s) => s.name);
    deepStrictEqual(names, ["2026-01-01.jsonl", "2026-01-02.jsonl"]);
    const day1 = parseRecords(await Deno.readTextFile(join(fx.dir, names[0])));
    const day2 = parseRecords(await Deno.readTextFile(join(fx.dir, names[1])));
    strictEqual(day1.length, 2);
    strictEqual(day2[0].prev_hmac, day1[1].hmac, "no reset at the segment boundary");
    ok((await verifyAuditLog(fx.dir, fx.key)).ok);
  });
});

Deno.test("a clock that goes back never appends to a segment older than the newest", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 1);
    fx.clock.advance(-2 * 86400_000);
    await writeEvents(fx, 1);
    deepStrictEqual((await listSegments(fx.dir)).map((s) => s.name), ["2026-01-01.jsonl"]);
    ok((await verifyAuditLog(fx.dir, fx.key)).ok);
  });
});

Deno.test("concurrent appends are committed as groups in call order and each is durable", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock, maxBatch: 64 });
    const results = await Promise.all(Array.from({ length: 200 }, (_, i) => log.append(event(i))));
    await log.close();
    const records = parseRecords(await Deno.readTextFile(await onlySegment(fx)));
    deepStrictEqual(records.map((r) => r.resource_id), results.map((r) => r.resource_id));
    deepStrictEqual(records.map((r) => r.hmac), results.map((r) => r.hmac));
    deepStrictEqual(records.map((r) => r.resource_id), results.map((_, i) => `r${i}`));
    ok((await verifyAuditLog(fx.dir, fx.key)).ok);
  });
});

Deno.test("prev_chain_digest: bound under the lock, and a false claim is refused alone", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
    const first = await log.append(event(0));
    const bound = await log.append(event(1), { bindPrevChainDigest: true });
    strictEqual(bound.details.prev_chain_digest, first.hmac);
    strictEqual(bound.prev_hmac, first.hmac);
    const [honest, liar, after] = await Promise.allSettled([
      log.append({ ...event(2), details: { prev_chain_digest: bound.hmac } }),
      log.append({ ...event(3), details: { prev_chain_digest: "f".repeat(64) } }),
      log.append(event(4)),
    ]);
    strictEqual(honest.status, "fulfilled");
    strictEqual(liar.status, "rejected");
    ok(
      liar.status === "rejected" && liar.reason instanceof AuditError &&
        liar.reason.code === "audit.false_predecessor_claim",
    );
    strictEqual(after.status, "fulfilled");
    await log.close();
    const ids = parseRecords(await Deno.readTextFile(await onlySegment(fx))).map((r) =>
      r.resource_id
    );
    deepStrictEqual(ids, ["r0", "r1", "r2", "r4"]);
    ok((await verifyAuditLog(fx.dir, fx.key)).ok);
  });
});

Deno.test("callers cannot write the seal event, bad input or to a closed log", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
    await rejects(log.append({ ...event(0), event_type: TORN_RECORD_EVENT }), /only by the log/);
    await rejects(log.append({ ...event(0), actor: "" }), /'actor' is empty/);
    await log.close();
    await rejects(log.append(event(0)), /closed/);
    deepStrictEqual(await listSegments(fx.dir), []);
  });
});

Deno.test("segments are created 0600 and the lock file is .chain.lock", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 1);
    strictEqual(((await Deno.stat(await onlySegment(fx))).mode ?? -1) & 0o777, 0o600);
    ok((await Deno.stat(join(fx.dir, ".chain.lock"))).isFile);
  });
});

Deno.test("a torn partial record is sealed, never truncated, and the chain verifies", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    const path = await onlySegment(fx);
    const full = await Deno.readFile(path);
    const torn = full.subarray(0, full.length - 40); // crash in the middle of record 3
    await Deno.writeFile(path, torn);
    const lastStart = torn.lastIndexOf(0x0a) + 1;
    await writeEvents(fx, 1, { from: 9 });
    const after = await Deno.readFile(path);
    deepStrictEqual(after.subarray(0, torn.length), torn, "torn bytes are kept as they were");
    strictEqual(after[torn.length], 0x0a, "the fragment is terminated, so it stays its own line");
    const lines = await segmentLines(path);
    const seal = JSON.parse(lines[3]) as AuditRecord;
    strictEqual(seal.event_type, TORN_RECORD_EVENT);
    strictEqual(seal.details.segment, "2026-01-01.jsonl");
    strictEqual(seal.details.byte_offset, torn.length);
    strictEqual(seal.details.verified_prefix_offset, lastStart);
    strictEqual(seal.details.torn_bytes_sha256, sha256Hex(torn.subarray(lastStart)));
    strictEqual(seal.details.tear_class, "partial_record");
    const records = parseRecords(lines.filter((_, i) => i !== 2).join("\n"));
    strictEqual(seal.prev_hmac, records[1].hmac, "the seal follows the last valid record");
    strictEqual((JSON.parse(lines[4]) as AuditRecord).prev_hmac, seal.hmac);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.tears.length, 1);
    deepStrictEqual(report.tears[0], {
      segment: "2026-01-01.jsonl",
      first_line: 3,
      last_line: 3,
      region_offset: lastStart,
      byte_offset: torn.length,
      torn_bytes: torn.length - lastStart,
      tear_class: "partial_record",
      sealed_by_line: 4,
      // The cut-off part of record 3 had been acknowledged (the tip witness knew it).
      bytes_lost: 40,
      acknowledged_tip: parseRecords(new TextDecoder().decode(full))[2].hmac,
    });
  });
});

Deno.test("a record missing only its final newline is terminated and the tear recorded", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    const path = await onlySegment(fx);
    const full = await Deno.readFile(path);
    await Deno.writeFile(path, full.subarray(0, full.length - 1));
    const before = await verifyAuditLog(fx.dir, fx.key);
    strictEqual(before.ok, false);
    deepStrictEqual(before.torn_tail, {
      segment: "2026-01-01.jsonl",
      byte_offset: full.length - 1,
      bytes: 0,
    });
    await writeEvents(fx, 1, { from: 5 });
    const lines = await segmentLines(path);
    const seal = JSON.parse(lines[2]) as AuditRecord;
    strictEqual(seal.details.tear_class, "missing_terminator");
    strictEqual(seal.prev_hmac, (JSON.parse(lines[1]) as AuditRecord).hmac);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.records, 4);
    strictEqual(report.tears[0].torn_bytes, 0);
    strictEqual(report.tears[0].first_line, null);
  });
});

Deno.test("a terminated line that fails its HMAC at the tail is sealed too", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    const path = await onlySegment(fx);
    const lines = await segmentLines(path);
    const fake = lines[0].replace(/"hmac": "[0-9a-f]{64}"/, `"hmac": "${"0".repeat(64)}"`);
    await Deno.writeTextFile(path, fake + "\n", { append: true });
    await writeEvents(fx, 1, { from: 7 });
    const sealed = await segmentLines(path);
    const seal = JSON.parse(sealed[3]) as AuditRecord;
    strictEqual(seal.details.tear_class, "invalid_record");
    strictEqual(seal.prev_hmac, (JSON.parse(lines[1]) as AuditRecord).hmac);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.tears[0].first_line, 3);
  });
});

Deno.test("a newest segment holding only garbage chains its seal to the previous segment", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 2);
    const day1 = parseRecords(await Deno.readTextFile(await onlySegment(fx)));
    await Deno.writeTextFile(join(fx.dir, "2026-01-02.jsonl"), '{"actor": "hal');
    fx.clock.advance(86400_000);
    await writeEvents(fx, 1, { from: 2 });
    const day2 = (await Deno.readTextFile(join(fx.dir, "2026-01-02.jsonl"))).split("\n");
    const seal = JSON.parse(day2[1]) as AuditRecord;
    strictEqual(seal.prev_hmac, day1[1].hmac);
    strictEqual(seal.details.verified_prefix_offset, 0);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.tears.length, 1);
  });
});

Deno.test("the writer refuses to append through a symlinked segment", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 1);
    const outside = join(root, "outside.jsonl");
    await Deno.writeTextFile(outside, "");
    await Deno.symlink(outside, join(fx.dir, "2026-01-02.jsonl"));
    await rejects(
      writeEvents(fx, 1),
      (e) => e instanceof AuditError && e.code === "audit.segment_not_regular",
    );
    strictEqual(await Deno.readTextFile(outside), "");
  });
});

Deno.test("a record written by the log checks out on its own with the same key", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const r = await appendAuditEvent(fx.dir, fx.key, event(1), { clock: fx.clock });
    const line = (await segmentLines(await onlySegment(fx)))[0];
    const check = checkRecordLine(new TextEncoder().encode(line), auditChainKeys(fx.key));
    ok(check.kind === "record" && check.hmacOk);
    strictEqual(check.kind === "record" ? check.record.hmac : "", r.hmac);
  });
});

Deno.test("MemoryAuditSink keeps a real chain for tests of other modules", async () => {
  const sink = new MemoryAuditSink();
  const a = await sink.append(event(0));
  const b = await sink.append(event(1), { bindPrevChainDigest: true });
  strictEqual(a.prev_hmac, GENESIS_HMAC);
  strictEqual(b.prev_hmac, a.hmac);
  strictEqual(b.details.prev_chain_digest, a.hmac);
  strictEqual(sink.ofType("probe").length, 2);
  await rejects(sink.append({ ...event(2), resource_type: "" }), /empty/);
});

Deno.test("a writer whose lock file was deleted takes a lock on the new one", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
    await log.append(event(0));
    await Deno.remove(join(fx.dir, ".chain.lock"));
    // Another writer holds the new lock file; our next append must wait for it.
    const other = await Deno.open(join(fx.dir, ".chain.lock"), {
      read: true,
      write: true,
      create: true,
    });
    await other.lock(true);
    let done = false;
    const pending = log.append(event(1)).then(() => (done = true));
    await new Promise((r) => setTimeout(r, 150));
    strictEqual(done, false, "appended without holding the live lock file");
    await other.unlock();
    other.close();
    await pending;
    await log.close();
    ok((await verifyAuditLog(fx.dir, fx.key)).ok);
  });
});
