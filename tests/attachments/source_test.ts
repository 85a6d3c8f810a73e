import { deepStrictEqual, rejects, strictEqual } from "node:assert/strict";
import { join } from "node:path";
import {
  AttachmentError,
  checkReadable,
  locateSource,
  MAX_SOURCE_BYTES,
  readSource,
} from "../../src/attachments/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

async function project(dir: string): Promise<string> {
  const root = join(dir, "repo");
  await Deno.mkdir(join(root, "src"), { recursive: true });
  await Deno.mkdir(join(root, ".sdd", "keys"), { recursive: true });
  await Deno.writeTextFile(join(root, "src", "app.ts"), "export {};\n");
  await Deno.writeTextFile(join(root, ".env"), "TOKEN=secret\n");
  await Deno.writeTextFile(join(root, ".sdd", "keys", "k.pem"), "key\n");
  await Deno.writeTextFile(join(dir, "outside.txt"), "not yours\n");
  return root;
}

Deno.test("a file inside the project is located with its real and repo-relative paths", async () => {
  await withTempDir(async (dir) => {
    const root = await project(dir);
    const got = await locateSource("app.ts", { root, base: join(root, "src") });
    deepStrictEqual(got, {
      status: "ok",
      real: join(root, "src", "app.ts"),
      rel: "src/app.ts",
      size: 11,
    });
    const inside = await Deno.symlink(join(root, "src", "app.ts"), join(root, "link.ts")).then(() =>
      locateSource("link.ts", { root, base: root })
    );
    strictEqual(
      inside.status === "ok" && inside.rel,
      "src/app.ts",
      "an inside link is judged by its target",
    );
  });
});

Deno.test("files the run may not read are denied with the reason", async () => {
  await withTempDir(async (dir) => {
    const root = await project(dir);
    const o = { root, base: root };
    deepStrictEqual(await locateSource("../outside.txt", o), {
      status: "denied",
      reason: "outside the project",
    });
    deepStrictEqual(await locateSource(join(dir, "outside.txt"), o), {
      status: "denied",
      reason: "outside the project",
    });
    await Deno.symlink(join(dir, "outside.txt"), join(root, "escape.txt"));
    deepStrictEqual(await locateSource("escape.txt", o), {
      status: "denied",
      reason: "it leaves the project through a symlink",
    });
    deepStrictEqual(await locateSource(".env", o), {
      status: "denied",
      reason: "denied by config (attachments.deny: '**/.env')",
    });
    await Deno.symlink(join(root, ".env"), join(root, "notes.txt"));
    strictEqual((await locateSource("notes.txt", o)).status, "denied", "a link to .env is .env");
    deepStrictEqual(await locateSource(".sdd/keys/k.pem", { ...o, deny: [] }), {
      status: "denied",
      reason: "bernstein state and git internals are never attached",
    });
    deepStrictEqual(await locateSource("src/app.ts", { ...o, deny: ["src/**"] }), {
      status: "denied",
      reason: "denied by config (attachments.deny: 'src/**')",
    });
    strictEqual(
      (await locateSource(".env", { ...o, deny: [] })).status,
      "ok",
      "deny replaces the default list",
    );
  });
});

Deno.test("missing files and special files are unreadable, not denied; a folder is located", async () => {
  await withTempDir(async (dir) => {
    const root = await project(dir);
    deepStrictEqual(await locateSource("nope.png", { root, base: root }), {
      status: "unreadable",
      reason: "no such file",
    });
    await new Deno.Command("mkfifo", { args: [join(root, "pipe")] }).output();
    deepStrictEqual(await locateSource("pipe", { root, base: root }), {
      status: "unreadable",
      reason: "not a regular file or folder",
    });
    const src = await locateSource("src", { root, base: root });
    strictEqual(src.status === "ok" && src.folder === true && src.rel === "src", true);
    strictEqual(await checkReadable(join(root, "nope.png")), "no such file");
    strictEqual(await checkReadable(join(root, "pipe")), "not a regular file or folder");
    strictEqual(await checkReadable(join(root, "src")), undefined);
    strictEqual(await checkReadable(join(root, "src", "app.ts")), undefined);
  });
});

Deno.test("a file larger than the read limit is refused with the field path", async () => {
  await withTempDir(async (dir) => {
    const big = join(dir, "big.log");
    const file = await Deno.open(big, { write: true, create: true });
    await file.truncate(MAX_SOURCE_BYTES + 1); // sparse: no real bytes written
    file.close();
    await rejects(readSource(big, "stages[0].steps[0].attachments[1]"), (e: unknown) => {
      strictEqual((e as AttachmentError).code, "attach.invalid");
      strictEqual((e as AttachmentError).location, "stages[0].steps[0].attachments[1]");
      return /largest file that can be attached is 64 MB/.test((e as Error).message);
    });
    await Deno.writeTextFile(big, "small\n");
    deepStrictEqual(await readSource(big, "x"), new TextEncoder().encode("small\n"));
  });
});
