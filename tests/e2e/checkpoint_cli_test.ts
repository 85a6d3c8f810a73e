// Checkpoints end to end, as an operator and an auditor run them: `bernstein lineage
// checkpoint`, the gate and `bernstein-verify chain` catching a deleted line, and
// `bernstein-verify consistency` over exported documents; `bernstein audit checkpoint` and
// `audit verify`.
import { match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { runBernstein, runVerify } from "../_helpers/cli.ts";
import { testStore, writeValidTree } from "../_helpers/lineage_tree.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";
import { auditFixture, writeEvents } from "../audit/_helpers.ts";

const enc = new TextEncoder();

function envOf(dir: string): Record<string, string> {
  return {
    BERNSTEIN_OPERATOR_SECRET: "test-operator-secret",
    BERNSTEIN_AUDIT_KEY_PATH: join(dir, "audit.key"),
  };
}

Deno.test("lineage checkpoint, gate and bernstein-verify chain catch a deleted leaf", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await writeValidTree(dir);
    const env = envOf(dir);
    const cp = await runBernstein(["lineage", "checkpoint", "--json", "--out", "old.json"], {
      cwd: dir,
      env,
    });
    strictEqual(cp.code, 0, cp.stderr);
    const doc = JSON.parse(cp.stdout);
    strictEqual(doc.created, true);
    strictEqual(doc.checkpoint.size, 5);
    const fingerprint = doc.operator_fingerprint as string;
    const gate = await runBernstein(["lineage", "gate"], { cwd: dir, env });
    strictEqual(gate.code, 0, gate.stdout);
    ok(gate.stdout.includes("checkpoints: latest checkpoints.jsonl:1 covers 5 lines"));
    const lineage = join(dir, ".sdd/lineage");
    const chain = await runVerify([
      "chain",
      "src/a.ts",
      "--lineage-dir",
      lineage,
      "--operator-fingerprint",
      fingerprint,
    ]);
    strictEqual(chain.code, 0, chain.stdout);
    // Grow, export with a proof from the old checkpoint: consistent.
    const { store, clock } = testStore(dir, { seed: 5 });
    clock.advance(50_000);
    await store.recordWrite("src/c.ts", enc.encode("c"), {
      agent: "x-1",
      toolCallId: "t",
      spanId: "s",
    });
    const grown = await runBernstein(
      ["lineage", "checkpoint", "--out", "new.json", "--from", "old.json"],
      { cwd: dir, env },
    );
    strictEqual(grown.code, 0, grown.stderr);
    const consistent = await runVerify(
      ["consistency", "old.json", "new.json", "--operator-fingerprint", fingerprint],
      { cwd: dir },
    );
    strictEqual(consistent.code, 0, consistent.stdout + consistent.stderr);
    ok(consistent.stdout.startsWith("PASS consistency:"), consistent.stdout);
    // Delete line 5 (the pr:// entry, a leaf nobody names): the gate and the verifier fail.
    const log = join(lineage, "log.jsonl");
    const lines = (await Deno.readTextFile(log)).split("\n");
    lines.splice(4, 1);
    await Deno.writeTextFile(log, lines.join("\n"));
    const failed = await runBernstein(["lineage", "gate"], { cwd: dir, env });
    strictEqual(failed.code, 1);
    match(
      failed.stdout,
      /checkpoints\.jsonl:1: checkpoint mismatch: checkpoint #1 \(size 5, .*first differing leaf 4 \(log\.jsonl:5\): the committed line sha256:\w+ is no longer in the log \(deleted\)/,
    );
    const verdict = await runVerify([
      "chain",
      "src/a.ts",
      "--lineage-dir",
      lineage,
      "--operator-fingerprint",
      fingerprint,
    ]);
    strictEqual(verdict.code, 1);
    ok(verdict.stdout.startsWith("FAIL chain src/a.ts:"), verdict.stdout);
    const report = JSON.parse(verdict.stderr.trim());
    ok(report.errors.some((e: { kind: string }) => e.kind === "checkpoint mismatch"));
  });
});

Deno.test("audit checkpoint is written under the chain lock and checked by audit verify", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const fx = await auditFixture(join(dir, ".sdd"));
    await writeEvents(fx, 3);
    const env = { BERNSTEIN_AUDIT_KEY_PATH: fx.keyPath };
    const cp = await runBernstein(["audit", "checkpoint", "--json"], { cwd: dir, env });
    strictEqual(cp.code, 0, cp.stderr);
    const size = JSON.parse(cp.stdout).checkpoint.size as number;
    const verify = await runBernstein(["audit", "verify"], { cwd: dir, env });
    strictEqual(verify.code, 0, verify.stdout + verify.stderr);
    strictEqual(size, 3);
    ok(verify.stdout.includes(`covers ${size} line`), verify.stdout);
    await writeEvents(fx, 1, { from: 3 });
    const later = await runBernstein(["audit", "verify", "--json"], { cwd: dir, env });
    strictEqual(JSON.parse(later.stdout).checkpoint.not_checkpointed, 1);
  });
});
