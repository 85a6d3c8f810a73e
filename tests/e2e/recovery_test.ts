// Recovery steps end to end: a failing step routes its conditional recovery step (a failure
// receipt on the run's spine, stamped on the task and in its prompt) and skips the step that
// wanted it to pass; `bernstein lineage verify` resolves the receipt (0), refuses a changed one
// (2) and needs the audit key (3, never creating it); identical runs give identical hashes.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { dirname, join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, eventsOf, prepareRepo, summaryOf } from "./_run_helpers.ts";

const PLAN = `name: recover
cli: scripted
stages:
  - name: test
    steps:
      - title: Run tests
        description: |
          @agent write t.txt x
        completion_signals:
          - test_passes: [sh, -c, "echo '2 tests failed'; exit 1"]
  - name: fix
    depends_on:
      - stage: test
        condition: "status == 'failed'"
    steps:
      - title: Fix bugs
        description: |
          @agent write fix.txt fixed
  - name: ship
    steps:
      - title: Deploy
        depends_on:
          - step: Run tests
            condition: "status == 'done'"
        description: |
          @agent write deploy.txt shipped
`;

interface Routed {
  runId: string;
  receiptHash: string;
  receiptFile: string;
}

async function runRecovery(dir: string, record?: string): Promise<Routed> {
  // The scripted agent records its prompt outside the repo: the sandbox lets it write there.
  await prepareRepo(
    dir,
    PLAN,
    record === undefined ? {} : { sandbox: { writable: [dirname(record)] } },
  );
  const run = await bern(
    dir,
    ["run", "plan.yaml", "--json"],
    record === undefined ? {} : { BERNSTEIN_SCRIPTED_RECORD: record },
  );
  strictEqual(run.code, 0, run.stdout + run.stderr);
  const summary = summaryOf(run);
  strictEqual(summary.health, "HEALTHY");
  deepStrictEqual(summary.recovered, ["1.1-run-tests"]);
  deepStrictEqual(summary.tasks, { total: 3, failed: 1, closed: 1, skipped: 1 });
  const events = eventsOf(run);
  const routed = events.find((e) => e.type === "task.routed");
  strictEqual(routed?.task_id, "2.1-fix-bugs");
  strictEqual(routed?.source_task, "1.1-run-tests");
  strictEqual(routed?.source_status, "failed");
  const skipped = events.find((e) => e.type === "task.skipped");
  strictEqual(skipped?.task_id, "3.1-deploy");
  match(
    String(skipped?.reason),
    /condition not met: status == 'done' \(1\.1-run-tests ended failed\)/,
  );
  ok(!events.some((e) => e.type === "task.spawned" && e.task_id === "3.1-deploy"));
  const task = JSON.parse((await bern(dir, ["task", "show", "2.1-fix-bugs", "--json"])).stdout);
  const receiptHash = String(
    task.metadata?.recovery_receipt_hash ?? task.task?.metadata?.recovery_receipt_hash,
  );
  match(receiptHash, /^sha256:[0-9a-f]{64}$/);
  strictEqual(receiptHash, routed?.receipt_hash);
  const meta = task.metadata ?? task.task.metadata;
  return {
    runId: String(summary.run_id),
    receiptHash,
    receiptFile: join(dir, meta.recovery.receipt),
  };
}

