// `bernstein var` as an operator meets it: stable error codes for bad names, values that are
// not JSON, huge values and unknown names (nothing written); two processes setting one
// variable at once (both recorded, ordinals contiguous); a changed value blob or name index
// caught by `var get` / `audit verify` with the chain position; authenticated records that
// break the family's rules (ordinal gap, hash lineage, a resolution of a document never
// created) named by the fleet pillar; `--help` that explains.
import { deepStrictEqual, match, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { AuditLog, readAuditKey } from "../../src/audit/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { bern, runEnv } from "./_run_helpers.ts";
import { makeRepo } from "../_helpers/temp.ts";

Deno.test("bad input gets one line with a stable code and exit 2, and writes nothing", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    strictEqual((await bern(dir, ["var", "set", "ok", "1"])).code, 0);
    // One byte over the 1 MiB cap, and a 10 MB value: refused before anything is stored.
    await Deno.writeTextFile(join(dir, "big.json"), `"${"a".repeat(1024 * 1024 - 1)}"`);
    await Deno.writeTextFile(join(dir, "huge.json"), `"${"a".repeat(10 * 1024 * 1024)}"`);
    await Deno.writeTextFile(join(dir, "bad.json"), "{nope");
    const cases: [string[], string][] = [
      [["var", "set", "Bad", "1"], "fleet.bad_name"],
      [["var", "set", "../x", "1"], "fleet.bad_name"],
      [["var", "set", "x", '{"a":'], "fleet.bad_value"],
      [["var", "set", "x", "two words"], "fleet.bad_value"],
      [["var", "set", "x", "--file", "big.json"], "fleet.value_too_large"],
      [["var", "set", "x", "--file", "huge.json"], "fleet.value_too_large"],
      [["var", "set", "x", "--file", "bad.json"], "fleet.bad_value"],
      [["var", "set", "x", "1", "--file", "bad.json"], "fleet.bad_value"],
      [["var", "set", "x"], "fleet.bad_value"],
      [["var", "get", "nope"], "fleet.unknown_name"],
      [["var", "unset", "nope"], "fleet.unknown_name"],
      [["var", "history", "nope"], "fleet.unknown_name"],
      [["var", "get", "NOPE"], "fleet.bad_name"],
    ];
    for (const [args, code] of cases) {
      const r = await bern(dir, args);
      strictEqual(r.code, 2, `${args.join(" ").slice(0, 40)}: ${r.stderr}`);
      match(r.stderr, new RegExp(`^error\\[${code.replace(".", "\\.")}\\]`), r.stderr);
      strictEqual(r.stderr.trim().split("\n").length, 1, r.stderr);
    }
    const list = JSON.parse((await bern(dir, ["var", "list", "--json"])).stdout);
    deepStrictEqual(list.variables.map((v: { name: string }) => v.name), ["ok"]);
    strictEqual((await bern(dir, ["audit", "verify"])).code, 0);
  });
});

Deno.test("two processes setting one variable at once are both recorded with contiguous ordinals", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const runs = await Promise.all(
      ["1", "2", "3", "4"].map((v) => bern(dir, ["var", "set", "n", v])),
    );
    for (const r of runs) strictEqual(r.code, 0, `${r.stdout}\n${r.stderr}`);
    const h = JSON.parse((await bern(dir, ["var", "history", "n", "--json"])).stdout);
    deepStrictEqual(h.writes.map((w: { ordinal: number }) => w.ordinal), [0, 1, 2, 3]);
    for (let i = 1; i < 4; i++) {
      strictEqual(h.writes[i].old_value_hash, h.writes[i - 1].new_value_hash);
    }
    strictEqual((await bern(dir, ["audit", "verify"])).code, 0);
  });
});

