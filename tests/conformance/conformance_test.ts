// The conformance suite of bernstein-verify (fixtures/conformance/): every case is run as an
// auditor runs it — the real verify.ts under the read-only `verify` permission set, in the
// case's folder — and must give its exit code, summary, exact failure kinds and text. A second
// test regenerates the suite and fails when the committed fixtures are stale.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { conformanceFiles, type ExpectedVerdict } from "../../scripts/gen_conformance.ts";
import { REPO_ROOT, runVerify } from "../_helpers/cli.ts";

const ROOT = join(REPO_ROOT, "fixtures", "conformance");

async function caseNames(): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(ROOT)) if (e.isDirectory) out.push(e.name);
  return out.sort();
}

Deno.test("the conformance suite covers every attack issue 4 names", async () => {
  const names = await caseNames();
  for (
    const required of [
      "edited_line_fail",
      "reordered_keys_fail",
      "spaced_json_fail",
      "stripped_newline_fail",
      "forged_signature_fail",
      "swapped_card_fail",
      "kid_substitution_fail",
      "conflicting_cards_fail",
      "unresolved_fork_fail",
      "dangling_parent_fail",
      "removed_entry_fail",
      "member_added_after_signing_fail",
      "manifest_hash_mismatch_fail",
      "manifest_signed_by_another_key_fail",
      "zip_slip_fail",
      "duplicate_member_fail",
      "oversized_member_fail",
    ]
  ) ok(names.includes(required), `missing conformance case ${required}`);
  ok(names.some((n) => !n.endsWith("_fail")), "no passing case");
});

Deno.test("the conformance suite covers every checkpoint attack issue 15 names", async () => {
  const names = await caseNames();
  for (
    const required of [
      "chain_deleted_tip_fail",
      "chain_deleted_leaf_fail",
      "chain_reordered_lines_fail",
      "chain_truncated_log_fail",
      "consistency_rewritten_history_fail",
      "bad_inclusion_proof_fail",
      "chain_checkpoint_pass",
      "consistency_pass",
    ]
  ) ok(names.includes(required), `missing conformance case ${required}`);
});

Deno.test("bernstein-verify gives every conformance case its expected verdict", async (t) => {
  for (const name of await caseNames()) {
    await t.step(name, async () => {
      const dir = join(ROOT, name);
      const expected = JSON.parse(
        await Deno.readTextFile(join(dir, "expected.json")),
      ) as ExpectedVerdict;
      strictEqual(name.endsWith("_fail"), expected.exit === 1, "suffix and verdict agree");
      const readme = await Deno.readTextFile(join(dir, "README.md"));
      ok(readme.includes("**Attack:**") && readme.includes("**Expected verdict:**"));
      const run = await runVerify(expected.args, { cwd: dir });
      const context = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
      strictEqual(run.code, expected.exit, context);
      ok(run.stdout.startsWith(expected.summary), context);
      const lines = run.stderr.trim().split("\n");
      strictEqual(lines.length, 1, `exactly one JSON line on stderr\n${context}`);
      const report = JSON.parse(lines[0]);
      strictEqual(report.ok, expected.exit === 0);
      strictEqual(report.kind, expected.args[0]);
      const kinds = [...new Set((report.errors as { kind: string }[]).map((e) => e.kind))].sort();
      deepStrictEqual(kinds, expected.kinds, context);
      for (const m of expected.messages) ok(run.stdout.includes(m), `missing "${m}"\n${context}`);
      // One stdout line per error after the summary (and notes after them).
      const errorLines = run.stdout.trim().split("\n").slice(1).filter((l) =>
        !l.startsWith("note: ") && !l.startsWith("foreign attestation ")
      );
      strictEqual(errorLines.length, report.errors.length, context);
    });
  }
});

Deno.test("the committed conformance fixtures are what scripts/gen_conformance.ts generates", async () => {
  const fresh = conformanceFiles();
  const committed = new Map<string, Uint8Array>();
  const walk = async (dir: string, rel: string) => {
    for await (const e of Deno.readDir(dir)) {
      const r = rel === "" ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory) await walk(join(dir, e.name), r);
      else committed.set(r, await Deno.readFile(join(dir, e.name)));
    }
  };
  await walk(ROOT, "");
  const stale = [...new Set([...fresh.keys(), ...committed.keys()])].filter((p) => {
    const a = fresh.get(p);
    const b = committed.get(p);
    return a === undefined || b === undefined || a.length !== b.length ||
      a.some((x, i) => x !== b[i]);
  });
  deepStrictEqual(
    stale,
    [],
    "fixtures/conformance is stale: run deno run -P=dev scripts/gen_conformance.ts",
  );
});
