import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { AuditLog, ensureAuditKey } from "../../src/audit/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import {
  pinsOf,
  pinTaskVariables,
  replayRunPins,
  VariableStore,
  verifyFleet,
} from "../../src/fleet/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function setup(dir: string) {
  const sdd = join(dir, ".sdd");
  await Deno.mkdir(join(sdd, "audit"), { recursive: true });
  const auditKey = await ensureAuditKey(join(dir, "audit.key"), new SeededRandom(3));
  return { sdd, auditKey, vars: new VariableStore({ sdd, auditKey }) };
}

Deno.test("set, get, unset and list resolve from the chain; values are content-addressed", async () => {
  await withTempDir(async (dir) => {
    const { vars } = await setup(dir);
    const w0 = await vars.set("threshold", 5);
    const w1 = await vars.set("threshold", 9);
    strictEqual(w0.ordinal, 0);
    strictEqual(w1.old_value_hash, w0.new_value_hash);
    strictEqual((await vars.get("threshold")).value, 9);
    await vars.set("mode", "fast");
    await vars.unset("mode");
    deepStrictEqual((await vars.list()).map((v) => v.name), ["threshold"]);
    await rejects(() => vars.get("mode"), /no variable 'mode'/);
    await rejects(() => vars.unset("never"), /no variable 'never'/);
    // Writing the same value again stores one blob.
    await vars.set("again", 5);
    strictEqual((await vars.get("again")).value_hash, w0.new_value_hash);
    deepStrictEqual(vars.warnings, []);
  });
});

Deno.test("concurrent writers get contiguous ordinals and a lineage without forks", async () => {
  await withTempDir(async (dir) => {
    const { sdd, auditKey } = await setup(dir);
    // Separate stores, as separate processes would be; each append opens its own log.
    const writers = Array.from({ length: 8 }, () => new VariableStore({ sdd, auditKey }));
    await Promise.all(writers.map((w, i) => w.set("n", i)));
    const h = await writers[0].history("n");
    deepStrictEqual(h.writes.map((w) => w.ordinal), [0, 1, 2, 3, 4, 5, 6, 7]);
    const report = await verifyFleet(sdd, auditKey);
    deepStrictEqual(report.violations, []);
  });
});

Deno.test("a claim pins the head once; later attempts read the pinned bytes after any writes", async () => {
  await withTempDir(async (dir) => {
    const { sdd, auditKey, vars } = await setup(dir);
    await vars.set("threshold", { limit: 5 });
    const log = new AuditLog(join(sdd, "audit"), auditKey);
    const options = { sdd, runId: "run-1", auditKey, audit: log };
    const task = {
      id: "1.1-a",
      title: "limit ${var:threshold}",
      description: "use ${var:threshold}",
      metadata: {},
    };
    const first = await pinTaskVariables(task, options);
    strictEqual(first.description, 'use {"limit":5}');
    strictEqual(first.pinnedNow, true);
    for (let i = 6; i < 10; i++) await vars.set("threshold", { limit: i });
    // A retry or a resumed run carries the pins in the task's metadata.
    const again = await pinTaskVariables(
      { ...task, metadata: { fleet_pins: first.pins } },
      options,
    );
    strictEqual(again.description, first.description);
    strictEqual(again.title, first.title);
    strictEqual(again.pinnedNow, false);
    deepStrictEqual(pinsOf({ fleet_pins: first.pins }), first.pins);
    // A fresh task reads the live head.
    strictEqual(
      (await pinTaskVariables({ ...task, id: "1.2-b" }, options)).description,
      'use {"limit":9}',
    );
    await log.close();
    const replay = await replayRunPins(sdd, "run-1", auditKey);
    deepStrictEqual(
      replay.map((r) => [r.task_id, r.chain_position, new TextDecoder().decode(r.bytes)]),
      [["1.1-a", 0, '{"limit":5}'], ["1.2-b", 4, '{"limit":9}']],
    );
    const h = await vars.history("threshold");
    deepStrictEqual(h.reads.map((r) => [r.task_id, r.ordinal]), [["1.1-a", 0], ["1.2-b", 4]]);
    deepStrictEqual((await verifyFleet(sdd, auditKey)).violations, []);
  });
});

Deno.test("a changed blob is caught on read and by the fleet pillar; a changed index too", async () => {
  await withTempDir(async (dir) => {
    const { sdd, auditKey, vars } = await setup(dir);
    const w = await vars.set("t", 5);
    const hex = w.new_value_hash.slice(7);
    const blob = join(vars.paths.blobsDir, hex.slice(0, 2), hex);
    await Deno.chmod(blob, 0o644);
    await Deno.writeTextFile(blob, "6");
    await rejects(
      () => vars.get("t"),
      (e: Error & { code?: string }) => e.code === "fleet.blob_tampered",
    );
    await Deno.writeTextFile(vars.paths.indexPath, '{"variables":{}}');
    const report = await verifyFleet(sdd, auditKey);
    deepStrictEqual(report.violations.map((v) => v.code), [
      "fleet.blob_tampered",
      "fleet.index_tampered",
    ]);
    strictEqual(report.violations[0].where, w.where);
    await Deno.remove(blob);
    await rejects(
      () => vars.get("t"),
      (e: Error & { code?: string }) => e.code === "fleet.blob_missing",
    );
  });
});

Deno.test("a task created during the run that reads an unknown variable fails its claim with fleet.unknown_name", async () => {
  await withTempDir(async (dir) => {
    const { sdd, auditKey } = await setup(dir);
    const log = new AuditLog(join(sdd, "audit"), auditKey);
    await rejects(
      () =>
        pinTaskVariables(
          { id: "t", title: "x", description: "${var:nope}", metadata: {} },
          { sdd, runId: "run-1", auditKey, audit: log },
        ),
      (e: Error & { code?: string }) => e.code === "fleet.unknown_name",
    );
    await log.close();
  });
});
