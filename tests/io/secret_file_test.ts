import { equal, ok, rejects } from "node:assert/strict";
import { join } from "node:path";
import {
  readSecretFile,
  SecretFileError,
  syncDirectory,
  writeFileAtomic,
} from "../../src/io/mod.ts";
import { ensureAuditKey, readAuditKey } from "../../src/audit/mod.ts";
import {
  ensureOperatorSigningKey,
  readOperatorSigningKey,
} from "../../src/compliance/project/mod.ts";
import { ensureInstallIdentity, readInstallIdentity } from "../../src/fleet/mod.ts";
import { ensureAgentSigner, lineagePaths } from "../../src/lineage/store/mod.ts";
import { readTokenFile } from "../../src/server/mod.ts";
import { SeededRandom } from "../../src/io/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

const isCode = (code: string) => (e: unknown) =>
  e instanceof SecretFileError && e.code === code && e.message.includes(e.path);

Deno.test("readSecretFile reads an owner-only file and returns undefined for a missing one", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "token");
    await Deno.writeTextFile(path, "abc\n", { mode: 0o600 });
    equal(new TextDecoder().decode(await readSecretFile(path)), "abc\n");
    equal(await readSecretFile(join(root, "none")), undefined);
  });
});

Deno.test("readSecretFile refuses a symlink, even to an owner-only file, naming the path", async () => {
  await withTempDir(async (root) => {
    const target = join(root, "real");
    await Deno.writeTextFile(target, "abc", { mode: 0o600 });
    const link = join(root, "link");
    await Deno.symlink(target, link);
    await rejects(readSecretFile(link, { what: "audit key" }), (e: unknown) => {
      ok(isCode("secret.symlink")(e));
      ok((e as Error).message.startsWith(`audit key ${link} is a symlink`), (e as Error).message);
      return true;
    });
    // A dangling symlink is refused too, not treated as missing.
    await Deno.remove(target);
    await rejects(readSecretFile(link), isCode("secret.symlink"));
  });
});

Deno.test("readSecretFile refuses a folder as not a regular file", async () => {
  await withTempDir(async (root) => {
    const dir = join(root, "dir");
    await Deno.mkdir(dir, { mode: 0o700 });
    await rejects(readSecretFile(dir), isCode("secret.not_file"));
  });
});

Deno.test("readSecretFile refuses any group or other permission bit, with a chmod hint", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "key");
    await Deno.writeTextFile(path, "abc", { mode: 0o600 });
    for (const mode of [0o644, 0o640, 0o604, 0o620, 0o602, 0o610, 0o601]) {
      await Deno.chmod(path, mode);
      await rejects(readSecretFile(path), (e: unknown) => {
        ok(isCode("secret.permissions")(e), String(e));
        equal((e as SecretFileError).hint, `chmod 600 ${path}`);
        return true;
      });
    }
    await Deno.chmod(path, 0o400);
    equal(new TextDecoder().decode(await readSecretFile(path)), "abc");
  });
});

Deno.test("every secret reader (audit key, operator key, install key, agent key, token file) refuses a symlink", async () => {
  await withTempDir(async (root) => {
    const random = new SeededRandom(7);
    const sdd = join(root, ".sdd");
    await Deno.mkdir(join(sdd, "keys"), { recursive: true, mode: 0o700 });
    const elsewhere = join(root, "elsewhere");
    await Deno.mkdir(elsewhere, { mode: 0o700 });
    const swapForSymlink = async (path: string) => {
      const moved = join(elsewhere, crypto.randomUUID());
      await Deno.rename(path, moved);
      await Deno.symlink(moved, path);
    };

    const auditKey = join(root, "state", "audit.key");
    await ensureAuditKey(auditKey, random);
    await swapForSymlink(auditKey);
    await rejects(readAuditKey(auditKey), isCode("secret.symlink"));
    await rejects(ensureAuditKey(auditKey, random), isCode("secret.symlink"));

    await ensureInstallIdentity(sdd, random);
    await swapForSymlink(join(sdd, "keys", "install.key"));
    await rejects(readInstallIdentity(sdd), isCode("secret.symlink"));

    const operatorKey = join(sdd, "keys", "operator.key");
    await ensureOperatorSigningKey(sdd, random);
    await swapForSymlink(operatorKey);
    await rejects(readOperatorSigningKey(operatorKey), isCode("secret.symlink"));

    const paths = lineagePaths(sdd);
    const signer = await ensureAgentSigner(paths, "agent-a", { random });
    const pem = join(paths.keysDir, "agent-a", `${signer.kid}.pem`);
    await swapForSymlink(pem);
    await rejects(ensureAgentSigner(paths, "agent-a", { random }), isCode("secret.symlink"));

    const token = join(root, "auth.token");
    await writeFileAtomic(token, "bop_x", { mode: 0o600 });
    equal(await readTokenFile(token), "bop_x");
    await swapForSymlink(token);
    await rejects(readTokenFile(token), isCode("secret.symlink"));
  });
});

