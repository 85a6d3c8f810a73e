import { ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import { ensureAuditKey, readAuditKey } from "../../src/audit/mod.ts";
import { KeyMissingError } from "../../src/errors/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { pathExists } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("a writer creates the key 0600 as 64 hex without a newline", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "state", "bernstein", "audit.key");
    const key = await ensureAuditKey(path, new SeededRandom(3));
    ok(key.created);
    strictEqual(((await Deno.stat(path)).mode ?? -1) & 0o777, 0o600);
    const text = await Deno.readTextFile(path);
    ok(/^[0-9a-f]{64}$/.test(text));
    strictEqual(new TextDecoder().decode(key.bytes), text);
    const again = await ensureAuditKey(path, new SeededRandom(4));
    strictEqual(again.created, false);
    strictEqual(new TextDecoder().decode(again.bytes), text);
  });
});

Deno.test("a key readable by group or others is refused", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "audit.key");
    await ensureAuditKey(path, new SeededRandom(3));
    for (const mode of [0o644, 0o640, 0o604]) {
      await Deno.chmod(path, mode);
      await rejects(
        readAuditKey(path),
        (e) => (e as { code?: string }).code === "secret.permissions",
      );
      await rejects(ensureAuditKey(path, new SeededRandom(1)), /readable by group or others/);
    }
  });
});

Deno.test("a missing key is KeyMissingError and reading never creates it", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "nope", "audit.key");
    await rejects(readAuditKey(path), (e) => e instanceof KeyMissingError && e.exitCode === 3);
    strictEqual(await pathExists(path), false);
    strictEqual(await pathExists(join(root, "nope")), false);
  });
});

Deno.test("a key that is not 64 lowercase hex is refused", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "audit.key");
    await Deno.writeTextFile(path, "ABCD".repeat(16) + "\n", { mode: 0o600 });
    await rejects(readAuditKey(path), /not 64 lowercase hex/);
  });
});
