// Several real processes append to one audit log at once: the chain never forks and every
// process's records keep their order.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { type AuditRecord, scanAuditLog, verifyAuditLog } from "../../src/audit/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture } from "./_helpers.ts";

const WORKER = fileURLToPath(new URL("./_fixtures/append_worker.ts", import.meta.url));

function worker(args: string[]): Deno.ChildProcess {
  return new Deno.Command(Deno.execPath(), {
    args: ["run", "-q", "--frozen", "-A", WORKER, ...args],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

Deno.test("N processes appending concurrently never fork or interleave the chain", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const processes = 4;
    const perProcess = 150;
    const children = Array.from(
      { length: processes },
      // Half await each append, half commit groups of 8.
      (_, i) => worker([fx.dir, fx.keyPath, `w${i}`, String(perProcess), "", i % 2 ? "8" : "1"]),
    );
    const outputs = await Promise.all(children.map((c) => c.output()));
    for (const out of outputs) {
      strictEqual(out.code, 0, new TextDecoder().decode(out.stderr));
    }
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues.slice(0, 5)));
    strictEqual(report.records, processes * perProcess);
    const scan = await scanAuditLog(fx.dir, fx.key);
    strictEqual(scan.records.length, processes * perProcess);
    const prevs = new Set(scan.records.map((r) => r.record.prev_hmac));
    strictEqual(prevs.size, scan.records.length, "no two records share a predecessor (no fork)");
    const bySource = new Map<string, number[]>();
    for (const { record } of scan.records as { record: AuditRecord }[]) {
      const list = bySource.get(record.actor) ?? [];
      list.push(record.details.seq as number);
      bySource.set(record.actor, list);
    }
    for (let i = 0; i < processes; i++) {
      deepStrictEqual(bySource.get(`w${i}`), Array.from({ length: perProcess }, (_, s) => s));
    }
  });
});
