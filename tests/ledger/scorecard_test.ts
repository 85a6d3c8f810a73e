import { deepStrictEqual, ok, strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  canonicalBytes,
  canonicalize,
  jsonFloat,
  type JsonObject,
} from "../../src/canonical/mod.ts";
import { sha256Hex } from "../../src/crypto/mod.ts";
import { FakeClock } from "../../src/io/mod.ts";
import {
  buildRow,
  deriveScorecard,
  divergingFields,
  findScorecard,
  GENERATED_RUN_ID,
  type LedgerEntryInput,
  LedgerError,
  type LedgerRow,
  LedgerWriter,
  runIdFromSeed,
  SCORECARD_FIELDS,
  scorecardDir,
  scorecardEnvelope,
  verifyScorecard,
  writeScorecard,
} from "../../src/ledger/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const START_MS = Date.UTC(2026, 0, 1);
const REF = new URL("./ledger_ref.py", import.meta.url).pathname;

/** Rows for a sequence of events, one second apart (pure, no disk). */
function rows(events: LedgerEntryInput[]): LedgerRow[] {
  const out: LedgerRow[] = [];
  events.forEach((ev, i) => out.push(buildRow(out.at(-1), { ...ev, tsMs: START_MS + i * 1000 })));
  return out;
}

const open = (payload: JsonObject = {}): LedgerEntryInput => ({ kind: "run.open", payload });
const closed = (reason = "quiescent"): LedgerEntryInput => ({
  kind: "run.closed",
  payload: { reason },
});
const task = (
  kind: LedgerEntryInput["kind"],
  id: string,
  payload: JsonObject = {},
): LedgerEntryInput => ({ kind, task_id: id, payload });

const RUN: LedgerEntryInput[] = [
  open({ branch: "feature", host: "ci-1" }),
  task("task.scheduled", "a", { title: "Add A" }),
  task("task.scheduled", "b", { title: "Add B" }),
  task("task.scheduled", "c", { title: "Add C" }),
  task("task.started", "a"),
  task("task.started", "b"),
  task("task.completed", "a", { merged: true, cost_usd: 0.25 }),
  task("task.failed", "b", { reason: "agent-error", cost_usd: 0.1 }),
  task("task.started", "b"),
  task("task.failed", "b", { reason: "gate-failed", cost_usd: 0.2 }),
  task("task.started", "c"),
  task("task.completed", "c", { merged: false, cost_usd: 1 }),
  closed(),
];

Deno.test("scorecard content has exactly the FORMATS §6 fields, derived from the ledger rows", () => {
  const content = deriveScorecard("brave-otter-3fa9c2", rows(RUN));
  deepStrictEqual(Object.keys(content).sort(), [...SCORECARD_FIELDS].sort());
  strictEqual(content.kind, "run_scorecard");
  strictEqual(content.version, 1);
  strictEqual(content.scorecard_version, 1);
  strictEqual(content.run_id, "brave-otter-3fa9c2");
  strictEqual(content.branch, "feature");
  strictEqual(content.host, "ci-1");
  strictEqual(content.outcome, "gate-failed");
  strictEqual(content.attempt_count, 1);
  strictEqual(content.tasks_total, 3);
  strictEqual(content.tasks_completed, 2);
  strictEqual(content.tasks_failed, 1);
  strictEqual(content.tasks_started, 3);
  deepStrictEqual(content.started_at, jsonFloat(1767225600));
  deepStrictEqual(content.ended_at, jsonFloat(1767225612));
  deepStrictEqual(content.elapsed_seconds, jsonFloat(12));
  strictEqual(content.cost_usd, 1.55);
  const text = canonicalize(content, "canon-ascii");
  ok(text.includes('"cost_usd":1.55'), text);
  ok(text.includes('"elapsed_seconds":12.0'), text);
  deepStrictEqual(content.steps, [
    {
      task_id: "a",
      title: "Add A",
      state: "completed",
      attempts: 1,
      merged: true,
      reason: null,
      cost_usd: 0.25,
    },
    {
      task_id: "b",
      title: "Add B",
      state: "failed",
      attempts: 2,
      merged: false,
      reason: "gate-failed",
      cost_usd: 0.3,
    },
    {
      task_id: "c",
      title: "Add C",
      state: "completed",
      attempts: 1,
      merged: false,
      reason: null,
      cost_usd: jsonFloat(1),
    },
  ]);
  const evidence = content.evidence as JsonObject;
  strictEqual(evidence.ledger_path, ".sdd/runtime/ledger/brave-otter-3fa9c2/000000.jsonl");
  strictEqual(evidence.ledger_rows, 13);
  strictEqual(evidence.ledger_head, rows(RUN).at(-1)?.entry_hash);
  deepStrictEqual(evidence.merged, ["a"]);
  deepStrictEqual(evidence.gate_failed, ["b"]);
});

