import { ok, rejects, strictEqual, throws } from "node:assert/strict";
import { join } from "node:path";
import {
  appendDurable,
  checkRelativePath,
  closeLockFile,
  openAtomicFile,
  PathEscapeError,
  readUpTo,
  resolveInside,
  withFileLock,
  writeFileAtomic,
  writeFileIfAbsent,
} from "../../src/io/mod.ts";
import { CAN_SHARE_DESCRIPTORS, shareDescriptor } from "../_helpers/shared_descriptor.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("checkRelativePath refuses absolute, '..', backslash, NUL and empty paths", () => {
  strictEqual(checkRelativePath("src/app.ts"), "src/app.ts");
  for (const bad of ["", "/etc/passwd", "../x", "a/../../x", "a\\b", "a\0b", "C:/x", ".."]) {
    throws(() => checkRelativePath(bad), PathEscapeError, JSON.stringify(bad));
  }
});

Deno.test("resolveInside follows symlinks and refuses escapes, also for paths not yet created", async () => {
  await withTempDir(async (dir) => {
    const root = join(dir, "root");
    await Deno.mkdir(join(root, "sub"), { recursive: true });
    await Deno.mkdir(join(dir, "outside"));
    await Deno.symlink(join(dir, "outside"), join(root, "link"));
    strictEqual(await resolveInside(root, "sub/new/file.txt"), join(root, "sub/new/file.txt"));
    await rejects(resolveInside(root, "link/secret"), PathEscapeError);
    await rejects(resolveInside(root, "link/not/yet/there"), PathEscapeError);
    await rejects(resolveInside(root, "../outside"), PathEscapeError);
    await rejects(resolveInside(root, join(dir, "outside")), PathEscapeError);
  });
});

Deno.test("writeFileAtomic replaces content and leaves no temp files; mode applies", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "f.json");
    await writeFileAtomic(path, "one", { mode: 0o600 });
    await writeFileAtomic(path, "two", { mode: 0o600 });
    strictEqual(await Deno.readTextFile(path), "two");
    strictEqual(((await Deno.stat(path)).mode ?? 0) & 0o777, 0o600);
    const names = [];
    for await (const e of Deno.readDir(dir)) names.push(e.name);
    strictEqual(names.join(","), "f.json");
  });
});

Deno.test("writeFileIfAbsent never overwrites", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "f");
    strictEqual(await writeFileIfAbsent(path, "first"), true);
    strictEqual(await writeFileIfAbsent(path, "second"), false);
    strictEqual(await Deno.readTextFile(path), "first");
  });
});

Deno.test("withFileLock serialises critical sections across real processes", async () => {
  await withTempDir(async (dir) => {
    const log = join(dir, "log");
    const lock = join(dir, "lock");
    const script = join(dir, "w.ts");
    const mod = new URL("../../src/io/mod.ts", import.meta.url).href;
    await Deno.writeTextFile(
      script,
      `import { appendDurable, withFileLock } from "${mod}";
for (let i = 0; i < 20; i++) {
  await withFileLock(${JSON.stringify(lock)}, async () => {
    await appendDurable(${
        JSON.stringify(log)
      }, new TextEncoder().encode("begin " + Deno.args[0] + "\\n"));
    await new Promise((r) => setTimeout(r, 2));
    await appendDurable(${
        JSON.stringify(log)
      }, new TextEncoder().encode("end " + Deno.args[0] + "\\n"));
  });
}
`,
    );
    const procs = [1, 2, 3].map((n) =>
      new Deno.Command(Deno.execPath(), {
        args: ["run", "-q", "-A", script, String(n)],
        stdout: "null",
        stderr: "inherit",
      }).output()
    );
    for (const p of await Promise.all(procs)) strictEqual(p.code, 0);
    const lines = (await Deno.readTextFile(log)).trim().split("\n");
    strictEqual(lines.length, 120);
    for (let i = 0; i < lines.length; i += 2) {
      const who = lines[i].split(" ")[1];
      ok(
        lines[i].startsWith("begin") && lines[i + 1] === `end ${who}`,
        `interleaved at line ${i}: ${lines[i]} / ${lines[i + 1]}`,
      );
    }
  });
});

