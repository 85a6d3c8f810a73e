// `bernstein conn` end to end: a document holds a secret reference only, signed by the install
// identity; create/show/list/rotate/audit/check; a literal secret is refused; a planted secret
// that resolves never appears in any file bernstein wrote or any output; a document copied
// from another install (same content, that install's signature) refuses to resolve and the
// refusal is on the chain; the fleet pillar checks connection references.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { makeRepo, withTempDir } from "../_helpers/temp.ts";
import { bern } from "./_run_helpers.ts";

const SECRET = "planted-SECRET-7f3a9c1e";

async function json(dir: string, args: string[], env: Record<string, string> = {}) {
  const r = await bern(dir, [...args, "--json"], env);
  strictEqual(r.code, 0, r.stdout + r.stderr);
  return JSON.parse(r.stdout);
}

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    const p = join(dir, e.name);
    if (e.isDirectory) out.push(...await filesUnder(p));
    else if (e.isFile) out.push(p);
  }
  return out;
}

Deno.test("a connection resolves its secret by reference; the secret is in no file and no output", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    strictEqual((await bern(dir, ["init"])).code, 0);
    const doctor = await bern(dir, ["doctor"]);
    match(doctor.stdout, /install identity.*fingerprint \(SHA-256\) [0-9a-f]{64}/);
    const created = await json(dir, [
      "conn",
      "create",
      "prod-github",
      "--secret",
      "env:GH_TOKEN",
      "--scope",
      "repo:read",
      "--set",
      "owner=acme",
    ]);
    deepStrictEqual(
      [created.version, created.secret_ref, created.scope, created.defaults, created.signed_here],
      [1, "env:GH_TOKEN", "repo:read", { owner: "acme" }, true],
    );
    const outputs: string[] = [];
    const unset = await bern(dir, ["conn", "check", "prod-github"]);
    strictEqual(unset.code, 1);
    match(unset.stderr, /^error\[fleet\.secret_unreadable\]: .*: GH_TOKEN is not set/);
    const checked = await bern(dir, ["conn", "check", "prod-github", "--json"], {
      GH_TOKEN: SECRET,
    });
    strictEqual(checked.code, 0, checked.stderr);
    strictEqual(JSON.parse(checked.stdout).secret_bytes, SECRET.length);
    outputs.push(checked.stdout, checked.stderr);
    // Rotation: a file reference outside the project; the next resolution uses it.
    const file = join(dir, "..", `${dir.split("/").pop()}.secret`);
    await Deno.writeTextFile(file, `${SECRET}-v2\n`);
    const rotated = await json(dir, ["conn", "rotate", "prod-github", "--secret", `file:${file}`]);
    strictEqual(rotated.version, 2);
    const again = await json(dir, ["conn", "check", "prod-github"]);
    deepStrictEqual([again.version, again.secret_bytes], [2, SECRET.length + 3]);
    const audit = await json(dir, ["conn", "audit", "prod-github"]);
    deepStrictEqual(audit.versions.map((v: { version: number }) => v.version), [1, 2]);
    deepStrictEqual(audit.resolutions.map((r: { version: number }) => r.version), [1, 2]);
    strictEqual(audit.refusals.length, 1);
    const list = await json(dir, ["conn", "list"]);
    deepStrictEqual(list.connections.map((c: { name: string }) => c.name), ["prod-github"]);
    for (
      const args of [["conn", "show", "prod-github"], ["conn", "audit", "prod-github"], [
        "audit",
        "show",
      ]]
    ) {
      const r = await bern(dir, args);
      outputs.push(r.stdout, r.stderr);
    }
    const verify = await bern(dir, ["audit", "verify"]);
    strictEqual(verify.code, 0, verify.stderr);
    outputs.push(verify.stdout, verify.stderr);
    for (const text of outputs) ok(!text.includes(SECRET), text);
    // No file bernstein wrote holds the secret (chain, documents, keys, everything under .sdd).
    for (const path of await filesUnder(join(dir, ".sdd"))) {
      ok(!(await Deno.readTextFile(path).catch(() => "")).includes(SECRET), path);
    }
    // The chain holds no reference either: only an install-keyed digest of it.
    const chain = (await bern(dir, ["audit", "show", "--json"])).stdout;
    ok(!chain.includes("GH_TOKEN"), "reference name on the chain");
  });
});

