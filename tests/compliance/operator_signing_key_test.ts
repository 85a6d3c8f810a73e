// The operator signing key: created once (0600, PKCS#8 Ed25519), reused, and refused when it is
// readable by others, a symlink or not a key.
import { notStrictEqual, ok, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  ensureOperatorSigningKey,
  OperatorKeyError,
  readOperatorSigningKey,
} from "../../src/compliance/project/mod.ts";
import { KeyMissingError } from "../../src/errors/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("the first call creates .sdd/keys/operator.key with mode 0600; later calls reuse it", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const first = await ensureOperatorSigningKey(sdd, new SeededRandom(1));
    strictEqual(first.created, true);
    strictEqual(first.path, join(sdd, "keys", "operator.key"));
    strictEqual(((await Deno.stat(first.path)).mode ?? 0) & 0o777, 0o600);
    strictEqual(((await Deno.stat(join(sdd, "keys"))).mode ?? 0) & 0o777, 0o700);
    ok((await Deno.readTextFile(first.path)).startsWith("-----BEGIN PRIVATE KEY-----\n"));
    const again = await ensureOperatorSigningKey(sdd, new SeededRandom(2));
    strictEqual(again.created, false);
    strictEqual(again.fingerprint, first.fingerprint);
    const other = await ensureOperatorSigningKey(join(dir, "other"), new SeededRandom(2));
    notStrictEqual(other.fingerprint, first.fingerprint);
  });
});

Deno.test("a key readable by group or others, a symlink, or garbage is refused", async () => {
  await withTempDir(async (dir) => {
    const sdd = join(dir, ".sdd");
    const key = await ensureOperatorSigningKey(sdd, new SeededRandom(1));
    await Deno.chmod(key.path, 0o644);
    await rejects(
      readOperatorSigningKey(key.path),
      (e: unknown) =>
        (e as { code?: string }).code === "secret.permissions" &&
        (e as Error).message.includes("readable by group or others"),
    );
    await rejects(
      ensureOperatorSigningKey(sdd, new SeededRandom(1)),
      (e: unknown) => (e as { code?: string }).code === "secret.permissions",
    );
    await Deno.chmod(key.path, 0o600);
    const link = join(dir, "link.key");
    await Deno.symlink(key.path, link);
    await rejects(
      readOperatorSigningKey(link),
      (e: unknown) => (e as { code?: string }).code === "secret.symlink",
    );
    const junk = join(dir, "junk.key");
    await Deno.writeTextFile(junk, "not a key", { mode: 0o600 });
    await rejects(
      readOperatorSigningKey(junk),
      (e: unknown) =>
        e instanceof OperatorKeyError && /not an Ed25519 PKCS#8 PEM private key/.test(e.message),
    );
  });
});

Deno.test("a missing key file given explicitly is a missing key (exit 3)", async () => {
  await withTempDir(async (dir) => {
    await rejects(
      readOperatorSigningKey(join(dir, "nope.key")),
      (e: unknown) => e instanceof KeyMissingError && e.exitCode === 3,
    );
  });
});
