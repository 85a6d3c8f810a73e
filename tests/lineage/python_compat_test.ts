// Cross-implementation: a tree written by an independent Python reading of FORMATS.md §4 (with
// the `cryptography` package, as the Python Bernstein project uses) passes our gate, and a tree
// our store writes verifies in Python, byte rule for byte rule.
import { deepStrictEqual, equal, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { gateDir, TEST_OPERATOR_KEY, writeValidTree } from "../_helpers/lineage_tree.ts";
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
