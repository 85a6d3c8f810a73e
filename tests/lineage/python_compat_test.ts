// Cross-implementation: a tree written by an independent Python reading of FORMATS.md §4 (with
// the `cryptography` package, as the Python Bernstein project uses) passes our gate, and a tree
// our store writes verifies in Python, byte rule for byte rule.
import { deepStrictEqual, equal, ok, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { gateDir, TEST_OPERATOR_KEY, testStore, writeValidTree } from "../_helpers/lineage_tree.ts";
import { withTempDir } from "../_helpers/temp.ts";

const SCRIPT = fromFileUrl(new URL("./_py/lineage_compat.py", import.meta.url));
const SECRET = new TextDecoder().decode(TEST_OPERATOR_KEY);

async function python(
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command("python3", { args, stdout: "piped", stderr: "piped" })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

async function hasCryptography(): Promise<boolean> {
  try {
    return (await python("-c", "import cryptography")).code === 0;
  } catch {
    return false;
  }
}

const available = await hasCryptography();

Deno.test({
  name: "a tree written by the Python reading of FORMATS §4 passes our gate",
  ignore: !available,
  async fn() {
    await withTempDir(async (dir) => {
      const w = await python(SCRIPT, "write", dir, SECRET);
      strictEqual(w.code, 0, w.stderr);
      const result = await gateDir(dir);
      deepStrictEqual(result.issues, []);
      strictEqual(result.entries, 5);
      // And Python agrees with itself, so the check below is not vacuous.
      deepStrictEqual(JSON.parse((await python(SCRIPT, "verify", dir, SECRET)).stdout).ok, true);
    });
  },
});

Deno.test({
  name: "a tree written by our store verifies in Python; a tampered one does not",
  ignore: !available,
  async fn() {
    await withTempDir(async (dir) => {
      await writeValidTree(dir);
      const v = await python(SCRIPT, "verify", dir, SECRET);
      strictEqual(v.code, 0, v.stderr);
      deepStrictEqual(JSON.parse(v.stdout), { ok: true, entries: 5, failures: [] });
      const wrong = JSON.parse((await python(SCRIPT, "verify", dir, "other")).stdout);
      equal(wrong.ok, false);
      const log = join(dir, ".sdd/lineage/log.jsonl");
      const text = await Deno.readTextFile(log);
      await Deno.writeTextFile(log, text.replace('"span_id":"span-a2"', '"span_id":"span-a9"'));
      const tampered = JSON.parse((await python(SCRIPT, "verify", dir, SECRET)).stdout);
      equal(tampered.ok, false);
    });
  },
});

Deno.test({
  name:
    "a tree laid out as the Python implementation writes it (raw agent-id card folders, activity_source, model_ref) passes the gate and packs",
  ignore: !available,
  async fn() {
    await withTempDir(async (dir) => {
      const w = await python(SCRIPT, "write-python-layout", dir, SECRET);
      strictEqual(w.code, 0, w.stderr);
      ok(
        (await Deno.stat(join(dir, ".sdd/agents/agent:claude-worker-3/card.json"))).isFile,
        "the card folder is the raw agent id",
      );
      const result = await gateDir(dir);
      deepStrictEqual(result.issues, []);
      strictEqual(result.entries, 3);
      deepStrictEqual(JSON.parse((await python(SCRIPT, "verify", dir, SECRET)).stdout).ok, true);
      // Our readers keep the Python fields exactly (the entry hash is over its bytes).
      const { store } = testStore(dir);
      const entries = [];
      for await (const e of store.entries()) entries.push(e);
      strictEqual(entries.length, 3);
      strictEqual(entries[0].entry.activity_source, "adapter");
      strictEqual(entries[1].entry.model_ref?.model_reported, null);
      strictEqual(entries[2].entry.model_ref?.version, "7");
      // A pack of it verifies; its card members carry the escaped names.
      const { buildProjectPack, ensureOperatorSigningKey } = await import(
        "../../src/compliance/project/mod.ts"
      );
      const { MemorySink } = await import("../../src/compliance/mod.ts");
      const sink = new MemorySink();
      const { mapEnv, SeededRandom } = await import("../../src/io/mod.ts");
      const { memoryBytes, verifyPack } = await import("../../src/verify/mod.ts");
      const sdd = join(dir, ".sdd");
      const key = await ensureOperatorSigningKey(sdd, new SeededRandom(3));
      const pack = await buildProjectPack({
        sdd,
        org: "Py",
        since: "2026-01-01",
        until: "2026-01-01",
        builtAt: "2026-01-02T00:00:00Z",
        builder: "bernstein test",
        compliance: { risk_paths: [], remote_biometric_identification: false, retention_days: 365 },
        signer: key.signer,
        env: mapEnv({}),
        sink,
      });
      strictEqual(pack.bytes, sink.bytes().length);
      const verdict = await verifyPack(memoryBytes(sink.bytes()), {
        operatorPublicKey: key.signer.publicKey,
      });
      deepStrictEqual(verdict.errors, []);
      strictEqual(verdict.stats.entries, 3);
      // A wrong value is still refused, naming the field.
      const log = join(dir, ".sdd/lineage/log.jsonl");
      const text = await Deno.readTextFile(log);
      await Deno.writeTextFile(
        log,
        text.replace('"activity_source":"adapter"', '"activity_source":"robot"'),
      );
      const bad = await gateDir(dir);
      ok(
        bad.issues.some((i) => i.kind === "invalid entry" && i.message.includes("activity_source")),
      );
    });
  },
});
