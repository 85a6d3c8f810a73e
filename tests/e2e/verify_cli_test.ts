// `bernstein-verify` as an auditor runs it: the real verify.ts under exactly the read-only
// `verify` permission set (any env, write, net or run access would fail these runs). The
// output contract: a summary and one line per error on stdout, exactly one JSON object on
// stderr, exit 0 only when every check passed.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { encodePrivateKeyPem } from "../../src/crypto/mod.ts";
import { type CliRun, runVerify } from "../_helpers/cli.ts";
import { writeValidTree } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

function verdict(run: CliRun): { ok: boolean; kind: string; errors: { kind: string }[] } {
  const lines = run.stderr.trim().split("\n");
  strictEqual(lines.length, 1, `exactly one JSON object on stderr, got:\n${run.stderr}`);
  const report = JSON.parse(lines[0]);
  deepStrictEqual(Object.keys(report).sort(), ["errors", "kind", "ok", "stats"]);
  return report;
}

Deno.test("--version and --help answer without a verdict", async () => {
  const v = await runVerify(["--version"]);
  strictEqual(v.code, 0);
  ok(/^bernstein-verify \d+\.\d+\.\d+\n$/.test(v.stdout), v.stdout);
  strictEqual(v.stderr, "");
  const h = await runVerify(["--help"]);
  strictEqual(h.code, 0);
  ok(h.stdout.includes("bernstein-verify pack <pack.zip>"));
  const sub = await runVerify(["chain", "--help"]);
  strictEqual(sub.code, 0);
  const none = await runVerify([]);
  strictEqual(none.code, 1, "no command is not a pass");
});

Deno.test("usage errors fail with a suggestion and one JSON object", async () => {
  const cases: [string[], string][] = [
    [["pakc", "x.zip"], `unknown command "pakc" (did you mean 'pack'?)`],
    [["pack", "x.zip", "--operator-fingerprnt", "ab"], "did you mean --operator-fingerprint?"],
    [["pack"], "pack: expected <pack.zip>, got 0 argument(s)"],
    [["pack", "x.zip", "--operator-fingerprint", "xyz"], "is not 64 hex characters"],
    [
      ["pack", "x.zip", "--operator-key", "k.pem", "--operator-fingerprint", "ab".repeat(32)],
      "not both",
    ],
    [["chain", "src/a.ts"], "chain: --lineage-dir DIR is required"],
    [["forks", "src/a.ts", "--lineage-dir"], "--lineage-dir needs a value"],
  ];
  for (const [args, text] of cases) {
    const run = await runVerify(args);
    strictEqual(run.code, 1, args.join(" "));
    ok(run.stdout.startsWith("FAIL usage: "), run.stdout);
    ok(run.stdout.includes(text), `${args.join(" ")}: ${run.stdout}`);
    const report = verdict(run);
    strictEqual(report.kind, "usage");
    strictEqual(report.ok, false);
  }
});

Deno.test("a private key given as --operator-key is refused: the auditor needs the public one", async () => {
  await withTempDir(async (dir) => {
    const key = join(dir, "operator.key");
    await Deno.writeTextFile(key, encodePrivateKeyPem(new Uint8Array(32).fill(1)));
    const run = await runVerify(["pack", "x.zip", "--operator-key", key]);
    strictEqual(run.code, 1);
    ok(run.stdout.includes("is a private key; pass the operator's public key"), run.stdout);
  });
});

Deno.test("a pack that cannot be read fails as unreadable, never as a crash", async () => {
  await withTempDir(async (dir) => {
    const missing = await runVerify(["pack", join(dir, "nope.zip")]);
    strictEqual(missing.code, 1);
    ok(missing.stdout.startsWith("FAIL pack: "));
    ok(missing.stdout.includes("no such file"));
    deepStrictEqual(verdict(missing).errors.map((e) => e.kind), ["unreadable archive"]);
    const folder = await runVerify(["pack", dir]);
    strictEqual(folder.code, 1);
    ok(folder.stdout.includes("not a regular file"), folder.stdout);
    await Deno.writeTextFile(join(dir, "text.zip"), "hello");
    const text = await runVerify(["pack", join(dir, "text.zip")]);
    strictEqual(text.code, 1);
    deepStrictEqual(verdict(text).errors.map((e) => e.kind), ["unreadable archive"]);
  });
});

