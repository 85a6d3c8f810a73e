// The run spine and failure receipts on disk: a receipt resolves on an intact chain; any change
// to a receipt field, a spine row, the head, or the order of rows is caught; the format is the
// Python implementation's (checked against an independent Python reading of it).
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { ensureAuditKey } from "../../src/audit/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import {
  type FailureReceipt,
  parseReceipt,
  RECEIPT_SCHEMA,
  receiptBytes,
  SPINE_FILE,
  SPINE_HEAD_FILE,
  spineKey,
  verifySpine,
} from "../../src/lineage/mod.ts";
import {
  appendSpineEntry,
  checkSpineRunId,
  lineagePaths,
  verifyRecoveryReceipt,
  writeReceipt,
} from "../../src/lineage/store/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const SCRIPT = fromFileUrl(new URL("./_py/spine_ref.py", import.meta.url));
const RUN = "calm-heron-1a2b3c";

function receipt(overrides: Partial<FailureReceipt> = {}): FailureReceipt {
  return {
    schema: RECEIPT_SCHEMA,
    source_task: "2.1-run-tests",
    source_status: "failed",
    source_stage: "test",
    recovery_task: "3.1-fix-bugs",
    condition: "status == 'failed'",
    condition_context: {
      status: "failed",
      result: "signals-unmet: 2 tests failed",
      output: "2 tests failed\n",
    },
    gate_report: { gates: [], failure: { code: "signals-unmet", detail: "2 tests failed" } },
    journal_tail: [{ type: "task.failed", task_id: "2.1-run-tests", reason: "x" }],
    ...overrides,
  };
}

async function setup(root: string) {
  const key = await ensureAuditKey(join(root, "audit.key"), new SeededRandom(5));
  const paths = lineagePaths(join(root, ".sdd"));
  const anchor = async (r: FailureReceipt) => {
    const written = await writeReceipt(paths, r);
    const entry = await appendSpineEntry(paths, RUN, {
      artifact_path: written.repoPath,
      content_hash: `sha256:${written.hex}`,
      actor: "orchestrator",
      step_id: `failure-receipt:${r.recovery_task}`,
      model: "",
      timestamp: 0,
    }, key.bytes);
    return { written, entry };
  };
  const verify = (hash: string, receiptFile?: string) =>
    verifyRecoveryReceipt({
      paths,
      runId: RUN,
      receiptHash: hash,
      receiptFile,
      auditKey: key.bytes,
    });
  return { key, paths, anchor, verify, dir: join(paths.lineageDir, RUN) };
}

Deno.test("a receipt resolves on an intact spine; the same receipt gives the same hashes", async () => {
  await withTempDir(async (root) => {
    const s = await setup(root);
    const a = await s.anchor(receipt());
    const b = await s.anchor(receipt({ recovery_task: "3.2-fix-more" }));
    match(a.entry.entry_hash, /^sha256:[0-9a-f]{64}$/);
    strictEqual(b.entry.prev_hash, a.entry.entry_hash);
    strictEqual(a.written.repoPath, `.sdd/lineage/receipts/${a.written.hex}.json`);
    deepStrictEqual(await Deno.readFile(a.written.path), receiptBytes(receipt()));
    for (const e of [a.entry, b.entry]) {
      const r = await s.verify(e.entry_hash);
      deepStrictEqual(r.problems, []);
      strictEqual(r.ok, true);
      strictEqual(r.count, 2);
    }
    // Another project, another audit key, the same receipt first on its spine: the same bytes,
    // the same content hash and the same entry hash (only the HMAC tags differ).
    await withTempDir(async (other) => {
      const key = await ensureAuditKey(join(other, "audit.key"), new SeededRandom(99));
      const paths = lineagePaths(join(other, ".sdd"));
      const w = await writeReceipt(paths, receipt());
      const e = await appendSpineEntry(paths, RUN, {
        artifact_path: w.repoPath,
        content_hash: `sha256:${w.hex}`,
        actor: "orchestrator",
        step_id: "failure-receipt:3.1-fix-bugs",
        model: "",
        timestamp: 0,
      }, key.bytes);
      strictEqual(w.hex, a.written.hex);
      strictEqual(e.entry_hash, a.entry.entry_hash);
      ok(e.hmac !== a.entry.hmac);
    });
    // Writing the same receipt again is a no-op; a changed file under its name is refused.
    await writeReceipt(s.paths, receipt());
    await Deno.writeTextFile(a.written.path, "{}");
    await writeReceipt(s.paths, receipt()).then(
      () => ok(false, "a changed receipt file must be refused"),
      (e) => strictEqual(e.code, "lineage.receipt_conflict"),
    );
  });
});

