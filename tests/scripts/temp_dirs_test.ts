// The tests' temp dirs leave nothing behind: withTempDir removes the dir and what a test kept
// beside it on purpose (keys and tokens outside the project), and nothing of another dir; a test
// server that fails to start removes its folders.
import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { withTempDir } from "../_helpers/temp.ts";
import { runEnv } from "../e2e/_run_helpers.ts";
import { startTestServer } from "../server/_server.ts";

async function exists(path: string): Promise<boolean> {
  return await Deno.lstat(path).then(() => true, () => false);
}

Deno.test("withTempDir removes the dir and the keys, tokens and folders named after it", async () => {
  let kept: string[] = [];
  let decoys: string[] = [];
  try {
    await withTempDir(async (dir) => {
      const key = runEnv(dir).BERNSTEIN_AUDIT_KEY_PATH;
      assert.equal(dirname(key), `${dir}.keys`, "a run's key lies in the folder named after it");
      const token = join(dirname(key), "projects", "0123456789abcdef", "auth.token");
      await Deno.mkdir(dirname(token), { recursive: true });
      await Deno.writeTextFile(key, "k");
      await Deno.writeTextFile(token, "t");
      await Deno.writeTextFile(`${dir}.audit.key`, "k");
      await Deno.writeTextFile(`${dir}-auth.token`, "t");
      await Deno.writeTextFile(join(dir, "inside.txt"), "x");
      kept = [dir, `${dir}.keys`, `${dir}.audit.key`, `${dir}-auth.token`];
      // Names that only start like it (no separator after the name) belong to someone else.
      decoys = [`${dir}0`, `${dir}_x`];
      for (const decoy of decoys) await Deno.writeTextFile(decoy, "other");
    });
    for (const path of kept) assert.equal(await exists(path), false, `${path} is left`);
    for (const decoy of decoys) assert.equal(await exists(decoy), true, `${decoy} was removed`);
  } finally {
    for (const decoy of decoys) await Deno.remove(decoy).catch(() => {});
  }
});

Deno.test("a test server that does not start leaves no folder behind", async () => {
  await withTempDir(async (root) => {
    // Refused at start (a bad allowed IP), after the operator token was written beside the root.
    await assert.rejects(startTestServer({ root, allowedIps: ["127.0.0.300"] }));
    assert.equal(await exists(`${root}.state`), false, "the operator state folder is left");
    assert.equal(await exists(root), true, "a given root is the caller's");
  });
});