Deno.test("a changed value blob or name index is caught, naming the chain position", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const set = JSON.parse((await bern(dir, ["var", "set", "t", "5", "--json"])).stdout);
    const hex = set.new_value_hash.slice(7);
    const blob = join(dir, ".sdd/fleet/variables/blobs", hex.slice(0, 2), hex);
    await Deno.chmod(blob, 0o644);
    await Deno.writeTextFile(blob, "6");
    const get = await bern(dir, ["var", "get", "t"]);
    strictEqual(get.code, 1);
    match(get.stderr, /^error\[fleet\.blob_tampered\]/);
    const verify = await bern(dir, ["audit", "verify"]);
    strictEqual(verify.code, 1);
    match(
      verify.stderr,
      new RegExp(`error\\[fleet\\.blob_tampered\\]: ${set.where}: variable 't' write 0`),
    );
    await Deno.writeTextFile(blob, "5");
    strictEqual((await bern(dir, ["audit", "verify"])).code, 0);
    await Deno.writeTextFile(
      join(dir, ".sdd/fleet/variables/index.json"),
      '{"variables":{"t":{}}}',
    );
    const json = JSON.parse((await bern(dir, ["audit", "verify", "--json"])).stdout);
    strictEqual(json.ok, false);
    deepStrictEqual(json.fleet.violations.map((v: { code: string }) => v.code), [
      "fleet.index_tampered",
    ]);
    // The chain is authoritative: the answer is right, with a warning.
    const warned = await bern(dir, ["var", "get", "t"]);
    strictEqual(warned.stdout, "5\n");
    match(warned.stderr, /warning\[fleet\.index_tampered\]/);
    // The next write rewrites the index from the chain.
    strictEqual((await bern(dir, ["var", "set", "t", "7"])).code, 0);
    strictEqual((await bern(dir, ["audit", "verify"])).code, 0);
  });
});

Deno.test("var --help explains the commands and reads need the audit key (exit 3, never created)", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const help = await bern(dir, ["var", "--help"]);
    strictEqual(help.code, 0);
    for (const verb of ["set", "get", "list", "history", "unset", "pins"]) {
      match(help.stdout, new RegExp(verb));
    }
    match((await bern(dir, ["var", "set", "--help"])).stdout, /fleet\.var_set/);
    const noKey = await bern(dir, ["var", "list"], {
      BERNSTEIN_AUDIT_KEY_PATH: join(dir, "..", "missing.key"),
    });
    strictEqual(noKey.code, 3, noKey.stderr);
  });
});

Deno.test("audit verify's fleet pillar names each semantic violation of authenticated records by its chain position", async () => {
  await withTempDir(async (dir) => {
    await makeRepo(dir);
    const w0 = JSON.parse((await bern(dir, ["var", "set", "t", "5", "--json"])).stdout);
    strictEqual((await bern(dir, ["audit", "verify"])).code, 0);
    // Records whose HMACs verify (written with the install's key, as a buggy or rogue writer
    // holding it would) but that break the family's rules.
    const key = await readAuditKey(runEnv(dir).BERNSTEIN_AUDIT_KEY_PATH);
    const log = new AuditLog(join(dir, ".sdd/audit"), key);
    const H = (c: string) => `sha256:${c.repeat(64)}`;
    await log.append({
      actor: "rogue",
      event_type: "fleet.var_set",
      resource_type: "fleet_variable",
      resource_id: "t",
      // Ordinal 2 after 0 (a gap) and an old hash that is not write 0's new hash.
      details: { name: "t", old_value_hash: H("a"), new_value_hash: H("b"), chain_position: 2 },
    });
    await log.append({
      actor: "rogue",
      event_type: "fleet.conn_resolve",
      resource_type: "fleet_connection",
      resource_id: "ghost",
      details: { name: "ghost", document_hash: H("c"), version: 1, task_id: "t1" },
    });
    await log.close();
    const verify = await bern(dir, ["audit", "verify", "--json"]);
    strictEqual(verify.code, 1, verify.stdout + verify.stderr);
    const report = JSON.parse(verify.stdout);
    strictEqual(report.ok, false);
    const codes = report.fleet.violations.map((v: { code: string }) => v.code).sort();
    // The forged write also names a value no blob holds, and the index disagrees with it.
    deepStrictEqual(codes, [
      "fleet.blob_missing",
      "fleet.conn_unknown_document",
      "fleet.hash_lineage",
      "fleet.index_tampered",
      "fleet.ordinal_gap",
    ]);
    // Each names a chain position after the honest write's.
    for (const v of report.fleet.violations as { code: string; where: string }[]) {
      if (v.code === "fleet.index_tampered") continue; // names the index file
      match(v.where, /^\d{4}-\d{2}-\d{2}\.jsonl:\d+$/);
      ok(v.where !== w0.where, JSON.stringify(v));
    }
    const text = await bern(dir, ["audit", "verify"]);
    match(text.stderr, /error\[fleet\.ordinal_gap\]: \S+\.jsonl:\d+/);
  });
});