Deno.test("every receipt field change, spine row rewrite, cut or reorder is detected", async () => {
  await withTempDir(async (root) => {
    const s = await setup(root);
    const a = await s.anchor(receipt());
    const b = await s.anchor(receipt({ recovery_task: "3.2-fix-more" }));
    const original = await Deno.readFile(a.written.path);
    // Each receipt field mutated (content hash no longer matches the anchored entry).
    const base = receipt() as unknown as Record<string, unknown>;
    for (const field of Object.keys(base)) {
      const changed = structuredClone(base);
      changed[field] = field === "journal_tail"
        ? []
        : field === "gate_report"
        ? null
        : field === "condition_context"
        ? { status: "done", result: "", output: "" }
        : field === "source_stage"
        ? "other"
        : `${base[field]}x`;
      await Deno.writeFile(a.written.path, receiptBytes(changed as unknown as FailureReceipt));
      const r = await s.verify(a.entry.entry_hash);
      strictEqual(r.ok, false, field);
      match(r.problems.map((p) => p.message).join("; "), /the receipt was changed/, field);
    }
    // Same content, not canonical (spaces): its hash differs too, and the form is named.
    await Deno.writeTextFile(
      a.written.path,
      JSON.stringify(JSON.parse(new TextDecoder().decode(original)), null, 1),
    );
    const spaced = await s.verify(a.entry.entry_hash);
    match(spaced.problems.map((p) => p.message).join("; "), /not in canon form/);
    await Deno.writeFile(a.written.path, original);
    // --receipt-file pointing at another valid receipt: not the anchored one.
    const other = join(root, "other.json");
    await Deno.writeFile(other, receiptBytes(receipt({ source_status: "cancelled" })));
    strictEqual((await s.verify(a.entry.entry_hash, other)).ok, false);
    strictEqual((await s.verify(a.entry.entry_hash, a.written.path)).ok, true);
    // Spine rows: one byte of a field, a re-hashed row without the key, reordered, cut.
    const rowsPath = join(s.dir, SPINE_FILE);
    const rows = await Deno.readTextFile(rowsPath);
    const [r1, r2] = rows.trimEnd().split("\n");
    const tampered: [string, string, RegExp][] = [
      ["field", rows.replace('"actor":"orchestrator"', '"actor":"orchestratoR"'), /entry_hash/],
      ["reordered", `${r2}\n${r1}\n`, /prev_hash breaks the chain/],
      ["cut tail", `${r1}\n`, /rows were removed|no entry has hash/],
      ["dropped first", `${r2}\n`, /prev_hash breaks the chain/],
      ["torn", rows.slice(0, -1), /torn/],
    ];
    for (const [name, text, want] of tampered) {
      await Deno.writeTextFile(rowsPath, text);
      const r = await s.verify(name === "cut tail" ? a.entry.entry_hash : b.entry.entry_hash);
      strictEqual(r.ok, false, name);
      match(r.problems.map((p) => p.message).join("; "), want, name);
    }
    // A row re-hashed consistently (entry hash recomputed) still fails its HMAC.
    const row = JSON.parse(r1);
    row.step_id = "failure-receipt:evil";
    const { spineEntryHash } = await import("../../src/lineage/mod.ts");
    row.entry_hash = spineEntryHash(row);
    await Deno.writeTextFile(rowsPath, `${JSON.stringify(row)}\n${r2}\n`);
    const rehashed = await s.verify(b.entry.entry_hash);
    match(
      rehashed.problems.map((p) => `${p.where} ${p.message}`).join("; "),
      /:1 hmac does not verify/,
    );
    // The head is pinned: deleting it is reported, editing it fails its HMAC.
    await Deno.writeTextFile(rowsPath, rows);
    strictEqual((await s.verify(b.entry.entry_hash)).ok, true);
    const headPath = join(s.dir, SPINE_HEAD_FILE);
    const head = await Deno.readTextFile(headPath);
    await Deno.writeTextFile(headPath, head.replace('"count":2', '"count":1'));
    match((await s.verify(b.entry.entry_hash)).problems[0].message, /hmac does not verify/);
    await Deno.remove(headPath);
    match((await s.verify(b.entry.entry_hash)).problems[0].message, /unpinned/);
    // Appending refuses a broken spine.
    await Deno.writeTextFile(rowsPath, `${r2}\n`);
    await s.anchor(receipt({ recovery_task: "9.9-x" })).then(
      () => ok(false, "appending to a broken spine must be refused"),
      (e) => strictEqual(e.code, "lineage.spine_broken"),
    );
  });
});

