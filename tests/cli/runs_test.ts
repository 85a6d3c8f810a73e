// Whole-binary tests of `bernstein runs …` under the real `bernstein` permission set.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { FakeClock } from "../../src/io/mod.ts";
import {
  type LedgerEntryInput,
  LedgerWriter,
  scorecardDir,
  scorecardEnvelope,
  writeScorecard,
} from "../../src/ledger/mod.ts";
import { runBernstein } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const EVENTS: LedgerEntryInput[] = [
  { kind: "run.open", payload: { branch: "feature", host: "ci-1" } },
  { kind: "task.scheduled", task_id: "1.1-a", payload: { title: "A" } },
  { kind: "task.started", task_id: "1.1-a" },
  { kind: "task.completed", task_id: "1.1-a", payload: { merged: true, cost_usd: 0.5 } },
  { kind: "run.closed", payload: { reason: "quiescent" } },
];

async function makeRun(sdd: string, runId: string, startMs: number, events = EVENTS) {
  const clock = new FakeClock(startMs);
  const ledger = await LedgerWriter.open(sdd, runId, { clock });
  for (const e of events) {
    await ledger.append(e);
    clock.advance(1500);
  }
}

Deno.test("runs scorecard prints the artefact; --verify --json matches; exit codes", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    await makeRun(sdd, "brave-otter-000001", Date.UTC(2026, 0, 1));
    const written = await writeScorecard(sdd, "brave-otter-000001");
    const rel = `.sdd/runs/brave-otter-000001/scorecard/${written.sha256}.json`;

    const shown = await runBernstein(["runs", "scorecard", "brave-otter-000001", "--json"], {
      cwd: dir,
    });
    strictEqual(shown.code, 0, shown.stderr);
    const doc = JSON.parse(shown.stdout);
    deepStrictEqual(Object.keys(doc).sort(), ["artifact", "content", "sha256"]);
    strictEqual(doc.artifact, rel);
    strictEqual(doc.sha256, written.sha256);
    strictEqual(doc.content.outcome, "merged");

    const human = await runBernstein(["runs", "scorecard", "brave-otter-000001"], { cwd: dir });
    strictEqual(human.code, 0, human.stderr);
    ok(/^outcome\s+merged$/m.test(human.stdout), human.stdout);
    ok(/^started\s+2026-01-01T00:00:00Z$/m.test(human.stdout), human.stdout);

    const verified = await runBernstein(
      ["runs", "scorecard", "brave-otter-000001", "--verify", "--json"],
      { cwd: dir },
    );
    strictEqual(verified.code, 0, verified.stderr);
    deepStrictEqual(JSON.parse(verified.stdout), {
      ok: true,
      artifact_sha256: written.sha256,
      recomputed_sha256: written.sha256,
      description: "the scorecard matches the ledger (5 rows)",
      artifact_path: rel,
    });
  });
});

Deno.test("runs scorecard --verify exits 1 naming the diverging fields of a forged scorecard", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    await makeRun(sdd, "r1", Date.UTC(2026, 0, 1));
    const written = await writeScorecard(sdd, "r1");
    const forged = scorecardEnvelope({ ...written.content, outcome: "no-changes", cost_usd: 0 });
    await Deno.remove(written.path);
    await Deno.writeFile(join(scorecardDir(sdd, "r1"), `${forged.sha256}.json`), forged.bytes);
    const human = await runBernstein(["runs", "scorecard", "r1", "--verify"], { cwd: dir });
    strictEqual(human.code, 1);
    strictEqual(human.stdout, "");
    ok(
      human.stderr.startsWith(
        "error[runs.scorecard_mismatch]: .sdd/runs/r1/scorecard/" + forged.sha256 +
          ".json: the scorecard differs from the ledger in: cost_usd, outcome",
      ),
      human.stderr,
    );
    const json = await runBernstein(["runs", "scorecard", "r1", "--verify", "--json"], {
      cwd: dir,
    });
    strictEqual(json.code, 1);
    const doc = JSON.parse(json.stdout);
    strictEqual(doc.ok, false);
    strictEqual(doc.artifact_sha256, forged.sha256);
    strictEqual(doc.recomputed_sha256, written.sha256);
    strictEqual(doc.description, "the scorecard differs from the ledger in: cost_usd, outcome");
  });
});

Deno.test("runs scorecard: a missing ledger or artefact is exit 1 with a clear message", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const none = await runBernstein(["runs", "scorecard", "ghost-run-000000"], { cwd: dir });
    strictEqual(none.code, 1);
    ok(
      none.stderr.startsWith(
        "error[runs.scorecard_missing]: run 'ghost-run-000000' has no scorecard",
      ),
      none.stderr,
    );
    ok(none.stderr.includes("and no ledger to build one from"), none.stderr);
    await makeRun(sdd, "r1", Date.UTC(2026, 0, 1), EVENTS.slice(0, 2));
    const noCard = await runBernstein(["runs", "scorecard", "r1", "--verify"], { cwd: dir });
    strictEqual(noCard.code, 1);
    ok(
      noCard.stderr.startsWith("error[runs.scorecard_missing]: run 'r1' has no scorecard artefact"),
      noCard.stderr,
    );
    await writeScorecard(sdd, "r1");
    await Deno.remove(join(sdd, "runtime", "ledger", "r1", "000000.jsonl"));
    const noLedger = await runBernstein(["runs", "scorecard", "r1", "--verify", "--json"], {
      cwd: dir,
    });
    strictEqual(noLedger.code, 1);
    const doc = JSON.parse(noLedger.stdout);
    strictEqual(doc.ok, false);
    strictEqual(doc.recomputed_sha256, null);
    strictEqual(doc.description, "run 'r1' has no ledger (.sdd/runtime/ledger/r1/000000.jsonl)");
    ok(noLedger.stderr.startsWith("error[runs.ledger_missing]"), noLedger.stderr);
    const bad = await runBernstein(["runs", "scorecard", "../etc"], { cwd: dir });
    strictEqual(bad.code, 2);
    ok(bad.stderr.startsWith("error[runs.bad_id]"), bad.stderr);
  });
});