Deno.test("scorecard outcome follows the documented rules in order", () => {
  const outcome = (events: LedgerEntryInput[]) => deriveScorecard("r", rows(events)).outcome;
  const merged = [task("task.started", "a"), task("task.completed", "a", { merged: true })];
  strictEqual(outcome([open(), ...merged, closed()]), "merged");
  strictEqual(outcome([open(), ...merged]), "wedged"); // never closed
  strictEqual(outcome([open(), ...merged, closed("backstop")]), "wedged");
  strictEqual(
    outcome([open(), ...merged, closed(), { kind: "run.resumed" }]),
    "wedged",
  ); // resumed after the close and not closed again
  strictEqual(outcome([open(), ...merged, closed("infra-error")]), "infra-error");
  strictEqual(
    outcome([open(), ...merged, task("task.failed", "b", { reason: "infra-error" }), closed()]),
    "infra-error",
  );
  strictEqual(
    outcome([open(), ...merged, task("task.failed", "b", { reason: "merge-conflict" }), closed()]),
    "gate-failed",
  );
  strictEqual(outcome([open(), task("task.completed", "a"), closed()]), "no-changes");
  strictEqual(
    outcome([open(), task("task.failed", "a", { reason: "agent-error" }), closed()]),
    "no-changes",
  );
  // A task that failed a gate and then completed on retry is completed.
  strictEqual(
    outcome([
      open(),
      task("task.failed", "a", { reason: "gate-failed" }),
      task("task.completed", "a", { merged: true }),
      closed(),
    ]),
    "merged",
  );
  const resumed = deriveScorecard("r", rows([open(), { kind: "run.resumed" }, closed()]));
  strictEqual(resumed.attempt_count, 2);
  throws(() => deriveScorecard("r", []), LedgerError);
});

Deno.test("scorecard derivation is pure: the same ledger gives the same bytes and sha256", async () => {
  const a = scorecardEnvelope(deriveScorecard("r", rows(RUN)));
  await new Promise((r) => setTimeout(r, 5)); // wall time moves; the scorecard must not
  const b = scorecardEnvelope(deriveScorecard("r", rows(RUN)));
  deepStrictEqual(a, b);
  strictEqual(a.sha256, sha256Hex(canonicalBytes(deriveScorecard("r", rows(RUN)), "canon-ascii")));
  ok(!new TextDecoder().decode(a.bytes).endsWith("\n"));
});

async function writeRun(sdd: string, runId: string, events: LedgerEntryInput[]): Promise<void> {
  const clock = new FakeClock(START_MS);
  const ledger = await LedgerWriter.open(sdd, runId, { clock });
  for (const ev of events) {
    await ledger.append(ev);
    clock.advance(1000);
  }
}

Deno.test("writeScorecard stores the canon-ascii envelope under its sha256; Python agrees", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    await writeRun(sdd, "r1", RUN);
    const written = await writeScorecard(sdd, "r1");
    strictEqual(written.path, join(scorecardDir(sdd, "r1"), `${written.sha256}.json`));
    const bytes = await Deno.readFile(written.path);
    deepStrictEqual(bytes, scorecardEnvelope(written.content).bytes);
    const py = new Deno.Command("python3", { args: [REF, "envelope", written.path] }).outputSync();
    deepStrictEqual(JSON.parse(new TextDecoder().decode(py.stdout)), {
      ok: true,
      sha256: written.sha256,
      reason: null,
    });
    // Writing again is idempotent.
    strictEqual((await writeScorecard(sdd, "r1")).path, written.path);
    const verified = await verifyScorecard(sdd, "r1");
    deepStrictEqual(verified, {
      ok: true,
      status: "match",
      artifact_sha256: written.sha256,
      recomputed_sha256: written.sha256,
      artifact_path: written.path,
      diverging: [],
      description: "the scorecard matches the ledger (13 rows)",
    });
  });
});

Deno.test("verify names the diverging fields of a re-hashed, edited artefact", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    await writeRun(sdd, "r1", RUN);
    const written = await writeScorecard(sdd, "r1");
    const forged = { ...written.content, outcome: "merged", tasks_failed: 0 };
    const env = scorecardEnvelope(forged);
    await Deno.remove(written.path);
    await Deno.writeFile(join(scorecardDir(sdd, "r1"), `${env.sha256}.json`), env.bytes);
    const v = await verifyScorecard(sdd, "r1");
    strictEqual(v.ok, false);
    strictEqual(v.status, "mismatch");
    deepStrictEqual(v.diverging, ["outcome", "tasks_failed"]);
    strictEqual(v.description, "the scorecard differs from the ledger in: outcome, tasks_failed");
    strictEqual(v.artifact_sha256, env.sha256);
    strictEqual(v.recomputed_sha256, written.sha256);
  });
});