Deno.test("a failed step routes its recovery step with a receipt that lineage verify resolves", async () => {
  await withTempDir(async (dir) => {
    const records = join(dir, "..", `${dir.split("/").pop()}.records`);
    await Deno.mkdir(records);
    const record = join(records, "prompt");
    const r = await runRecovery(dir, record);
    // The recovery agent was told why it runs, with the receipt.
    const prompt = await Deno.readTextFile(record);
    ok(prompt.includes("## Why this task runs: 1.1-run-tests ended failed"), prompt);
    ok(prompt.includes(`Failure receipt: ${r.receiptHash}`), prompt);
    ok(prompt.includes("2 tests failed"), prompt);
    // The receipt: canonical bytes, content-addressed, about the failing task.
    const receipt = JSON.parse(await Deno.readTextFile(r.receiptFile));
    strictEqual(receipt.source_task, "1.1-run-tests");
    strictEqual(receipt.recovery_task, "2.1-fix-bugs");
    strictEqual(receipt.condition_context.status, "failed");
    match(receipt.condition_context.output, /2 tests failed/);
    strictEqual(receipt.gate_report.failure.code, "signals-unmet");
    deepStrictEqual(
      receipt.journal_tail.map((e: { type: string }) => e.type),
      ["task.spawned", "task.done", "task.failed"],
    );
    ok(!JSON.stringify(receipt).includes(r.runId.split("-").pop() as string), "no run names");
    const verify = await bern(dir, ["lineage", "verify", r.runId, "--receipt-hash", r.receiptHash]);
    strictEqual(verify.code, 0, verify.stdout + verify.stderr);
    match(verify.stdout, /PASS: the receipt resolves on an intact chain/);
    const json = JSON.parse(
      (await bern(dir, ["lineage", "verify", r.runId, "--receipt-hash", r.receiptHash, "--json"]))
        .stdout,
    );
    strictEqual(json.ok, true);
    strictEqual(json.receipt.source_task, "1.1-run-tests");
    // The rest of the record still verifies with the spine and receipts beside the log.
    strictEqual((await bern(dir, ["lineage", "gate"])).code, 0);
    strictEqual((await bern(dir, ["audit", "verify"])).code, 0);
    // A changed receipt does not resolve (2); nor does an unknown hash.
    const original = await Deno.readTextFile(r.receiptFile);
    await Deno.writeTextFile(r.receiptFile, original.replace('"failed"', '"done"'));
    const changed = await bern(dir, [
      "lineage",
      "verify",
      r.runId,
      "--receipt-hash",
      r.receiptHash,
    ]);
    strictEqual(changed.code, 2, changed.stdout);
    match(changed.stdout, /the receipt was changed/);
    await Deno.writeTextFile(r.receiptFile, original);
    const unknown = await bern(dir, [
      "lineage",
      "verify",
      r.runId,
      "--receipt-hash",
      `sha256:${"0".repeat(64)}`,
    ]);
    strictEqual(unknown.code, 2);
    // A rewritten spine row does not resolve either.
    const spine = join(dir, ".sdd", "lineage", r.runId, "spine.jsonl");
    const rows = await Deno.readTextFile(spine);
    await Deno.writeTextFile(spine, rows.replace('"actor":"orchestrator"', '"actor":"someone"'));
    strictEqual(
      (await bern(dir, ["lineage", "verify", r.runId, "--receipt-hash", r.receiptHash])).code,
      2,
    );
    await Deno.writeTextFile(spine, rows);
    // No audit key: exit 3, and none is created.
    const missing = join(dir, "..", "no-such.key");
    const nokey = await bern(dir, [
      "lineage",
      "verify",
      r.runId,
      "--receipt-hash",
      r.receiptHash,
      "--key-path",
      missing,
    ]);
    strictEqual(nokey.code, 3, nokey.stdout + nokey.stderr);
    strictEqual(await Deno.lstat(missing).then(() => true, () => false), false);
  });
});

Deno.test("two runs over identical fixtures give the same receipt content hash and spine entry hash", async () => {
  await withTempDir(async (a) => {
    await withTempDir(async (b) => {
      const first = await runRecovery(a);
      const second = await runRecovery(b);
      ok(first.runId !== second.runId);
      strictEqual(first.receiptHash, second.receiptHash);
      strictEqual(first.receiptFile.split("/").pop(), second.receiptFile.split("/").pop());
      deepStrictEqual(
        await Deno.readFile(first.receiptFile),
        await Deno.readFile(second.receiptFile),
      );
    });
  });
});
