// Checkpoints during a run: every `tuning.checkpoints.every_entries` entries a run appends to a
// log, and at its end; a checkpoint that cannot be signed is a warning, never a crash.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { AuditLog, readAuditCheckpoints, verifyAuditLog } from "../../src/audit/mod.ts";
import { readCheckpointLines } from "../../src/crypto/mod.ts";
import { RunCheckpoints } from "../../src/orchestrator/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { gateDir, TEST_CHECKPOINT_SIGNER, testStore } from "../_helpers/lineage_tree.ts";
import { auditFixture } from "../audit/_helpers.ts";

const enc = new TextEncoder();

async function sizes(path: string): Promise<number[]> {
  const { lines } = readCheckpointLines(await Deno.readFile(path));
  return lines.map((l) => l.parsed.ok ? l.parsed.checkpoint.size : -1);
}

async function setup(root: string, everyEntries: number) {
  const fx = await auditFixture(root);
  const audit = new AuditLog(fx.dir, fx.key, { clock: fx.clock });
  const { store: lineage, clock } = testStore(root);
  const warnings: string[] = [];
  let signerCalls = 0;
  const checkpoints = new RunCheckpoints({
    lineage,
    audit,
    signer: () => {
      signerCalls++;
      return Promise.resolve(TEST_CHECKPOINT_SIGNER);
    },
    everyEntries,
    clock,
    warn: (m) => warnings.push(m),
  });
  const probe = (i: number) =>
    audit.append({
      actor: "tester",
      event_type: "probe",
      resource_type: "task",
      resource_id: `r${i}`,
      details: { i },
    });
  const write = async (i: number) => {
    clock.advance(1000);
    const r = await lineage.recordWrite(`src/f${i}.ts`, enc.encode(`v${i}`), {
      agent: "claude-1",
      toolCallId: `tc-${i}`,
      spanId: `s-${i}`,
    });
    strictEqual(r.status, "recorded");
  };
  return {
    fx,
    audit,
    lineage,
    checkpoints,
    warnings,
    probe,
    write,
    signerCalls: () => signerCalls,
  };
}

Deno.test("a run checkpoints each log after every N entries it appended, and at its end", async () => {
  await withTempDir(async (root) => {
    const s = await setup(root, 3);
    // Each checkpoint is queued behind the append that crossed the threshold (it covers what
    // the log holds when it runs); settling after each append makes the sizes exact here.
    for (let i = 0; i < 7; i++) {
      await s.probe(i);
      await s.checkpoints.settled();
    }
    for (let i = 0; i < 4; i++) {
      await s.write(i);
      await s.checkpoints.settled();
    }
    deepStrictEqual(await sizes(join(s.fx.dir, "checkpoints.jsonl")), [3, 6]);
    deepStrictEqual(await sizes(join(s.lineage.paths.lineageDir, "checkpoints.jsonl")), [3]);
    const end = await s.checkpoints.finish();
    deepStrictEqual(end.map((c) => [c.log, c.size, c.created]), [
      ["lineage", 4, true],
      ["audit", 7, true],
    ]);
    // Counting stopped: later appends wait for the next run's checkpoints.
    for (let i = 7; i < 11; i++) await s.probe(i);
    await s.checkpoints.settled();
    deepStrictEqual(await sizes(join(s.fx.dir, "checkpoints.jsonl")), [3, 6, 7]);
    strictEqual(s.signerCalls(), 1, "the operator key is resolved once");
    deepStrictEqual(s.warnings, []);
    await s.audit.close();
    // Both logs verify against what the run signed.
    const gate = await gateDir(root);
    strictEqual(gate.ok, true, JSON.stringify(gate.issues));
    strictEqual(gate.checkpoint?.latest?.size, 4);
    strictEqual(gate.checkpoint?.not_checkpointed, 0);
    const report = await verifyAuditLog(s.fx.dir, s.fx.key, {
      checkpoints: await readAuditCheckpoints(s.fx.dir, TEST_CHECKPOINT_SIGNER.publicKey),
    });
    deepStrictEqual(report.issues, []);
    strictEqual(report.checkpoint?.not_checkpointed, 4);
  });
});

Deno.test("every_entries 0 checkpoints only at the end; a log without entries is left out", async () => {
  await withTempDir(async (root) => {
    const s = await setup(root, 0);
    for (let i = 0; i < 5; i++) await s.probe(i);
    await s.checkpoints.settled();
    strictEqual(
      await Deno.lstat(join(s.fx.dir, "checkpoints.jsonl")).then(() => true, () => false),
      false,
    );
    const end = await s.checkpoints.finish();
    deepStrictEqual(end.map((c) => [c.log, c.size]), [["audit", 5]]);
    strictEqual(
      await Deno.lstat(s.lineage.paths.lineageDir).then(() => true, () => false),
      false,
      "no lineage folder is created for a run that wrote no lineage",
    );
    // A second end with nothing new writes nothing.
    const again = new RunCheckpoints({
      lineage: s.lineage,
      audit: s.audit,
      signer: () => Promise.resolve(TEST_CHECKPOINT_SIGNER),
      everyEntries: 0,
      clock: s.fx.clock,
      warn: (m) => s.warnings.push(m),
    });
    deepStrictEqual((await again.finish()).map((c) => [c.log, c.size, c.created]), [
      ["audit", 5, false],
    ]);
    await s.audit.close();
  });
});

Deno.test("a checkpoint the writer refuses is a run warning, and the run goes on", async () => {
  await withTempDir(async (root) => {
    const s = await setup(root, 2);
    for (let i = 0; i < 3; i++) await s.write(i);
    await s.checkpoints.settled();
    // Someone deletes a committed lineage line: no checkpoint is signed over that history.
    const log = s.lineage.paths.logPath;
    const lines = (await Deno.readTextFile(log)).split("\n");
    await Deno.writeTextFile(log, [lines[1], lines[2], ""].join("\n"));
    await s.probe(0);
    const end = await s.checkpoints.finish();
    deepStrictEqual(end.map((c) => c.log), ["audit"]);
    strictEqual(s.warnings.length, 1);
    match(s.warnings[0], /^no checkpoint of the lineage log was signed: .*no longer holds/);
    // And a signer that cannot be resolved (a key readable by others) is a warning too.
    const broken = new RunCheckpoints({
      lineage: s.lineage,
      audit: s.audit,
      signer: () => Promise.reject(new Error("operator key is readable by group or others")),
      everyEntries: 0,
      clock: s.fx.clock,
      warn: (m) => s.warnings.push(m),
    });
    deepStrictEqual(await broken.finish(), []);
    ok(s.warnings.slice(1).every((w) => w.includes("readable by group or others")));
    strictEqual(s.warnings.length, 3);
    await s.audit.close();
  });
});