Deno.test("a document copied from another install refuses to resolve, and the refusal is audited", async () => {
  await withTempDir(async (a) => {
    await withTempDir(async (b) => {
      await makeRepo(a);
      await makeRepo(b);
      const args = [
        "conn",
        "create",
        "shared",
        "--secret",
        "env:BERNSTEIN_TEST_TOKEN",
        "--scope",
        "read",
      ];
      strictEqual((await bern(a, args)).code, 0);
      strictEqual((await bern(b, args)).code, 0);
      // The same content hashes the same on both installs; each install signed its own copy.
      const docA = join(a, ".sdd/fleet/connections/shared/1.json");
      const docB = join(b, ".sdd/fleet/connections/shared/1.json");
      strictEqual(
        JSON.parse(await Deno.readTextFile(docA)).document.scope,
        JSON.parse(await Deno.readTextFile(docB)).document.scope,
      );
      strictEqual(
        (await bern(b, ["conn", "check", "shared"], { BERNSTEIN_TEST_TOKEN: SECRET })).code,
        0,
      );
      await Deno.copyFile(docA, docB);
      const show = await json(b, ["conn", "show", "shared"]);
      strictEqual(show.signed_here, false);
      const refused = await bern(b, ["conn", "check", "shared"], { BERNSTEIN_TEST_TOKEN: SECRET });
      strictEqual(refused.code, 1);
      match(
        refused.stderr,
        /^error\[fleet\.document_foreign\]: .*does not verify against this install's identity/,
      );
      const audit = await json(b, ["conn", "audit", "shared"]);
      strictEqual(audit.refusals.length, 1);
      match(audit.refusals[0].reason, /copied from another install never resolves/);
      strictEqual((await bern(b, ["audit", "verify"])).code, 0);
    });
  });
});

Deno.test("conn bad input: a literal secret, a bad name, an unknown connection, a duplicate", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    strictEqual(
      (await bern(dir, ["conn", "create", "a", "--secret", "env:A", "--scope", "x"])).code,
      0,
    );
    const cases: [string[], string][] = [
      [[
        "conn",
        "create",
        "b",
        "--secret",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "--scope",
        "x",
      ], "fleet.bad_secret_ref"],
      [
        ["conn", "create", "b", "--secret", "file:relative/path", "--scope", "x"],
        "fleet.bad_secret_ref",
      ],
      [
        ["conn", "create", "b", "--secret", `file:${dir}/token.txt`, "--scope", "x"],
        "fleet.bad_secret_ref",
      ],
      [["conn", "create", "b", "--secret", "env:A", "--scope", ""], "fleet.bad_setting"],
      [
        ["conn", "create", "b", "--secret", "env:A", "--scope", "x", "--set", "noequals"],
        "fleet.bad_setting",
      ],
      [["conn", "create", "B", "--secret", "env:A", "--scope", "x"], "fleet.bad_name"],
      [["conn", "create", "a", "--secret", "env:A", "--scope", "x"], "fleet.exists"],
      [["conn", "show", "nope"], "fleet.unknown_name"],
      [["conn", "rotate", "nope", "--secret", "env:A"], "fleet.unknown_name"],
    ];
    for (const [args, code] of cases) {
      const r = await bern(dir, args);
      strictEqual(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
      match(r.stderr, new RegExp(`^error\\[${code.replace(".", "\\.")}\\]`), r.stderr);
      ok(!r.stderr.includes("ghp_16C7e42F"), "the literal is not echoed");
    }
    deepStrictEqual(
      (await json(dir, ["conn", "list"])).connections.map((c: { name: string }) => c.name),
      ["a"],
    );
  });
});
