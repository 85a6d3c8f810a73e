// Foreign attestations end to end: imported beside the record they name (never in the log),
// shown by chain and the gate, carried by packs, and reported by bernstein-verify as
// verified_foreign only for a jws-detached envelope signed by a key pinned with
// --trust-issuer; none of it changes any verdict on bernstein's own chain.
import { deepStrictEqual, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { ed25519KeyPairFromSeed, encodePublicKeyPem } from "../../src/crypto/mod.ts";
import { signForeignAttestation } from "../../src/lineage/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { runBernstein, runVerify } from "../_helpers/cli.ts";
import { testStore, writeValidTree } from "../_helpers/lineage_tree.ts";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";

const SECRET = { BERNSTEIN_OPERATOR_SECRET: "test-operator-secret" };
const issuer = ed25519KeyPairFromSeed(new SeededRandom(31).bytes(32));

Deno.test("attest import, chain, gate, pack and bernstein-verify with --trust-issuer", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    await writeValidTree(dir);
    const { store } = testStore(dir);
    const [first] = await store.chain("src/a.ts");
    const statement = {
      issuer: "ci.example",
      issuer_key_id: "ci-1",
      content_hash: first.entry.content_hash,
      claimed_subject: "src/a.ts",
      trust_class: "third_party" as const,
    };
    const signed = signForeignAttestation(statement, "sha256:" + "c".repeat(64), issuer.seed);
    const unknown = {
      ...statement,
      envelope: { format: "in-toto", payload_hash: "sha256:" + "d".repeat(64) },
    };
    await Deno.writeTextFile(join(dir, "signed.json"), JSON.stringify(signed));
    await Deno.writeTextFile(join(dir, "unknown.json"), JSON.stringify(unknown));
    await Deno.writeTextFile(join(dir, "issuer.pub"), encodePublicKeyPem(issuer.publicKey));
    const before = await Deno.readFile(join(dir, ".sdd/lineage/log.jsonl"));
    const imp = await runBernstein(["lineage", "attest", "import", "signed.json", "--json"], {
      cwd: dir,
    });
    strictEqual(imp.code, 0, imp.stderr);
    const stored = JSON.parse(imp.stdout);
    strictEqual(stored.entry_hash, first.hash);
    strictEqual(stored.created, true);
    const again = await runBernstein(["lineage", "attest", "import", "signed.json", "--json"], {
      cwd: dir,
    });
    strictEqual(JSON.parse(again.stdout).created, false, "content-addressed: stored once");
    strictEqual(
      (await runBernstein(["lineage", "attest", "import", "unknown.json"], { cwd: dir })).code,
      0,
    );
    deepStrictEqual(
      await Deno.readFile(join(dir, ".sdd/lineage/log.jsonl")),
      before,
      "log untouched",
    );
    // An attestation about content no entry has is refused, with the reason.
    await Deno.writeTextFile(
      join(dir, "stray.json"),
      JSON.stringify({ ...unknown, content_hash: "sha256:" + "f".repeat(64) }),
    );
    const stray = await runBernstein(["lineage", "attest", "import", "stray.json"], { cwd: dir });
    strictEqual(stray.code, 1);
    ok(stray.stderr.includes("has content sha256:ffff"), stray.stderr);
    // chain shows them; the pinned key turns the signed one verified_foreign.
    const chain = await runBernstein(
      ["lineage", "chain", "src/a.ts", "--json", "--trust-issuer", "ci-1=issuer.pub"],
      { cwd: dir },
    );
    const verdicts = JSON.parse(chain.stdout).entries[0].attestations.map((
      a: { verdict: string },
    ) => a.verdict).sort();
    deepStrictEqual(verdicts, ["unverifiable", "verified_foreign"]);
    const gate = await runBernstein(["lineage", "gate", "--json"], { cwd: dir, env: SECRET });
    strictEqual(gate.code, 0, gate.stdout);
    const g = JSON.parse(gate.stdout);
    strictEqual(g.ok, true);
    deepStrictEqual(g.foreign.map((f: { verdict: string }) => f.verdict).sort(), [
      "unverifiable",
      "unverifiable",
    ]);
    // The pack carries them; the verifier reports them and its verdict does not move.
    const pack = await runBernstein([
      "compliance",
      "pack",
      "--since",
      "2026-01-01",
      "--until",
      "2026-01-01",
      "--org",
      "A",
      "--output",
      "p.zip",
      "--json",
    ], { cwd: dir, env: SECRET });
    strictEqual(pack.code, 0, pack.stderr);
    const fp = JSON.parse(pack.stdout).operator.fingerprint;
    const plain = await runVerify(["pack", "p.zip", "--operator-fingerprint", fp], { cwd: dir });
    strictEqual(plain.code, 0, plain.stdout);
    const trusted = await runVerify(
      ["pack", "p.zip", "--operator-fingerprint", fp, "--trust-issuer", "ci-1=issuer.pub"],
      { cwd: dir },
    );
    strictEqual(trusted.code, 0, trusted.stdout);
    ok(
      /foreign attestation attestations\/[0-9a-f]{64}\/[0-9a-f]{64}\.json: verified_foreign/.test(
        trusted.stdout,
      ),
      trusted.stdout,
    );
    const report = JSON.parse(trusted.stderr.trim());
    deepStrictEqual(report.stats.foreign.map((f: { verdict: string }) => f.verdict).sort(), [
      "unverifiable",
      "verified_foreign",
    ]);
    // The directory verifier too; a wrong key makes it rejected, never a failure.
    await Deno.writeTextFile(
      join(dir, "other.pub"),
      encodePublicKeyPem(ed25519KeyPairFromSeed(new SeededRandom(32).bytes(32)).publicKey),
    );
    const wrong = await runVerify([
      "chain",
      "src/a.ts",
      "--lineage-dir",
      ".sdd/lineage",
      "--trust-issuer",
      "ci-1=other.pub",
    ], { cwd: dir });
    strictEqual(wrong.code, 0, wrong.stdout);
    ok(wrong.stdout.includes(": rejected (trust public)"), wrong.stdout);
    const badFlag = await runVerify(
      ["pack", "p.zip", "--trust-issuer", "ci-1"],
      { cwd: dir },
    );
    strictEqual(badFlag.code, 1);
    ok(badFlag.stdout.includes("expected KID=PEMFILE"), badFlag.stdout);
  });
});
