// Differential check against a literal Python implementation of FORMATS.md §2: logs written by
// either side verify with the other, including legacy records and the scheme-2 key derivation.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { AuditLog, scanAuditLog, verifyAuditLog } from "../../src/audit/mod.ts";
import { jsonFloat } from "../../src/canonical/mod.ts";
import { FakeClock } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture, onlySegment } from "./_helpers.ts";

const REF = fileURLToPath(new URL("./_fixtures/audit_ref.py", import.meta.url));

async function python(...args: string[]): Promise<{ code: number; stdout: string }> {
  const out = await new Deno.Command("python3", { args: [REF, ...args], stderr: "piped" })
    .output();
  const stderr = new TextDecoder().decode(out.stderr);
  if (stderr.trim() !== "") throw new Error(`python3 said: ${stderr}`);
  return { code: out.code, stdout: new TextDecoder().decode(out.stdout) };
}

Deno.test("a log written by the Python reference (legacy, then scheme 2) verifies with ours", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const epoch = Date.UTC(2026, 2, 3, 23, 59, 50) / 1000;
    await python("write", fx.dir, fx.keyPath, "3", String(epoch - 86400), "legacy");
    await python("write", fx.dir, fx.keyPath, "6", String(epoch));
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues));
    strictEqual(report.records, 9);
    strictEqual(report.legacy_records, 3);
    strictEqual(report.segments.length, 3, "the scheme-2 writes crossed midnight");
    const scan = await scanAuditLog(fx.dir, fx.key);
    strictEqual(scan.records.length, 9);
    strictEqual(scan.records[1].record.details.prev_chain_digest, scan.records[0].record.hmac);
    strictEqual(scan.records[0].record.details.big, 17329000001234567891n);
    // Then ours continues the same chain and Python accepts the result.
    const log = new AuditLog(fx.dir, fx.key, { clock: new FakeClock(epoch * 1000 + 86400_000) });
    await log.append({ actor: "ts", event_type: "ts.event", resource_type: "x", resource_id: "y" });
    await log.close();
    const py = await python("verify", fx.dir, fx.keyPath);
    const doc = JSON.parse(py.stdout);
    deepStrictEqual(doc.errors, []);
    strictEqual(doc.records, 10);
    strictEqual(py.code, 0);
  });
});

Deno.test("a log written by ours verifies with the Python reference, which also catches tampering", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const log = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
    const details = [
      { text: 'caf\u00e9 \u2603 \ud83d\ude00 "q" \\ \t \u0001', slash: "a/b" },
      { floats: [jsonFloat(1), 0.1, 1e-7, jsonFloat(1e20), jsonFloat(-0), 1.5e300] },
      { big: 17329000001234567891n, neg: -9007199254740993n, n: null, b: [true, false] },
      { nested: { z: { y: [{}, []] }, "\u00e9": 1, "\ud83d\ude00": 2, "\uffff": 3 } },
    ];
    for (const d of details) {
      await log.append({
        actor: "ts",
        event_type: "e",
        resource_type: "t",
        resource_id: "r",
        details: d,
      });
      fx.clock.advance(1);
    }
    await log.append(
      { actor: "ts", event_type: "multimodal.attach", resource_type: "t", resource_id: "r" },
      { bindPrevChainDigest: true },
    );
    await log.close();
    const py = await python("verify", fx.dir, fx.keyPath);
    const doc = JSON.parse(py.stdout);
    deepStrictEqual(doc.errors, []);
    strictEqual(doc.records, 5);
    strictEqual(doc.tip, (await verifyAuditLog(fx.dir, fx.key)).tip);
    const path = await onlySegment(fx);
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, text.replace('"slash": "a/b"', '"slash": "a/c"'));
    const bad = await python("verify", fx.dir, fx.keyPath);
    strictEqual(bad.code, 1);
    deepStrictEqual(JSON.parse(bad.stdout).errors, ["2026-01-01.jsonl:1: HMAC mismatch"]);
  });
});

Deno.test("Python's archived segments (archive/*.jsonl.gz) are read as part of the chain", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const epoch = Date.UTC(2026, 2, 1, 12) / 1000;
    for (let day = 0; day < 3; day++) {
      await python("write", fx.dir, fx.keyPath, "2", String(epoch + day * 86400));
    }
    await python("archive", fx.dir, "1");
    const report = await verifyAuditLog(fx.dir, fx.key);
    deepStrictEqual(report.issues, []);
    strictEqual(report.records, 6);
    deepStrictEqual(report.segments.map((s) => s.name), [
      "archive/2026-03-01.jsonl.gz",
      "archive/2026-03-02.jsonl.gz",
      "2026-03-03.jsonl",
    ]);
    strictEqual((await scanAuditLog(fx.dir, fx.key)).records.length, 6);
    // Every live day archived: ours continues the chain from the archive's tip.
    await python("archive", fx.dir, "0");
    const log = new AuditLog(fx.dir, fx.key, { clock: new FakeClock((epoch + 5 * 86400) * 1000) });
    await log.append({ actor: "ts", event_type: "ts.event", resource_type: "x", resource_id: "y" });
    await log.close();
    const after = await verifyAuditLog(fx.dir, fx.key);
    deepStrictEqual(after.issues, []);
    strictEqual(after.records, 7);
    const py = JSON.parse((await python("verify", fx.dir, fx.keyPath)).stdout);
    deepStrictEqual(py.errors, []);
    // A record changed inside an archive is caught, and named by its archive.
    const { gzipSync, gunzipSync } = await import("node:zlib");
    const path = `${fx.dir}/archive/2026-03-02.jsonl.gz`;
    const text = new TextDecoder().decode(gunzipSync(await Deno.readFile(path)));
    await Deno.writeFile(path, gzipSync(new TextEncoder().encode(text.replace('"t1"', '"t9"'))));
    const tampered = await verifyAuditLog(fx.dir, fx.key);
    ok(!tampered.ok);
    strictEqual(tampered.issues[0].segment, "archive/2026-03-02.jsonl.gz");
    strictEqual(tampered.issues[0].code, "audit.hmac_mismatch");
  });
});

Deno.test("a Python record with a lone surrogate in its details verifies as Python wrote it", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await python(
      "write",
      fx.dir,
      fx.keyPath,
      "2",
      String(Date.UTC(2026, 2, 1) / 1000),
      "surrogate",
    );
    const text = await Deno.readTextFile(await onlySegment(fx));
    ok(text.includes('"name": "bad\\udc80byte"'), "Python wrote the escape");
    const report = await verifyAuditLog(fx.dir, fx.key);
    deepStrictEqual(report.issues, []);
    strictEqual(report.records, 2);
    const scan = await scanAuditLog(fx.dir, fx.key);
    strictEqual(scan.records[0].record.details.name, "bad\udc80byte");
    // Ours appends after it and Python still verifies the whole chain.
    const log = new AuditLog(fx.dir, fx.key, { clock: new FakeClock(Date.UTC(2026, 2, 1, 1)) });
    await log.append({
      actor: "ts",
      event_type: "ts.event",
      resource_type: "x",
      resource_id: "y",
      details: { name: "again\ud800" },
    });
    await log.close();
    deepStrictEqual(JSON.parse((await python("verify", fx.dir, fx.keyPath)).stdout).errors, []);
  });
});