Deno.test("receipts parse only in canon form with exactly their fields; run ids are one folder", () => {
  const bytes = receiptBytes(receipt());
  deepStrictEqual(parseReceipt(bytes), { ok: true, receipt: receipt() });
  const extra = new TextEncoder().encode(
    new TextDecoder().decode(bytes).replace('{"condition"', '{"a":1,"condition"'),
  );
  match((parseReceipt(extra) as { problem: string }).problem, /fields are a, condition/);
  for (const bad of ["../x", "a/b", "", "receipts", ".hidden", "a..b"]) {
    let threw = false;
    try {
      checkSpineRunId(bad);
    } catch {
      threw = true;
    }
    ok(threw, bad);
  }
  strictEqual(checkSpineRunId(RUN), RUN);
});

async function python(...args: string[]) {
  const out = await new Deno.Command("python3", { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

const pythonAvailable = await python("-c", "import cryptography").then(
  (r) => r.code === 0,
  () => false,
);

Deno.test({
  name: "the spine is the Python implementation's format, both ways",
  ignore: !pythonAvailable,
  async fn() {
    await withTempDir(async (root) => {
      const s = await setup(root);
      // Python writes, we verify.
      const pyDir = join(root, "py");
      const w = await python(SCRIPT, "write", pyDir, s.key.path, "3");
      strictEqual(w.code, 0, w.stderr);
      const report = verifySpine(
        await Deno.readFile(join(pyDir, SPINE_FILE)),
        await Deno.readFile(join(pyDir, SPINE_HEAD_FILE)),
        { spine: spineKey(s.key.bytes), audit: s.key.bytes },
      );
      deepStrictEqual(report.problems, []);
      strictEqual(report.count, 3);
      // We write, Python verifies; a tampered row fails there too.
      await s.anchor(receipt());
      await s.anchor(receipt({ recovery_task: "3.2-fix-more" }));
      const v = JSON.parse((await python(SCRIPT, "verify", s.dir, s.key.path)).stdout);
      deepStrictEqual(v, { ok: true, count: 2, errors: [] });
      const rowsPath = join(s.dir, SPINE_FILE);
      await Deno.writeTextFile(
        rowsPath,
        (await Deno.readTextFile(rowsPath)).replace('"model":""', '"model":"x"'),
      );
      const bad = JSON.parse((await python(SCRIPT, "verify", s.dir, s.key.path)).stdout);
      strictEqual(bad.ok, false);
    });
  },
});
