// A writer SIGKILLed mid-append, again and again: afterwards every tear is sealed exactly once,
// nothing was truncated, and the chain verifies.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { listSegments, verifyAuditLog } from "../../src/audit/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { auditFixture } from "./_helpers.ts";

const WORKER = fileURLToPath(new URL("./_fixtures/append_worker.ts", import.meta.url));

async function segmentBytes(dir: string): Promise<Uint8Array[]> {
  return await Promise.all((await listSegments(dir)).map((s) => Deno.readFile(s.path)));
}

async function waitForLine(stream: ReadableStream<Uint8Array>): Promise<void> {
  const reader = stream.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`worker ended before starting: ${text}`);
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
}

Deno.test("a writer killed mid-append in a loop leaves only sealed tears", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    const observed = new Set<string>();
    for (let round = 0; round < 12; round++) {
      const child = new Deno.Command(Deno.execPath(), {
        // 8-byte writes make a kill between two write calls likely, as on a full disk.
        args: ["run", "-q", "--frozen", "-A", WORKER, fx.dir, fx.keyPath, `k${round}`, "0", "8"],
        stdout: "piped",
        stderr: "null",
      }).spawn();
      await waitForLine(child.stdout);
      await new Promise((r) => setTimeout(r, 20 + (round * 37) % 90));
      const before = await segmentBytes(fx.dir);
      child.kill("SIGKILL");
      const status = await child.status;
      strictEqual(status.signal, "SIGKILL");
      await child.stdout.cancel().catch(() => {});
      const report = await verifyAuditLog(fx.dir, fx.key);
      // Whatever state the kill left: problems only in the unsealed tail, nothing earlier.
      if (report.torn_tail !== null) {
        const t = report.torn_tail;
        observed.add(`${t.segment}@${t.byte_offset}`);
        for (const issue of report.issues) strictEqual(issue.segment, t.segment);
      } else {
        ok(report.ok, JSON.stringify(report.issues));
      }
      // Bytes present before the kill are still there, unchanged (no truncation).
      const after = await segmentBytes(fx.dir);
      before.forEach((b, i) => deepStrictEqual(after[i].subarray(0, b.length), b));
    }
    const last = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-q", "--frozen", "-A", WORKER, fx.dir, fx.keyPath, "final", "1"],
    }).output();
    strictEqual(last.code, 0);
    const report = await verifyAuditLog(fx.dir, fx.key);
    ok(report.ok, JSON.stringify(report.issues.slice(0, 5)));
    strictEqual(report.torn_tail, null);
    const sealed = new Set(report.tears.map((t) => `${t.segment}@${t.region_offset}`));
    deepStrictEqual(sealed, observed, "every observed tear is sealed exactly once");
    ok(observed.size > 0, "no kill landed mid-record, so sealing was not exercised");
    console.log(`crash loop: ${observed.size} tear(s) in 12 kills, ${report.records} records`);
  });
});
