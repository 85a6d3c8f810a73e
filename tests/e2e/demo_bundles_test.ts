// The reference scenarios of examples/lineage/: each runs for real (bernstein run with the
// scripted agent, compliance packs, bernstein-verify) and must give the expected verdicts;
// the checked-in bundle must match a fresh generation in its stable parts (transcript and
// pack summary) and its packs must still verify; and every pack member or field that
// healthcare/article12-mapping.md names must exist in the pack.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  bundleDir,
  exampleOperatorFingerprint,
  generate,
  type Generated,
  mappingReferences,
  missingReferences,
  packMembers,
  packSummary,
  type Scenario,
  SCENARIOS,
  SUMMARY,
  TRANSCRIPT,
} from "../../scripts/demo_bundles/mod.ts";
import { runVerify } from "../_helpers/cli.ts";
import { withTempDir } from "../_helpers/temp.ts";

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);

/** Fails naming the first differing line (and says how to regenerate). */
function sameText(actual: string, expected: string, what: string): void {
  if (actual === expected) return;
  const a = actual.split("\n");
  const e = expected.split("\n");
  const i = a.findIndex((line, n) => line !== e[n]);
  throw new Error(
    `${what} drifted from the checked-in bundle at line ${i + 1}:\n  checked in: ${
      e[i] ?? "(end)"
    }\n  generated:  ${
      a[i] ?? "(end)"
    }\nregenerate with 'deno task docs' if the change is intended`,
  );
}

async function verifyPack(scenario: Scenario, path: string) {
  return await runVerify([
    "pack",
    path,
    "--operator-fingerprint",
    exampleOperatorFingerprint(scenario.name),
  ]);
}

/** The checked-in bundle agrees with a fresh generation and its packs still verify. */
async function checkBundle(scenario: Scenario, fresh: Generated): Promise<void> {
  const dir = bundleDir(scenario);
  sameText(
    text(fresh.bundle.get(TRANSCRIPT)),
    await Deno.readTextFile(join(dir, TRANSCRIPT)),
    `${scenario.folder}/bundle/${TRANSCRIPT}`,
  );
  sameText(
    text(fresh.bundle.get(SUMMARY)),
    await Deno.readTextFile(join(dir, SUMMARY)),
    `${scenario.folder}/bundle/${SUMMARY}`,
  );
  const summaries = JSON.parse(await Deno.readTextFile(join(dir, SUMMARY)));
  for (const name of scenario.packs) {
    // The checked-in pack is the one the summary describes (not an older run's).
    deepStrictEqual(packSummary(await Deno.readFile(join(dir, name))), summaries[name], name);
  }
}

Deno.test("fintech: the rogue write's fork fails the pack, naming the file; after lineage merge the re-pack passes", async () => {
  const scenario = SCENARIOS.fintech;
  await withTempDir(async (tmp) => {
    const fresh = await generate(scenario, join(tmp, "fintech"));
    for (const dir of [fresh.dir, bundleDir(scenario)]) {
      const forked = await verifyPack(scenario, join(dir, "pack-with-fork.zip"));
      strictEqual(forked.code, 1, forked.stdout);
      ok(forked.stdout.startsWith("FAIL pack: 1 error"), forked.stdout);
      ok(/^src\/payments\/ledger\.ts: unresolved fork: /m.test(forked.stdout), forked.stdout);
      strictEqual(JSON.parse(forked.stderr).errors[0].kind, "unresolved fork");
      const merged = await verifyPack(scenario, join(dir, "pack.zip"));
      strictEqual(merged.code, 0, merged.stdout + merged.stderr);
      ok(merged.stdout.startsWith("PASS pack: 10 entries, 7 agents"), merged.stdout);
    }
    // The merged pack holds the steward's merge of the rogue's and run 2's versions.
    const entries = (packSummary(fresh.bundle.get("pack.zip") as Uint8Array) as {
      entries: string[];
    }).entries;
    ok(
      entries.some((e) =>
        /^src\/payments\/ledger\.ts .* \(merge of .*\) by bernstein-steward$/.test(e)
      ),
      entries.join("\n"),
    );
    ok(entries.some((e) => e.endsWith("by rogue-hotfix-bot")), entries.join("\n"));
    await checkBundle(scenario, fresh);
  });
});