Deno.test("every secret reader refuses a key readable by others with secret.permissions", async () => {
  await withTempDir(async (root) => {
    const random = new SeededRandom(8);
    const sdd = join(root, ".sdd");
    const auditKey = join(root, "audit.key");
    await ensureAuditKey(auditKey, random);
    await Deno.chmod(auditKey, 0o644);
    await rejects(readAuditKey(auditKey), isCode("secret.permissions"));

    await ensureInstallIdentity(sdd, random);
    await Deno.chmod(join(sdd, "keys", "install.key"), 0o640);
    await rejects(readInstallIdentity(sdd), isCode("secret.permissions"));

    const token = join(root, "auth.token");
    await Deno.writeTextFile(token, "bop_x", { mode: 0o604 });
    await Deno.chmod(token, 0o604);
    await rejects(readTokenFile(token), isCode("secret.permissions"));
    await Deno.chmod(token, 0o600);
    await Deno.writeTextFile(token, "  \n");
    await rejects(
      readTokenFile(token),
      (e: unknown) => (e as { code?: string }).code === "server.token_file",
    );
  });
});

Deno.test("syncDirectory fsyncs a folder and fails on a missing one; writeFileAtomic leaves no temp file", async () => {
  await withTempDir(async (root) => {
    await syncDirectory(root);
    await rejects(syncDirectory(join(root, "missing")), Deno.errors.NotFound);
    await writeFileAtomic(join(root, "a.json"), "{}");
    const names = [];
    for await (const entry of Deno.readDir(root)) names.push(entry.name);
    equal(names.join(","), "a.json");
  });
});

/** Deno's file system, except that `swap` runs right after the check (lstat), before the open. */
function swapAfterCheck(swap: (path: string) => Promise<void>) {
  return {
    lstat: async (path: string) => {
      const info = await Deno.lstat(path);
      await swap(path);
      return info;
    },
    open: (path: string, options: { read: true }) => Deno.open(path, options),
  };
}

Deno.test("readSecretFile refuses a file renamed over the checked one before the open (secret.replaced)", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "token");
    const other = join(root, "other");
    await Deno.writeTextFile(path, "checked", { mode: 0o600 });
    await Deno.writeTextFile(other, "swapped", { mode: 0o600 });
    const fs = swapAfterCheck((p) => Deno.rename(other, p));
    await rejects(readSecretFile(path, { what: "operator token", fs }), (e: unknown) => {
      ok(isCode("secret.replaced")(e), String(e));
      ok((e as Error).message.startsWith(`operator token ${path} was replaced`), String(e));
      return true;
    });
    // Without the swap the same file system reads the file: the refusal is the swap's.
    equal(
      new TextDecoder().decode(await readSecretFile(path, { fs: swapAfterCheck(async () => {}) })),
      "swapped",
    );
  });
});

Deno.test("readSecretFile refuses a symlink put in place of the checked file before the open", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "key");
    const target = join(root, "elsewhere");
    await Deno.writeTextFile(path, "checked", { mode: 0o600 });
    await Deno.writeTextFile(target, "attacker", { mode: 0o600 });
    // The open follows the new symlink to an owner-only regular file: only the identity check
    // (inode and device of the checked path against the opened file) can tell.
    const fs = swapAfterCheck(async (p) => {
      await Deno.remove(p);
      await Deno.symlink(target, p);
    });
    await rejects(readSecretFile(path, { fs }), isCode("secret.replaced"));
  });
});

Deno.test("readSecretFile checks the opened file's mode too: a group-readable file swapped in is refused", async () => {
  await withTempDir(async (root) => {
    const path = join(root, "key");
    const other = join(root, "other");
    await Deno.writeTextFile(path, "checked", { mode: 0o600 });
    await Deno.writeTextFile(other, "swapped", { mode: 0o600 });
    await Deno.chmod(other, 0o640);
    const fs = swapAfterCheck((p) => Deno.rename(other, p));
    await rejects(readSecretFile(path, { fs }), isCode("secret.permissions"));
  });
});