Deno.test("runs list shows runs newest first with outcome and ledger state", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const empty = await runBernstein(["runs", "list"], { cwd: dir });
    strictEqual(empty.code, 0);
    ok(empty.stdout.startsWith("no runs yet"), empty.stdout);
    await makeRun(sdd, "old-run-000001", Date.UTC(2026, 0, 1));
    await writeScorecard(sdd, "old-run-000001");
    await makeRun(sdd, "new-run-000002", Date.UTC(2026, 0, 2), EVENTS.slice(0, 3));
    const ledgerFile = join(sdd, "runtime", "ledger", "new-run-000002", "000000.jsonl");
    const bytes = await Deno.readFile(ledgerFile);
    await Deno.writeFile(ledgerFile, bytes.subarray(0, bytes.length - 1));
    await Deno.mkdir(join(sdd, "runs", "orphan-000003"), { recursive: true });
    const json = await runBernstein(["runs", "list", "--json"], { cwd: dir });
    strictEqual(json.code, 0, json.stderr);
    const runs = JSON.parse(json.stdout).runs;
    deepStrictEqual(runs.map((r: { run_id: string }) => r.run_id), [
      "new-run-000002",
      "old-run-000001",
      "orphan-000003",
    ]);
    strictEqual(runs[0].outcome, null);
    deepStrictEqual(runs[0].ledger, {
      path: ".sdd/runtime/ledger/new-run-000002/000000.jsonl",
      rows: 2,
      ok: false,
      broken_line: 3,
    });
    strictEqual(runs[1].outcome, "merged");
    strictEqual(runs[1].started_at, 1767225600);
    strictEqual(runs[1].scorecard.ok, true);
    strictEqual(runs[2].ledger, null);
    const human = await runBernstein(["runs", "list"], { cwd: dir });
    const lines = human.stdout.trim().split("\n");
    strictEqual(lines.length, 4);
    ok(/^new-run-000002\s+2026-01-02T00:00:00Z\s+-\s+BROKEN at line 3$/.test(lines[1]), lines[1]);
    ok(/^old-run-000001\s+2026-01-01T00:00:00Z\s+merged\s+5 rows$/.test(lines[2]), lines[2]);
  });
});

Deno.test("runs scorecard builds the missing scorecard of an interrupted run from its ledger, once", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    // Started a task, never closed: what a killed run leaves.
    await makeRun(sdd, "r2", Date.UTC(2026, 0, 2), EVENTS.slice(0, 3));
    const first = await runBernstein(["runs", "scorecard", "r2", "--json"], { cwd: dir });
    strictEqual(first.code, 0, first.stderr);
    const doc = JSON.parse(first.stdout);
    strictEqual(doc.built, true);
    strictEqual(doc.interrupted, true);
    strictEqual(doc.content.outcome, "wedged");
    deepStrictEqual(doc.content.evidence.unfinished, ["1.1-a"]);
    // Idempotent: the second call finds it, builds nothing, and --verify matches.
    const again = await runBernstein(["runs", "scorecard", "r2", "--json"], { cwd: dir });
    strictEqual(JSON.parse(again.stdout).built, undefined, "a stored one: the usual shape");
    strictEqual(JSON.parse(again.stdout).sha256, doc.sha256);
    const verify = await runBernstein(["runs", "scorecard", "r2", "--verify"], { cwd: dir });
    strictEqual(verify.code, 0, verify.stderr);
    // The human form says what happened.
    await Deno.remove(join(scorecardDir(sdd, "r2")), { recursive: true });
    const human = await runBernstein(["runs", "scorecard", "r2"], { cwd: dir });
    strictEqual(human.code, 0, human.stderr);
    ok(
      human.stdout.startsWith(
        "built now: run 'r2' had no scorecard; it was interrupted (its ledger has no run.closed)\n",
      ),
      human.stdout,
    );
    // A ledger that does not verify builds nothing.
    await makeRun(sdd, "r3", Date.UTC(2026, 0, 3), EVENTS);
    const path = join(sdd, "runtime", "ledger", "r3", "000000.jsonl");
    const text = await Deno.readTextFile(path);
    await Deno.writeTextFile(path, text.replace('"quiescent"', '"tampered"'));
    const broken = await runBernstein(["runs", "scorecard", "r3"], { cwd: dir });
    strictEqual(broken.code, 1);
    ok(broken.stderr.startsWith("error[ledger.chain_broken]:"), broken.stderr);
    strictEqual(await Deno.stat(scorecardDir(sdd, "r3")).then(() => true, () => false), false);
  });
});