Deno.test("healthcare: the pack passes, the review's receipt resolves, the checkpoint covers the log, the mapping names only what the pack holds", async () => {
  const scenario = SCENARIOS.healthcare;
  await withTempDir(async (tmp) => {
    const fresh = await generate(scenario, join(tmp, "healthcare"));
    for (const dir of [fresh.dir, bundleDir(scenario)]) {
      const r = await verifyPack(scenario, join(dir, "pack.zip"));
      strictEqual(r.code, 0, r.stdout + r.stderr);
      ok(r.stdout.startsWith("PASS pack: 5 entries, 5 agents"), r.stdout);
    }
    const transcript = text(fresh.bundle.get(TRANSCRIPT));
    ok(transcript.includes("PASS: the receipt resolves on an intact chain"), transcript);
    ok(/log matches 1 checkpoint\(s\), latest covers 5 lines/.test(transcript), transcript);
    const mapping = await Deno.readTextFile(
      new URL("../../examples/lineage/healthcare/article12-mapping.md", import.meta.url),
    );
    const pack = packMembers(fresh.bundle.get("pack.zip") as Uint8Array);
    deepStrictEqual(missingReferences(mapping, pack), []);
    await checkBundle(scenario, fresh);
  });
});

Deno.test("eu-manufacturer: the period's pack passes, and again from the restored cold-storage archive alone", async () => {
  const scenario = SCENARIOS["eu-mfg"];
  await withTempDir(async (tmp) => {
    const fresh = await generate(scenario, join(tmp, "eu-mfg"));
    const restored = join(fresh.dir, "restored-2036", "archive");
    const names = [...Deno.readDirSync(restored)].map((e) => e.name).sort();
    deepStrictEqual(names, [
      "ARCHIVE.json",
      "SHA256SUMS",
      "bernstein-verify.js",
      "operator.pub",
      "pack.zip",
    ]);
    // The archived verifier imports nothing but node: built-ins (it runs with an empty cache).
    const js = await Deno.readTextFile(join(restored, "bernstein-verify.js"));
    const imports = [...js.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    ok(imports.length > 0 && imports.every((s) => s.startsWith("node:")), imports.join(", "));
    const archived = await verifyPack(scenario, join(restored, "pack.zip"));
    strictEqual(archived.code, 0, archived.stdout + archived.stderr);
    const transcript = text(fresh.bundle.get(TRANSCRIPT));
    ok(
      /bernstein-verify\.js pack pack\.zip .*\nPASS pack: 3 entries, 3 agents\n\(exit 0\)/.test(
        transcript,
      ),
      transcript,
    );
    const checkedIn = await verifyPack(scenario, join(bundleDir(scenario), "pack.zip"));
    strictEqual(checkedIn.code, 0, checkedIn.stdout + checkedIn.stderr);
    await checkBundle(scenario, fresh);
  });
});

Deno.test("article12-mapping.md: every reference it makes exists in the checked-in pack; a wrong one is caught", async () => {
  const mapping = await Deno.readTextFile(
    new URL("../../examples/lineage/healthcare/article12-mapping.md", import.meta.url),
  );
  const pack = packMembers(
    await Deno.readFile(join(bundleDir(SCENARIOS.healthcare), "pack.zip")),
  );
  const refs = mappingReferences(mapping);
  // Every paragraph of Article 12 and every Annex IV point has a row.
  const paragraphs = ["12(1)", "12(2)", "12(2)(a)", "12(2)(b)", "12(2)(c)", "12(3)(a)", "12(3)(b)"];
  for (const p of [...paragraphs, "12(3)(c)", "12(3)(d)", "19(1)", "26(6)", "18(1)"]) {
    ok(mapping.includes(`| ${p} `), `no row for Article ${p}`);
  }
  for (let point = 1; point <= 9; point++) {
    ok(mapping.includes(`| Annex IV(${point})`), `no row for Annex IV point ${point}`);
  }
  ok(refs.length >= 10, `only ${refs.length} references`);
  deepStrictEqual(missingReferences(mapping, pack), []);
  // The checker is not vacuous: a member, a field and an artefact the pack lacks are named.
  const wrong = "`pack:pack-manifest.json:/article12/12(4)` `pack:annex-iv.pdf` " +
    "`pack:lineage-log.jsonl?artefact_path=docs/missing.md` `pack:article12-evidence.csv#model`";
  deepStrictEqual(missingReferences(wrong, pack), [
    "pack-manifest.json:/article12/12(4)",
    "annex-iv.pdf",
    "lineage-log.jsonl?artefact_path=docs/missing.md",
    "article12-evidence.csv#model",
  ]);
});