/** Whether another open of `path` can take its lock now (then lets it go). */
async function lockIsFree(path: string): Promise<boolean> {
  const other = await Deno.open(path, { read: true, write: true });
  try {
    return await other.tryLock(true);
  } finally {
    closeLockFile(other);
  }
}

Deno.test({
  name: "closeLockFile and withFileLock release the lock though a child being started shares it",
  ignore: !CAN_SHARE_DESCRIPTORS,
  fn: async () => {
    await withTempDir(async (dir) => {
      const path = join(dir, "lock");
      const file = await Deno.open(path, { read: true, write: true, create: true });
      ok(await file.tryLock(true));
      const closeCopy = shareDescriptor(path);
      try {
        strictEqual(await lockIsFree(path), false);
        closeLockFile(file);
        strictEqual(await lockIsFree(path), true);
      } finally {
        closeCopy();
      }

      let closeInner: (() => void) | undefined;
      try {
        await withFileLock(path, () => {
          closeInner = shareDescriptor(path);
          return Promise.resolve();
        });
        strictEqual(await lockIsFree(path), true);
      } finally {
        closeInner?.();
      }
    });
  },
});

Deno.test("appendDurable creates with the requested mode and appends", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "log.jsonl");
    await appendDurable(path, new TextEncoder().encode("a\n"), { mode: 0o600 });
    await appendDurable(path, new TextEncoder().encode("b\n"), { mode: 0o600 });
    strictEqual(await Deno.readTextFile(path), "a\nb\n");
    strictEqual(((await Deno.stat(path)).mode ?? 0) & 0o777, 0o600);
  });
});

Deno.test("readUpTo reads the whole range, or only what is left before the end", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "f");
    await Deno.writeFile(path, new Uint8Array(300_000).map((_, i) => i % 251));
    const file = await Deno.open(path, { read: true });
    try {
      await file.seek(1000, Deno.SeekMode.Start);
      const part = await readUpTo(file, 200_000);
      strictEqual(part.length, 200_000);
      strictEqual(part[0], 1000 % 251);
      strictEqual(part[199_999], 200_999 % 251);
      const rest = await readUpTo(file, 500_000);
      strictEqual(rest.length, 99_000, "only the bytes left");
      strictEqual((await readUpTo(file, 10)).length, 0, "nothing past the end");
    } finally {
      file.close();
    }
  });
});

Deno.test("openAtomicFile: the target appears only at commit, whole; abort leaves the old file", async () => {
  await withTempDir(async (dir) => {
    const path = join(dir, "out.bin");
    await Deno.writeTextFile(path, "old");
    const out = await openAtomicFile(path, { mode: 0o600 });
    const piece = new Uint8Array(300_000).fill(7);
    for (let i = 0; i < 5; i++) out.write(piece); // past the 1 MiB buffer
    out.write(new Uint8Array(2 * 1024 * 1024).fill(9)); // larger than the buffer
    strictEqual(out.size, 1_500_000 + 2 * 1024 * 1024);
    strictEqual(await Deno.readTextFile(path), "old", "not replaced before commit");
    await out.commit();
    const got = await Deno.readFile(path);
    strictEqual(got.length, 1_500_000 + 2 * 1024 * 1024);
    ok(
      got.subarray(0, 1_500_000).every((b) => b === 7) &&
        got.subarray(1_500_000).every((b) => b === 9),
    );
    strictEqual(((await Deno.stat(path)).mode ?? 0) & 0o777, 0o600);
    throws(() => out.write(piece), /after commit or abort/);
    const aborted = await openAtomicFile(path);
    aborted.write(piece);
    await aborted.abort();
    strictEqual((await Deno.readFile(path)).length, got.length, "abort keeps the old file");
    const left = [];
    for await (const e of Deno.readDir(dir)) left.push(e.name);
    strictEqual(left.join(","), "out.bin", "no temp file left behind");
  });
});
