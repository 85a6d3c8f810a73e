// Audit log checkpoints: the lines of every segment in chain order are the leaves; a deleted,
// reordered or truncated record before the latest checkpoint fails naming segment and line,
// even when the HMAC chain alone cannot see it (a truncated tail).
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import {
  checkpointAuditLog,
  listSegments,
  readAuditCheckpoints,
  verifyAuditLog,
} from "../../src/audit/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { TEST_CHECKPOINT_SIGNER } from "../_helpers/lineage_tree.ts";
import { auditFixture, segmentLines, writeEvents, writeLines } from "./_helpers.ts";

async function check(fx: { dir: string; key: import("../../src/audit/mod.ts").AuditKey }) {
  return await verifyAuditLog(fx.dir, fx.key, {
    checkpoints: await readAuditCheckpoints(fx.dir, TEST_CHECKPOINT_SIGNER.publicKey),
  });
}

Deno.test("audit checkpoints cover every segment's lines and pass on an untouched log", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 3);
    fx.clock.advance(86_400_000); // the next day: a second segment
    await writeEvents(fx, 2, { from: 3 });
    const r = await checkpointAuditLog(fx.dir, TEST_CHECKPOINT_SIGNER, { clock: fx.clock });
    strictEqual(r.checkpoint.log, "audit");
    strictEqual(r.checkpoint.size, 5);
    strictEqual((await listSegments(fx.dir)).length, 2);
    await writeEvents(fx, 1, { from: 5 });
    const report = await check(fx);
    deepStrictEqual(report.issues, []);
    strictEqual(report.checkpoint?.matched, 1);
    strictEqual(report.checkpoint?.not_checkpointed, 1);
  });
});

Deno.test("a truncated audit tail passes the HMAC chain but not the checkpoint", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 4);
    await checkpointAuditLog(fx.dir, TEST_CHECKPOINT_SIGNER, { clock: fx.clock });
    const [segment] = await listSegments(fx.dir);
    const lines = await segmentLines(segment.path);
    await writeLines(segment.path, [...lines.slice(0, 2), ""]);
    const plain = await verifyAuditLog(fx.dir, fx.key);
    strictEqual(plain.ok, true, "the chain alone cannot tell a cut tail");
    const report = await check(fx);
    deepStrictEqual(report.issues.map((i) => i.code), ["audit.log_truncated"]);
    match(
      report.issues[0].message,
      /^log truncated: checkpoint #1 \(size 4, .*\) covers 4 lines, the audit log has 2/,
    );
    strictEqual(report.issues[0].segment, "checkpoints.jsonl");
    strictEqual(report.issues[0].line, 1);
  });
});

Deno.test("a deleted audit record names the segment line where the logs part", async () => {
  await withTempDir(async (root) => {
    const fx = await auditFixture(root);
    await writeEvents(fx, 4);
    await checkpointAuditLog(fx.dir, TEST_CHECKPOINT_SIGNER, { clock: fx.clock });
    const [segment] = await listSegments(fx.dir);
    const lines = await segmentLines(segment.path);
    lines.splice(1, 1);
    await writeLines(segment.path, lines);
    const report = await check(fx);
    const codes = report.issues.map((i) => i.code);
    ok(codes.includes("audit.prev_hmac_mismatch"));
    const mismatch = report.issues.find((i) => i.code === "audit.checkpoint_mismatch");
    ok(mismatch, JSON.stringify(codes));
    ok(
      mismatch.message.includes(`first differing leaf 1 (${segment.name}:2)`) &&
        mismatch.message.includes("(deleted)"),
      mismatch.message,
    );
  });
});