Deno.test("verify catches an artefact edited in place and a ledger that grew after the scorecard", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    await writeRun(sdd, "r1", RUN.slice(0, -1));
    const first = await writeScorecard(sdd, "r1");
    strictEqual(first.content.outcome, "wedged");
    // The ledger grows (the run closes) but the scorecard is not rewritten.
    const ledger = await LedgerWriter.open(sdd, "r1", { clock: new FakeClock(START_MS + 60_000) });
    await ledger.append(closed());
    const stale = await verifyScorecard(sdd, "r1");
    strictEqual(stale.ok, false);
    ok(stale.diverging.includes("outcome"), stale.description);
    ok(stale.diverging.includes("evidence.ledger_rows"), stale.description);
    ok(stale.diverging.includes("ended_at"), stale.description);
    // Edited without re-hashing: the envelope itself is inconsistent.
    const text = (await Deno.readTextFile(first.path)).replace('"wedged"', '"merged"');
    await Deno.writeTextFile(first.path, text);
    const edited = await verifyScorecard(sdd, "r1");
    strictEqual(edited.ok, false);
    strictEqual(edited.status, "artefact_invalid");
    ok(edited.description.includes("the content was edited"), edited.description);
  });
});

Deno.test("verify reports a missing artefact, a missing ledger and a broken ledger", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const none = await verifyScorecard(sdd, "r1");
    strictEqual(none.ok, false);
    strictEqual(none.artifact_path, null);
    strictEqual(none.status, "artefact_missing");
    ok(none.description.startsWith("run 'r1' has no scorecard artefact"), none.description);
    await writeRun(sdd, "r1", RUN);
    const written = await writeScorecard(sdd, "r1");
    const ledgerFile = join(sdd, "runtime", "ledger", "r1", "000000.jsonl");
    const bytes = await Deno.readFile(ledgerFile);
    await Deno.writeFile(ledgerFile, bytes.subarray(0, bytes.length - 1));
    const broken = await verifyScorecard(sdd, "r1");
    strictEqual(broken.ok, false);
    strictEqual(broken.recomputed_sha256, null);
    strictEqual(broken.status, "ledger_broken");
    strictEqual(
      broken.description,
      "the ledger does not verify at line 13: missing trailing newline",
    );
    await Deno.remove(ledgerFile);
    const missing = await verifyScorecard(sdd, "r1");
    strictEqual(missing.ok, false);
    strictEqual(missing.artifact_sha256, written.sha256);
    strictEqual(missing.status, "ledger_missing");
    strictEqual(
      missing.description,
      "run 'r1' has no ledger (.sdd/runtime/ledger/r1/000000.jsonl)",
    );
  });
});

Deno.test("findScorecard picks the artefact covering the most ledger rows", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    await writeRun(sdd, "r1", RUN.slice(0, 5));
    const early = await writeScorecard(sdd, "r1");
    const ledger = await LedgerWriter.open(sdd, "r1", { clock: new FakeClock(START_MS + 9000) });
    await ledger.append(closed());
    const late = await writeScorecard(sdd, "r1");
    ok(early.sha256 !== late.sha256);
    strictEqual((await findScorecard(sdd, "r1"))?.path, late.path);
    ok((await verifyScorecard(sdd, "r1")).ok);
  });
});

Deno.test("divergingFields walks nested objects and lists", () => {
  deepStrictEqual(divergingFields({ a: 1, b: { c: [1, 2] } }, { a: 1, b: { c: [1, 3] } }), [
    "b.c[1]",
  ]);
  deepStrictEqual(divergingFields({ a: 1 }, { b: 1 }), ["a", "b"]);
  deepStrictEqual(divergingFields({ a: [1] }, { a: [1, 2] }), ["a"]);
  deepStrictEqual(divergingFields({ a: jsonFloat(1) }, { a: 1 }), ["a"]);
  deepStrictEqual(divergingFields({ a: 1 }, { a: 1 }), []);
});

Deno.test("run ids are adjective-noun-hex, deterministic per seed, and differ across seeds", () => {
  const id = runIdFromSeed("seed-1");
  ok(GENERATED_RUN_ID.test(id), id);
  strictEqual(runIdFromSeed("seed-1"), id);
  strictEqual(runIdFromSeed(new TextEncoder().encode("seed-1")), id);
  const ids = new Set(Array.from({ length: 200 }, (_, i) => runIdFromSeed(`seed-${i}`)));
  strictEqual(ids.size, 200);
  // Pinned: the mapping from seed to id is part of the contract (changing it renames runs).
  strictEqual(runIdFromSeed(new Uint8Array(32)), PINNED_ZERO_SEED_ID);
});

// sha256 of 32 zero bytes = 66687aad f8…: ADJECTIVES[0x66 % 64 = 38], NOUNS[0x68 % 64 = 40],
// then bytes 2..4 as hex (computed with Python hashlib over the word lists, not with this code).
const PINNED_ZERO_SEED_ID = "polite-pebble-7aadf8";