Deno.test("chain and forks verify one artefact of a lineage folder", async () => {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    const lineage = join(dir, ".sdd", "lineage");
    const chain = await runVerify(["chain", "src/a.ts", "--lineage-dir", lineage]);
    strictEqual(chain.code, 0, chain.stdout);
    strictEqual(chain.stdout.split("\n")[0], "PASS chain src/a.ts: 3 entries, 2 agents");
    strictEqual(verdict(chain).kind, "chain");
    const forks = await runVerify(["forks", "src/a.ts", "--lineage-dir", lineage]);
    strictEqual(forks.code, 0, forks.stdout);
    ok(forks.stdout.startsWith("PASS forks src/a.ts: no unresolved fork (3 entries, 1 open tip)"));
    const unknown = await runVerify(["chain", "src/zzz.ts", "--lineage-dir", lineage]);
    strictEqual(unknown.code, 1);
    ok(unknown.stdout.includes('no entries: no lineage entry for "src/zzz.ts"'), unknown.stdout);
    const noCards = await runVerify([
      "chain",
      "src/a.ts",
      "--lineage-dir",
      lineage,
      "--cards",
      join(dir, "empty"),
    ]);
    strictEqual(noCards.code, 1);
    ok(noCards.stdout.includes("kid binding cannot be established"), noCards.stdout);
    const nowhere = await runVerify(["chain", "src/a.ts", "--lineage-dir", join(dir, "nope")]);
    strictEqual(nowhere.code, 1);
    ok(nowhere.stdout.includes("unreadable log: no such file"), nowhere.stdout);
    await Deno.writeTextFile(join(dir, "plain"), "");
    for (const cmd of ["chain", "forks"]) {
      const notDir = await runVerify([cmd, "src/a.ts", "--lineage-dir", join(dir, "plain")]);
      strictEqual(notDir.code, 1, notDir.stdout);
      ok(notDir.stdout.startsWith(`FAIL ${cmd} src/a.ts: 1 error\n`), notDir.stdout);
      ok(notDir.stdout.includes("unreadable log"), notDir.stdout);
      strictEqual(verdict(notDir).kind, cmd);
    }
  });
});

Deno.test("chain reports an edited line of its artefact and ignores other artefacts' problems", async () => {
  await withTempDir(async (dir) => {
    await writeValidTree(dir);
    const lineage = join(dir, ".sdd", "lineage");
    const log = join(lineage, "log.jsonl");
    const lines = (await Deno.readTextFile(log)).split("\n");
    // Line 4 is src/b.ts: rewrite its span id (the line stays canonical; the signature breaks).
    lines[3] = lines[3].replace('"span_id":"span-b1"', '"span_id":"span-XX"');
    await Deno.writeTextFile(log, lines.join("\n"));
    const b = await runVerify(["chain", "src/b.ts", "--lineage-dir", lineage]);
    strictEqual(b.code, 1, b.stdout);
    ok(b.stdout.includes("log.jsonl:4: invalid signature"), b.stdout);
    const a = await runVerify(["chain", "src/a.ts", "--lineage-dir", lineage]);
    strictEqual(a.code, 0, a.stdout);
  });
});

Deno.test("a 700-entry pack passes under the read-only grant with the gate's worker thread", async () => {
  // Long enough that the worker starts (it inherits the read-only grant); a forged signature
  // deep in the log is still caught.
  const { sampleLog, samplePackContent } = await import("../../scripts/sample_pack.ts");
  const { renderPackMembers, sealPack, zipMembers } = await import("../../src/compliance/mod.ts");
  const { operatorFingerprint } = await import("../../src/pack_format/mod.ts");
  const long = sampleLog({ seed: 9, entries: 700, artefacts: 20 });
  const content = samplePackContent(long);
  const rendered = renderPackMembers(content);
  const fingerprint = operatorFingerprint(long.operator.publicKey);
  await withTempDir(async (dir) => {
    const honest = join(dir, "honest.zip");
    await Deno.writeFile(
      honest,
      zipMembers(sealPack(rendered.members, rendered.manifestBase, long.operator).members),
    );
    const pass = await runVerify(["pack", honest, "--operator-fingerprint", fingerprint]);
    strictEqual(pass.code, 0, pass.stdout + pass.stderr);
    ok(pass.stdout.startsWith(`PASS pack: ${content.entries.length} entries`), pass.stdout);
    const members = new Map(rendered.members);
    const target = content.entries[640].hash.slice(7);
    const donor = content.entries[639].hash.slice(7);
    members.set(`signatures/${target}.jws`, members.get(`signatures/${donor}.jws`) as Uint8Array);
    const forged = join(dir, "forged.zip");
    await Deno.writeFile(
      forged,
      zipMembers(sealPack(members, rendered.manifestBase, long.operator).members),
    );
    const fail = await runVerify(["pack", forged, "--operator-fingerprint", fingerprint]);
    strictEqual(fail.code, 1);
    const report = verdict(fail);
    strictEqual(report.ok, false);
    ok(report.errors.length >= 1 && fail.stdout.includes("lineage-log.jsonl:"), fail.stdout);
  });
});
